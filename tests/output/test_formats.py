"""`--format text|json|markdown|sarif|github` on real runs: the JSON is today's, SARIF validates against the
official 2.1.0 schema with file + line locations, GitHub workflow commands are escaped, markdown is a report."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.output.conftest import DOCKERFILE, FLEET, SARIF_SCHEMA, SNAPSHOT

SARIF = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))

K8S_BROKEN = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
      resources:
        requests: {nvidia.com/gpu: "1"}
"""


def sarif_problems(doc: Any) -> list[str]:
    v = jsonschema.Draft4Validator(SARIF)
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(doc)]


def test_json_format_is_the_json_flag_byte_for_byte(run: Any) -> None:
    for argv in (
        ["check", "--snapshot", str(SNAPSHOT)],
        ["dockerfile", str(DOCKERFILE)],
        ["fleet", "merge", *FLEET],
        ["matrix", "gpu", "A100"],
    ):
        a, b = run(*argv, "--json"), run(*argv, "--format", "json")
        assert (a.code, a.out) == (b.code, b.out), argv
        assert json.loads(a.out)


def test_exit_code_is_the_same_in_every_format(run: Any) -> None:
    codes = {
        fmt: run("check", "--snapshot", str(SNAPSHOT), "--format", fmt).code
        for fmt in ("text", "json", "markdown", "sarif", "github")
    }
    assert set(codes.values()) == {1}, codes


def test_bad_format_and_json_with_another_format_are_usage_errors(run: Any) -> None:
    r = run("check", "--snapshot", str(SNAPSHOT), "--format", "xml")
    assert r.code == 2 and r.out == ""
    assert r.err.startswith("compat: error: --format must be one of text, json, markdown, sarif, github")
    assert r.err.count("\n") == 1
    r = run("check", "--snapshot", str(SNAPSHOT), "--json", "--format", "sarif")
    assert r.code == 2 and "--json is --format json" in r.err and r.err.count("\n") == 1


def test_sarif_for_a_dockerfile_has_file_and_line_locations(run: Any) -> None:
    r = run("dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--format", "sarif")
    findings = json.loads(run("dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--json").out)
    assert r.code == 1
    log = json.loads(r.out)
    assert sarif_problems(log) == []
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    results = sarif_run["results"]
    assert len(results) == len(findings["findings"]) > 0
    for res, f in zip(results, findings["findings"], strict=False):
        assert res["ruleId"] == f["id"]
        assert sarif_run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == f["id"]
        assert res["level"] == {"error": "error", "warning": "warning", "info": "note"}[f["severity"]]
        phys = res["locations"][0]["physicalLocation"]
        assert (
            phys["artifactLocation"]["uri"] == str(DOCKERFILE).lstrip("/")
            or phys["artifactLocation"]["uri"] == DOCKERFILE.as_uri()
        )
        assert phys["region"]["startLine"] == f["line"]


def test_sarif_for_compose_and_k8s_point_at_their_files(run: Any, in_tmp: Path) -> None:
    (in_tmp / "pod.yaml").write_text(K8S_BROKEN, encoding="utf-8")
    r = run("k8s", "pod.yaml", "--format", "sarif")
    log = json.loads(r.out)
    assert sarif_problems(log) == []
    locs = [res["locations"][0]["physicalLocation"] for res in log["runs"][0]["results"]]
    assert locs and all(loc["artifactLocation"]["uri"] == "pod.yaml" for loc in locs)
    assert all(loc["region"]["startLine"] >= 1 for loc in locs)
    (in_tmp / "compose.yaml").write_text(
        "services:\n  train:\n    image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 1\n              device_ids: ['0']\n"
        "              capabilities: [gpu]\n",
        encoding="utf-8",
    )
    r = run("compose", "compose.yaml", "--format", "sarif")
    log = json.loads(r.out)
    assert sarif_problems(log) == []
    uris = {
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for res in log["runs"][0]["results"]
    }
    assert uris == {"compose.yaml"}


def test_sarif_for_other_documents_uses_logical_locations(run: Any, gpu_oom_log: str) -> None:
    for argv in (
        ["check", "--snapshot", str(SNAPSHOT)],
        ["fleet", "merge", *FLEET],
        ["matrix", "gpu", "A100"],
    ):
        log = json.loads(run(*argv, "--format", "sarif").out)
        assert sarif_problems(log) == [], argv
        for res in log["runs"][0]["results"]:
            assert "logicalLocations" in res["locations"][0]
    log = json.loads(run("explain", gpu_oom_log, "--format", "sarif").out)
    assert sarif_problems(log) == []
    first = log["runs"][0]["results"][0]
    assert first["ruleId"] == "explain.gpu_oom" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_github_commands_carry_file_line_and_escape_their_text(run: Any) -> None:
    r = run("dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--format", "github")
    assert r.code == 1
    lines = r.out.splitlines()
    cmds = [ln for ln in lines if ln.startswith("::")]
    n = len(
        json.loads(run("dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--json").out)[
            "findings"
        ]
    )
    assert len(cmds) == n > 0
    for c in cmds:
        head, _, msg = c[2:].partition("::")
        level, _, props = head.partition(" ")
        assert level in ("error", "warning", "notice")
        keys = dict(p.split("=", 1) for p in props.split(","))
        assert keys["file"] == str(DOCKERFILE).replace(":", "%3A")
        assert int(keys["line"]) >= 1
        assert "\n" not in msg and ("%0A" in msg or msg)


