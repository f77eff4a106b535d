"""The JSON keys of `compat doctor --json` are a public contract: the typed probe model (compat.probes.model) must
encode exactly the keys the untyped dicts did.

tests/data/doctor_keys/NAME.json holds, per recorded scenario, the sorted key paths of the report (list items
collapsed to "[]"), generated from main BEFORE the probe results became typed (issue 12 item 1). A key may be
added (the contract allows additions): regenerate with UPDATE_GOLDEN=1 and review the diff; a key that
disappears fails here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from compat.probes.model import gpu_details
from compat.probes.probeset import ProbeSet
from tests.conftest import ROOT
from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import compat, doctor, node_env, profile

KEYS = ROOT / "tests" / "data" / "doctor_keys"

# Keys whose presence depends on the test machine or the moment, not on the recorded input.
_VOLATILE = ("extra.", "interpreter.note")  # the note depends on what compat's own environment holds


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value: {"a": {"b": [{"c": 1}]}} -> {"a", "a.b", "a.b[]", "a.b[].c"}."""
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            p = f"{prefix}.{k}" if prefix else str(k)
            out.add(p)
            out |= key_paths(v, p)
    elif isinstance(value, list):
        for v in value:
            p = f"{prefix}[]"
            out.add(p)
            out |= key_paths(v, p)
    return out


def _scenario(name: str) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """(profile, node_env options, extra CLI args) of one recorded scenario."""
    if name == "l40s-crash":
        doc = profile("l40s")
        doc["faults"] = {"crash": ["nvmlDeviceGetMemoryInfo"]}
        return doc, {}, []
    if name == "h100-no-permission":
        doc = profile("h100-80gb-hbm3")
        doc["devices"][0]["nvmlDeviceGetPowerUsage"] = {"error": "NO_PERMISSION"}
        return doc, {}, []
    if name == "l40s-hang":
        doc = profile("l40s")
        doc["faults"] = {"hang": ["nvmlDeviceGetTemperature"]}
        return doc, {}, ["--timeout", "2"]
    return profile(name), {}, []


SCENARIOS = (
    "h100-x4-one-degraded",
    "h100-mig",
    "geforce-rtx-3090",
    "quadro-p400-driver-418",
    "l40s-crash",
    pytest.param("l40s-hang", marks=pytest.mark.slow),  # 7 s (the NVML timeout); its keys equal l40s-crash's
    "h100-no-permission",
)


def _report(name: str, fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> dict[str, Any]:
    doc, _opts, extra = _scenario(name)
    env = node_env(fake_nvml, doc, tmp_path)
    if not extra:
        return doctor(env, bare_python)[1]
    res = compat(["doctor", "--json", "--no-smoke", "--python", bare_python, *extra], env, timeout=90)
    assert res.returncode in (0, 1), res.stderr[-2000:]
    return json.loads(res.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", SCENARIOS)
def test_doctor_json_keys_unchanged(
    name: str, fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    rep = _report(name, fake_nvml, bare_python, tmp_path)
    # The report's probes and GPU details decode into the typed model and encode back exactly, with no value of an
    # unexpected type.
    ps = ProbeSet.from_json(rep["probes"])
    assert ps.to_json() == rep["probes"] and ps.malformed() == {} and not ps.others
    for g in rep["gpus"] or []:
        details = {k: v for k, v in g.items() if k not in ("index", "name", "cc", "source")}
        d = gpu_details(details)
        assert d.to_json() == details and d.malformed_paths() == []
    got = sorted(k for k in key_paths(rep) if not k.startswith(_VOLATILE))
    path = KEYS / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(path.read_text())
    assert sorted(set(want) - set(got)) == [], "keys of `compat doctor --json` disappeared"
    assert sorted(set(got) - set(want)) == [], (
        "new keys: regenerate with UPDATE_GOLDEN=1 and list them in CHANGELOG"
    )


def test_key_paths_walks_lists_and_objects() -> None:
    assert key_paths({"a": {"b": [{"c": 1}, {"d": None}]}, "e": []}) == {
        "a",
        "a.b",
        "a.b[]",
        "a.b[].c",
        "a.b[].d",
        "e",
    }
