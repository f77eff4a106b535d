"""Every document kind has a JSON Schema that ships in the wheel (compat/schema) and in docs/schema, identical;
every command's real output validates against its schema; golden JSON per document type."""

from __future__ import annotations

import filecmp
import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compat.output.documents import KINDS
from compat.schema_version import SCHEMA_VERSION
from tests.output.conftest import GOLDEN, ROOT, commands

SCHEMA_DIR = ROOT / "compat" / "schema"
DOCS_DIR = ROOT / "docs" / "schema"


def schema(kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return doc


def problems(kind: str, doc: Any) -> list[str]:
    v = jsonschema.Draft202012Validator(schema(kind))
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


def test_shipped_and_documented_schemas_are_identical() -> None:
    shipped = sorted(p.name for p in SCHEMA_DIR.glob("*.json"))
    documented = sorted(p.name for p in DOCS_DIR.glob("*.json"))
    assert shipped == documented
    match, mismatch, errors = filecmp.cmpfiles(SCHEMA_DIR, DOCS_DIR, shipped, shallow=False)
    assert (mismatch, errors) == ([], [])
    assert len(match) == len(KINDS)


def test_every_kind_has_a_valid_schema_and_no_other_schema_exists() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(f"{k}.schema.json" for k in KINDS)
    for kind in KINDS:
        s = schema(kind)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert s["$id"].endswith(f"/{kind}.schema.json")


def test_every_document_class_has_a_kind_with_a_schema() -> None:
    # Each stage owns its document; the output layer knows the kinds by name only (KINDS).
    from compat.explain.document import ExplainDocument
    from compat.findings import Report
    from compat.fleet.document import FleetDocument
    from compat.output.documents import Document, ReportDocument
    from compat.output.matrix_row import MatrixRowDocument
    from compat.record.verdict_document import RunVerdictDocument
    from compat.smoke.document import SmokeDocument
    from compat.smoke.result import SmokeResult
    from compat.suggest import Suggestion
    from compat.suggest_document import SuggestionDocument

    docs: list[Document] = [
        ReportDocument(Report([], [], {}, "x")),
        ExplainDocument([]),
        SmokeDocument(SmokeResult("skipped", None)),
        SmokeDocument(SmokeResult("skipped", None), distributed=True),
        FleetDocument({}),
        SuggestionDocument(Suggestion(None, None)),
        RunVerdictDocument({}),
        *(MatrixRowDocument(s, {}) for s in ("cuda", "gpu", "cudnn", "torch", "tensorflow", "jax")),
    ]
    assert all(d.kind in KINDS for d in docs)


def test_the_generator_wrote_what_is_committed() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("output_schemas", ROOT / "tools" / "output_schemas.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.SV == SCHEMA_VERSION
    # the standalone generator spells the interpreter rule's steps out: the same as compat.target.RULES
    from compat.target import RULES

    assert schema("doctor")["properties"]["interpreter"]["properties"]["rule"]["enum"] == list(RULES)
    for kind, s in mod.SCHEMAS.items():
        assert (SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8") == mod.render(s), kind
    for kind, src in mod.COPIED.items():
        assert (SCHEMA_DIR / f"{kind}.schema.json").read_bytes() == src.read_bytes(), kind
    assert sorted([*mod.SCHEMAS, *mod.COPIED]) == sorted(KINDS)


def test_one_schema_version_constant() -> None:
    # Every document with a schema_version pins it to the one constant ...
    for kind in KINDS:
        if "schema_version" in schema(kind)["properties"]:
            assert schema(kind)["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    # ... no module writes or compares a literal one, and the standalone smoke children (which never import
    # compat) carry the same value.
    literal = re.compile(r"""["']schema_version["']\)?\s*(?::|==|!=)\s*\d""")
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "compat").rglob("*.py")
        if literal.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    for child in ("_child_common.py", "_child_ddp_rank.py"):
        text = (ROOT / "compat" / "smoke" / child).read_text(encoding="utf-8")
        assert re.search(rf"^SCHEMA_VERSION = {SCHEMA_VERSION}\b", text, re.M), child


def test_a_schema_rejects_a_broken_document() -> None:
    good = {
        "schema_version": SCHEMA_VERSION,
        "verdict": "ok",
        "findings": [],
        "skipped": [],
        "facts": {},
        "matrix": {"updated": "2026-11-22"},
    }
    assert problems("report", good) == []
    assert problems("report", {**good, "verdict": "fine"})
    assert problems("report", {**good, "schema_version": 2})
    bad_finding = {
        "id": "x",
        "severity": "fatal",
        "title": "t",
        "message": "m",
        "fixes": [],
        "group": "stack",
    }
    assert problems("report", {**good, "findings": [bad_finding]})
    assert problems("report", {k: v for k, v in good.items() if k != "matrix"})


@pytest.fixture
def real_outputs(run: Any, bare_python: str, gpu_oom_log: str) -> dict[str, tuple[int, Any]]:
    out: dict[str, tuple[int, Any]] = {}
    for kind, argv in commands(bare_python, gpu_oom_log).items():
        r = run(*argv, "--json")
        assert r.err == "" or kind in ("doctor", "smoke"), (kind, r.err)
        out[kind] = (r.code, json.loads(r.out))
    return out


def test_every_command_output_validates_against_its_schema(real_outputs: dict[str, tuple[int, Any]]) -> None:
    for kind, (_, doc) in real_outputs.items():
        assert problems(kind, doc) == [], kind
    # The inputs are chosen so that the documents are not empty: a schema check of [] would prove little.
    assert real_outputs["report"][0] == 1 and real_outputs["report"][1]["findings"]
    assert real_outputs["dockerfile"][1]["findings"] and real_outputs["dockerfile"][1]["stages"]
    assert real_outputs["explain"][1]["status"] == "diagnosed"
    assert real_outputs["fleet"][1]["nodes"] and real_outputs["fleet"][1]["drift"]
    assert real_outputs["smoke"][1]["status"] == "skipped"
    assert real_outputs["doctor"][1]["findings"]


def test_snapshot_and_run_verdict_documents_validate(run: Any, tmp_path: Path, bare_python: str) -> None:
    snap = tmp_path / "snap.json"
    r = run("doctor", "--no-smoke", "--python", bare_python, "--save-snapshot", str(snap), "--json")
    assert r.code in (0, 1), r.err
    assert problems("snapshot", json.loads(snap.read_text(encoding="utf-8"))) == []
    example = json.loads(
        (ROOT / "examples" / "snapshot-a100-cu121-driver470.json").read_text(encoding="utf-8")
    )
    assert problems("snapshot", example) == []
    from compat.record.verdict_document import RunVerdictDocument

    doc = RunVerdictDocument(
        {
            "schema_version": SCHEMA_VERSION,
            "record": "/r/run.json",
            "kind": "run",
            "pid": 7,
            "started_at": "2026-11-27T09:00:00Z",
            "verdict": {"outcome": "ok"},
        }
    )
    assert problems("run-verdict", doc.to_json()) == []


# ------------------------------------------------------------------------------------------------ golden JSON

DETERMINISTIC = (
    "report",
    "dockerfile",
    "compose",
    "k8s",
    "explain",
    "fleet",
    "suggestion",
    "matrix-cuda",
    "matrix-gpu",
    "matrix-cudnn",
    "matrix-torch",
    "matrix-tensorflow",
    "matrix-jax",
)
"""Kinds whose output depends only on the recorded input and the matrix; the doctor and smoke documents depend on
this machine, so their golden files hold the shape (keys and value types) instead of the values."""


def _portable(doc: Any) -> Any:
    """Paths of this checkout written relative to it, so the golden files do not name one machine."""
    text = json.dumps(doc, sort_keys=True)
    return json.loads(text.replace(str(ROOT) + "/", ""))


def _shape(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _shape(v) for k, v in sorted(doc.items())}
    if isinstance(doc, list):
        return [_shape(doc[0])] if doc else []
    return type(doc).__name__


def test_golden_json_per_document_type(real_outputs: dict[str, tuple[int, Any]]) -> None:
    update = bool(os.environ.get("UPDATE_GOLDEN"))
    stale = []
    for kind, (code, doc) in sorted(real_outputs.items()):
        if kind in DETERMINISTIC:
            want: Any = {"exit": code, "document": _portable(doc)}
        else:
            # The doctor's values (GPUs, probes, findings) are this machine's: only its top-level keys are fixed.
            shape = _shape(doc) if kind == "smoke" else {k: type(v).__name__ for k, v in sorted(doc.items())}
            want = {"exit": code if kind == "smoke" else None, "shape": shape}
        path = GOLDEN / f"{kind}.json"
        text = json.dumps(want, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        if update:
            path.write_text(text, encoding="utf-8")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(kind)
    assert stale == [], f"golden JSON differs for {stale} (rerun with UPDATE_GOLDEN=1 and review the diff)"
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(real_outputs)


def test_recorded_run_and_explain_last_validate(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT), "COMPAT_CACHE_DIR": str(tmp_path), "NO_COLOR": "1"}
    env.pop("COMPAT_NO_CONFIG", None)

    def compat(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "compat", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=str(tmp_path),
            stdin=subprocess.DEVNULL,
            check=False,
        )

    ran = compat(
        "run", "--no-gpu", "--no-kernel-log", "--quiet", "--", sys.executable, "-c", "raise SystemExit(3)"
    )
    assert ran.returncode == 3, ran.stderr
    last = compat("explain", "--last", "--json")
    assert last.returncode == 1, last.stderr
    doc = json.loads(last.stdout)
    assert problems("run-verdict", doc) == []
    record = json.loads(Path(doc["record"]).read_text(encoding="utf-8"))
    assert problems("run", record) == []
    gh = compat("explain", "--last", "--format", "github")
    assert gh.returncode == 1
    assert gh.stdout.startswith("::error title=exited with status 3 [record.exit]::")
