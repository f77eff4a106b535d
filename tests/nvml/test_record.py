"""`compat record` round trip: record a fake node's NVML answers, replay the recording with the fake library, and
the doctor's report is the same (the golden of the original profile)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import GOLDEN, compat, doctor, node_env, profile, profile_names
from tests.nvml.test_profiles_e2e import summary

# The default run round-trips one profile of each kind (MIG, several GPUs with one degraded, an old driver, a
# GeForce without ECC); every profile is round-tripped by .ci/run's slow step. test_profiles_e2e still runs the
# doctor on every profile by default.
REPLAY_SAMPLE = ("a100-sxm4-80gb-mig", "h100-x4-one-degraded", "quadro-p400-driver-418", "geforce-rtx-3090")


@pytest.mark.parametrize(
    "name", [n if n in REPLAY_SAMPLE else pytest.param(n, marks=pytest.mark.slow) for n in profile_names()]
)
def test_record_then_replay_gives_the_same_report(
    name: str, fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    env = node_env(fake_nvml, profile(name), tmp_path / "orig")
    out = tmp_path / "recorded.json"
    res = compat(["record", "--out", str(out)], env)
    assert res.returncode == 0, res.stderr[-2000:]
    rec = json.loads(out.read_text())
    assert rec["schema_version"] == 1 and rec["init"] == "SUCCESS"
    assert all(
        d["nvmlDeviceGetUUID"] == f"GPU-00000000-0000-0000-0000-{i:012d}"
        for i, d in enumerate(rec["devices"])
    )
    assert "nvmlDeviceGetSerial" not in json.dumps(rec)
    replay_env = node_env(fake_nvml, rec, tmp_path / "replay")
    code, rep = doctor(replay_env, bare_python)
    assert summary(code, rep) == json.loads((GOLDEN / f"{name}.json").read_text())


def test_record_keeps_errors_missing_functions_and_raw_bytes(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = profile("quadro-p400-driver-418")
    doc["system"]["nvmlSystemGetDriverVersion"] = {"hex": "ff" * 8}
    doc["devices"][0]["nvmlDeviceGetPowerUsage"] = {"error": "NO_PERMISSION"}
    res = compat(["record"], node_env(fake_nvml, doc, tmp_path))
    assert res.returncode == 0, res.stderr[-2000:]
    rec = json.loads(res.stdout)
    assert rec["system"]["nvmlSystemGetDriverVersion"] == {"hex": "ff" * 8}
    dev = rec["devices"][0]
    assert dev["nvmlDeviceGetPowerUsage"] == {"error": "NO_PERMISSION"}
    assert dev["nvmlDeviceGetEnforcedPowerLimit"] == {"error": "NOT_SUPPORTED"}
    assert {
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetRemappedRows",
        "nvmlDeviceGetMigMode",
    } <= set(rec["missing_functions"])
    assert "nvmlDeviceGetRemappedRows" not in dev
    assert rec["host"]["proc_version"].startswith("NVRM version:") and "nvidiactl" in rec["host"]["dev_nodes"]


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_record_survives_a_crashing_or_hanging_driver(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = profile("l40s")
    doc["faults"] = {"crash": ["nvmlDeviceGetName"]}
    res = compat(["record"], node_env(fake_nvml, doc, tmp_path / "crash"))
    assert res.returncode == 1 and "crashed (SIGSEGV)" in res.stderr and res.stdout == ""
    doc["faults"] = {"hang": ["nvmlDeviceGetName"]}
    res = compat(["record", "--timeout", "3"], node_env(fake_nvml, doc, tmp_path / "hang"), timeout=60)
    assert res.returncode == 1 and "did not answer" in res.stderr


def test_record_bad_out_is_a_usage_error(tmp_path: Path) -> None:
    res = compat(["record", "--out", str(tmp_path / "no" / "such" / "dir.json")], {})
    assert res.returncode == 2 and res.stderr.startswith("compat: error: --out")
    assert len(res.stderr.strip().splitlines()) == 1


def test_record_with_no_driver_records_why(tmp_path: Path) -> None:
    """No libnvidia-ml.so.1 at all: a valid recording of the failure (replays as LIBRARY_NOT_FOUND)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_PROFILE")}
    env["COMPAT_HOST_ROOT"] = str(tmp_path)
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("a real NVIDIA driver is loaded here")
    res = compat(["record"], env)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["init"] == "LIBRARY_NOT_FOUND"


def test_record_calls_every_nvml_function_the_doctor_calls(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    """`compat record` captures every call compat makes: the doctor's trace of NVML symbols is inside record's."""
    from tests.nvml.helpers import traced

    for name in ("h100-80gb-hbm3", "quadro-p400-driver-418"):
        work = tmp_path / name
        env = node_env(fake_nvml, profile(name), work)
        doctor(env, bare_python)
        by_doctor = set(traced(work))
        (work / "trace.txt").unlink()
        assert compat(["record"], env).returncode == 0
        by_record = set(traced(work))
        assert by_doctor and by_doctor <= by_record, by_doctor - by_record
