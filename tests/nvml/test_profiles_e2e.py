"""`compat doctor --json` on every recorded GPU profile, through the real pynvml and the fake NVML library.

Each profile (tests/data/nvml_profiles/NAME.json) has a golden summary of the doctor's JSON report in golden/NAME.json:
the exit code, the verdict, every finding (id, severity, title), the skipped check ids, the GPUs and the driver facts.
Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import GOLDEN, doctor, node_env, profile, profile_names, traced

# The NVML symbols compat's doctor calls through pynvml on a current driver (pynvml resolves nvmlInit to
# nvmlInitWithFlags, count and handles to _v2, PCI info to _v3, processes to _v3).
DOCTOR_SYMBOLS = {
    "nvmlInitWithFlags",
    "nvmlShutdown",
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetCudaDriverVersion",
    "nvmlSystemGetNVMLVersion",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetCudaComputeCapability",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetGraphicsRunningProcesses_v3",
    "nvmlDeviceGetPersistenceMode",
    "nvmlDeviceGetMigMode",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetPowerManagementDefaultLimit",
    "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetRetiredPages",
    "nvmlDeviceGetRetiredPagesPendingStatus",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkWidth",
}


def summary(code: int, rep: dict[str, Any]) -> dict[str, Any]:
    """What a golden file keeps: everything the profile decides, nothing the test machine does."""
    facts = rep.get("facts") or {}
    probes = rep.get("probes") or {}
    return {
        "exit": code,
        "verdict": rep.get("verdict"),
        "findings": [
            {"id": f["id"], "severity": f["severity"], "title": f["title"]} for f in rep.get("findings") or []
        ],
        "skipped": sorted({s["id"] for s in rep.get("skipped") or []}),
        "driver": facts.get("driver"),
        "driver_cuda": facts.get("driver_cuda"),
        "nvml": {k: v for k, v in (probes.get("nvml") or {}).items() if k != "message"},
        "nvidia_smi": (probes.get("nvidia_smi") or {}).get("kind"),
        "gpus": rep.get("gpus"),
    }


def check_golden(name: str, got: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert path.exists(), f"no golden file {path} (run with UPDATE_GOLDEN=1 and review it)"
    assert got == json.loads(path.read_text())


@pytest.mark.parametrize("name", profile_names())
def test_doctor_on_profile_matches_golden(
    name: str, fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile(name)
    env = node_env(fake_nvml, doc, tmp_path)
    code, rep = doctor(env, bare_python)
    # The answers came from the fake library through pynvml, not from a fallback.
    assert rep["probes"]["nvml"]["status"] == "ok"
    assert [g["name"] for g in rep["gpus"]] == [d["nvmlDeviceGetName"] for d in doc["devices"]]
    calls = set(traced(tmp_path))
    missing = set(doc.get("missing_functions") or [])
    expected = {s for s in DOCTOR_SYMBOLS if s not in missing}
    if "nvmlDeviceGetCurrentClocksEventReasons" in missing:
        expected.add("nvmlDeviceGetCurrentClocksThrottleReasons")
    # A function the library lacks is never reached (pynvml raises FunctionNotFound before calling it).
    assert expected - calls == set() and not (calls & missing)
    check_golden(name, summary(code, rep))


def test_every_profile_cites_its_capture() -> None:
    for name in profile_names():
        doc = profile(name)
        assert doc["schema_version"] == 1 and doc["name"] == name
        for src in doc["sources"]:
            assert src["repo"] in ("influxdata/telegraf", "utkuozdemir/nvidia_gpu_exporter")
            assert len(src["commit"]) == 40 and src["path"] and src["license"] == "MIT"
        for edit in doc.get("edits") or []:
            assert edit["what"] and edit["why"]


def test_degraded_node_points_at_the_one_bad_gpu(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    code, rep = doctor(node_env(fake_nvml, profile("h100-x4-one-degraded"), tmp_path), bare_python)
    gpu_findings = [f for f in rep["findings"] if f["id"].startswith("gpu.")]
    assert code == 1
    assert {f["id"] for f in gpu_findings} == {"gpu.ecc", "gpu.pcie", "gpu.retired-pages", "gpu.throttle"}
    assert all(f["title"].startswith("GPU 2 ") for f in gpu_findings)


def test_geforce_not_supported_is_quiet(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    """ECC, MIG, remapped rows and retired pages answer NOT_SUPPORTED on a GeForce: not a finding, not an error."""
    code, rep = doctor(node_env(fake_nvml, profile("geforce-rtx-3090"), tmp_path), bare_python)
    g = rep["gpus"][0]
    assert code == 0 and not [f for f in rep["findings"] if f["id"].startswith(("gpu.", "driver."))]
    assert g["health"]["remapped_rows"] is None and g["health"]["ecc_uncorrected_volatile"] is None
    assert g["mig_mode"] is None and "nvml_errors" not in g


def test_no_permission_and_lost_gpu_are_reported(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile("h100-80gb-hbm3")
    doc["devices"][0]["nvmlDeviceGetPowerUsage"] = {"error": "NO_PERMISSION"}
    _, rep = doctor(node_env(fake_nvml, doc, tmp_path / "perm"), bare_python)
    assert "power_usage" in rep["gpus"][0]["nvml_errors"]
    lost = profile("h100-80gb-hbm3")
    lost["faults"] = {"lost_after": {"0": 6}}
    _code, rep = doctor(node_env(fake_nvml, lost, tmp_path / "lost"), bare_python)
    errs = rep["gpus"][0].get("nvml_errors") or {}
    assert errs and all("lost" in m.lower() for m in errs.values())


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_nvml_hang_is_a_finding_not_a_hang(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    doc = profile("l40s")
    doc["faults"] = {"hang": ["nvmlDeviceGetTemperature"]}
    env = node_env(fake_nvml, doc, tmp_path)
    from tests.nvml.helpers import compat

    res = compat(
        ["doctor", "--json", "--no-smoke", "--python", bare_python, "--timeout", "2"], env, timeout=90
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    rep = json.loads(res.stdout)
    assert rep["probes"]["nvml"]["status"] == "timeout"
    assert any(f["id"] == "driver.nvml" for f in rep["findings"]), rep["findings"]


def test_nvml_crash_is_a_finding_not_a_crash(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile("l40s")
    doc["faults"] = {"crash": ["nvmlDeviceGetMemoryInfo"]}
    from tests.nvml.helpers import compat

    res = compat(
        ["doctor", "--json", "--no-smoke", "--python", bare_python], node_env(fake_nvml, doc, tmp_path)
    )
    assert res.returncode in (0, 1), f"exit {res.returncode}"
    rep = json.loads(res.stdout)
    assert any(f["id"] == "driver.nvml" for f in rep["findings"])