def test_github_escaping() -> None:
    from compat.output.documents import Item
    from compat.output.github import _data, _prop, render_github

    assert _data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert _prop("a:b,c") == "a%3Ab%2Cc"

    class Doc:
        title = "t"

        def items(self) -> list[Item]:
            return [Item("x.y", "warning", "T, with: comma", "line1\nline2", file="d/Dockerfile", line=3)]

        def verdict(self) -> str:
            return "warning"

    out = render_github(Doc())  # type: ignore[arg-type]
    assert (
        out.splitlines()[0]
        == "::warning file=d/Dockerfile,line=3,title=T%2C with%3A comma [x.y]::line1%0Aline2"
    )


def test_markdown_report_has_summary_findings_fixes_and_details(run: Any) -> None:
    r = run("check", "--snapshot", str(SNAPSHOT), "--format", "markdown")
    assert r.code == 1
    md = r.out
    assert md.startswith("# compat check\n")
    assert "| verdict | error |" in md and "| errors | 1 |" in md
    assert "### ❌ error: Driver 470.82.01 is too old for CUDA 12.1" in md
    assert "`driver.cuda`" in md
    assert "**Fix:** Install the cu118 build of torch 2.1.0" in md
    assert "```sh\npip install --force-reinstall torch==2.1.0+cu118" in md
    body = md.split("<details><summary>Details (JSON)</summary>", 1)[1]
    payload = body.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(payload) == json.loads(run("check", "--snapshot", str(SNAPSHOT), "--json").out)
    assert md.rstrip().endswith("</details>")


def test_markdown_escapes_untrusted_text() -> None:
    from compat.output.markdown import _cell, _fence, _inline

    assert _cell("a | b\nc") == "a \\| b c"
    assert _inline("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"
    assert _fence("a ``` b", "sh")[0] == "````sh"


def test_doctor_markdown_is_report_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    from compat.findings import Report
    from compat.output.documents import ReportDocument
    from compat.output.markdown import render_markdown

    seen: list[tuple[dict[str, Any], bool]] = []

    def doctor_markdown(report_json: dict[str, Any], *, redact: bool = False) -> str:
        seen.append((report_json, redact))
        return "# the doctor's own report"

    doc = ReportDocument(Report([], [], {}, "2026-11-22"), title="compat doctor", kind="doctor")
    fake = types.ModuleType("compat.report_markdown")
    fake.doctor_markdown = doctor_markdown  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "compat.report_markdown", fake)
    assert render_markdown(doc) == "# the doctor's own report\n"
    assert seen == [(doc.to_json(), False)]
    # Another kind never uses it.
    assert render_markdown(ReportDocument(Report([], [], {}, "x"), kind="report")).startswith(
        "# compat check"
    )


@pytest.mark.parametrize("fmt", ["markdown", "sarif", "github"])
def test_every_document_command_takes_format(run: Any, fmt: str, bare_python: str, gpu_oom_log: str) -> None:
    from tests.output.conftest import commands

    for kind, argv in commands(bare_python, gpu_oom_log).items():
        if kind == "doctor":
            continue  # probes this machine: covered by the schema test's real run
        text_run = run(*argv)
        r = run(*argv, "--format", fmt)
        assert r.code == text_run.code, (kind, r.err)
        assert r.out.strip(), kind
        if fmt == "sarif":
            assert sarif_problems(json.loads(r.out)) == [], kind


def test_import_compat_stays_light() -> None:
    import subprocess

    code = (
        "import sys, compat, compat.output\n"
        "bad = [m for m in ('typer', 'rich', 'jsonschema', 'compat.output.documents', 'compat.output.markdown',"
        " 'compat.output.sarif', 'tomllib', 'tomli') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_fleet_items_follow_the_fleet_verdict(run: Any) -> None:
    from tests.output.conftest import ROOT

    dup = sorted(str(p) for p in (ROOT / "tests" / "data" / "fleet" / "dup").glob("*.json"))
    r = run("fleet", "merge", *FLEET, *dup, "--format", "github")
    assert r.code == 1
    lines = r.out.splitlines()
    drift = [ln for ln in lines if "[fleet.drift]" in ln]
    assert drift and all(ln.startswith("::error ") for ln in drift)  # drift makes the fleet's verdict "error"
    (d,) = [ln for ln in lines if "[fleet.duplicate]" in ln]
    assert d.startswith("::warning title=gpu-a01 reported more than once")
    assert any(ln.startswith("::error title=gpu-a02%3A Xid 79") for ln in lines)


def test_broken_compose_and_k8s_documents_validate(run: Any, in_tmp: Path) -> None:
    schemas = Path(__file__).resolve().parents[2] / "compat" / "schema"
    (in_tmp / "pod.yaml").write_text(K8S_BROKEN, encoding="utf-8")
    doc = json.loads(run("k8s", "pod.yaml", "--json").out)
    assert doc["findings"] and all(f["line"] >= 1 for f in doc["findings"])
    v = jsonschema.Draft202012Validator(json.loads((schemas / "k8s.schema.json").read_text(encoding="utf-8")))
    assert [e.message for e in v.iter_errors(doc)] == []
