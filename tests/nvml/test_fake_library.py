"""The fake NVML library against the real pynvml: every call compat makes, their structs and failure modes."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fake_nvml import FakeNvmlLib, ProfileError, flatten
from tests.nvml.helpers import child, child_json, traced

GIB = 1 << 30

BASE: dict[str, Any] = {
    "schema_version": 1,
    "system": {
        "nvmlSystemGetDriverVersion": "550.54.15",
        "nvmlSystemGetCudaDriverVersion": 12040,
        "nvmlSystemGetNVMLVersion": "12.550.54.15",
    },
    "devices": [
        {
            "nvmlDeviceGetName": "NVIDIA A100-SXM4-80GB",
            "nvmlDeviceGetUUID": "GPU-00000000-0000-0000-0000-000000000000",
            "nvmlDeviceGetPciInfo": {"bus_id": "00000000:07:00.0"},
            "nvmlDeviceGetCudaComputeCapability": [8, 0],
            "nvmlDeviceGetMemoryInfo": {
                "total": 80 * GIB,
                "free": 79 * GIB,
                "used": GIB,
                "reserved": 512 << 20,
            },
            "nvmlDeviceGetComputeRunningProcesses": [
                {"pid": 4242, "used_memory": GIB},
                {"pid": 7, "used_memory": None},
            ],
            "nvmlDeviceGetRetiredPages:1": [4096, 8192, 12288],
            "nvmlDeviceGetRetiredPages:0": [],
            "nvmlDeviceGetTemperature:0": 33,
            "nvmlDeviceGetTotalEccErrors:1:0": 2,
            "nvmlDeviceGetRemappedRows": [0, 1, 1, 0],
            "nvmlDeviceGetMigMode": [1, 0],
            "nvmlDeviceGetCurrentClocksEventReasons": 0x8,
            "nvmlDeviceGetPowerUsage": {"error": "NO_PERMISSION"},
        },
        {"nvmlDeviceGetName": "NVIDIA GeForce RTX 4090", "nvmlDeviceGetCudaComputeCapability": [8, 9]},
    ],
}

CALLS = """
import json, pynvml as n
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
def err(f, *a):
    try:
        return f(*a)
    except n.NVMLError as e:
        return {"error": e.value, "str": str(e)}
m1 = n.nvmlDeviceGetMemoryInfo(h)
m2 = n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)
procs = n.nvmlDeviceGetComputeRunningProcesses(h)
out = {
    "driver": n.nvmlSystemGetDriverVersion(), "cuda": n.nvmlSystemGetCudaDriverVersion(),
    "nvml": n.nvmlSystemGetNVMLVersion(), "count": n.nvmlDeviceGetCount(),
    "name": n.nvmlDeviceGetName(h), "uuid": n.nvmlDeviceGetUUID(h),
    "bus": n.nvmlDeviceGetPciInfo(h).busId, "cc": list(n.nvmlDeviceGetCudaComputeCapability(h)),
    "m1": [m1.total, m1.free, m1.used], "m2": [m2.total, m2.free, m2.used, m2.reserved],
    "procs": [[p.pid, p.usedGpuMemory] for p in procs],
    "graphics": err(n.nvmlDeviceGetGraphicsRunningProcesses, h),
    "dbe": n.nvmlDeviceGetRetiredPages(h, 1), "sbe": n.nvmlDeviceGetRetiredPages(h, 0),
    "temp": n.nvmlDeviceGetTemperature(h, 0), "ecc": n.nvmlDeviceGetTotalEccErrors(h, 1, 0),
    "rows": list(n.nvmlDeviceGetRemappedRows(h)), "mig": n.nvmlDeviceGetMigMode(h),
    "reasons": n.nvmlDeviceGetCurrentClocksEventReasons(h),
    "throttle_alias": n.nvmlDeviceGetCurrentClocksThrottleReasons(h),
    "power": err(n.nvmlDeviceGetPowerUsage, h), "pcie": err(n.nvmlDeviceGetCurrPcieLinkWidth, h),
    "name1": n.nvmlDeviceGetName(n.nvmlDeviceGetHandleByIndex(1)),
    "bad_index": err(n.nvmlDeviceGetHandleByIndex, 2),
}
n.nvmlShutdown()
print(json.dumps(out))
"""


def _env(fake_nvml: FakeNvmlLib, tmp_path: Path, doc: dict[str, Any]) -> dict[str, str]:
    return fake_nvml.env(doc, tmp_path)


def test_every_call_answers_through_the_real_pynvml(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    out = child_json(CALLS, _env(fake_nvml, tmp_path, BASE))
    assert out["driver"] == "550.54.15" and out["cuda"] == 12040 and out["nvml"] == "12.550.54.15"
    assert (
        out["count"] == 2
        and out["name"] == "NVIDIA A100-SXM4-80GB"
        and out["name1"] == "NVIDIA GeForce RTX 4090"
    )
    assert out["uuid"].startswith("GPU-") and out["bus"] == "00000000:07:00.0" and out["cc"] == [8, 0]
    # The v1 struct (total, free, used) and the versioned v2 struct (version, total, reserved, free, used).
    assert out["m1"] == [80 * GIB, 79 * GIB, GIB]
    assert out["m2"] == [80 * GIB, 79 * GIB, GIB, 512 << 20]
    # Two-call size pattern; NVML_VALUE_NOT_AVAILABLE becomes None in pynvml.
    assert out["procs"] == [[4242, GIB], [7, None]]
    assert out["dbe"] == [4096, 8192, 12288] and out["sbe"] == []
    assert out["temp"] == 33 and out["ecc"] == 2 and out["rows"] == [0, 1, 1, 0] and out["mig"] == [1, 0]
    assert out["reasons"] == 8 and out["throttle_alias"] == 8
    assert out["power"] == {"error": 4, "str": "Insufficient Permissions"}
    assert out["pcie"]["error"] == 3 and out["graphics"]["error"] == 3  # not in the profile: Not Supported
    assert out["bad_index"]["error"] == 2
    calls = traced(tmp_path)
    # pynvml's nvmlInit() is nvmlInitWithFlags(0); count and handles use the _v2 symbols, processes _v3, PCI _v3.
    assert "nvmlInitWithFlags" in calls and "nvmlInit" not in calls
    assert {
        "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetPciInfo_v3",
        "nvmlDeviceGetMemoryInfo_v2",
    } <= set(calls)
    assert calls.count("nvmlDeviceGetComputeRunningProcesses_v3") == 2  # size, then data


def test_memory_v2_checks_the_struct_version(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    code = """
import json, pynvml as n
n.nvmlInit()
try:
    n.nvmlDeviceGetMemoryInfo(n.nvmlDeviceGetHandleByIndex(0), version=0x01000018)
    print(json.dumps(None))
except n.NVMLError as e:
    print(json.dumps(e.value))
"""
    assert child_json(code, _env(fake_nvml, tmp_path, BASE)) == 25  # NVML_ERROR_ARGUMENT_VERSION_MISMATCH


def test_a_function_an_old_driver_lacks_is_function_not_found(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = {
        **BASE,
        "missing_functions": ["nvmlDeviceGetRemappedRows", "nvmlDeviceGetCurrentClocksEventReasons"],
    }
    code = """
import json, pynvml as n
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
out = []
for f in (n.nvmlDeviceGetRemappedRows, n.nvmlDeviceGetCurrentClocksEventReasons):
    try:
        f(h)
        out.append(None)
    except n.NVMLError_FunctionNotFound as e:
        out.append(e.value)
out.append(n.nvmlDeviceGetCurrentClocksThrottleReasons(h))
print(json.dumps(out))
"""
    assert child_json(code, _env(fake_nvml, tmp_path, doc)) == [13, 13, 8]


def test_init_error_and_lost_gpu(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    code = """
import json, pynvml as n
try:
    n.nvmlInit()
    print(json.dumps("ok"))
except n.NVMLError as e:
    print(json.dumps(e.value))
"""
    assert child_json(code, _env(fake_nvml, tmp_path / "a", {**BASE, "init": "DRIVER_NOT_LOADED"})) == 9
    lost = {**BASE, "faults": {"lost_after": {"0": 3}}}
    code = """
import json, pynvml as n
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
out = []
for _ in range(4):
    try:
        out.append(n.nvmlDeviceGetTemperature(h, 0))
    except n.NVMLError as e:
        out.append(e.value)
print(json.dumps(out))
"""
    # The handle is call 1; two reads answer, then the GPU has fallen off the bus.
    assert child_json(code, _env(fake_nvml, tmp_path / "b", lost)) == [33, 33, 15, 15]


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_injected_hang_and_crash(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    code = (
        "import pynvml as n; n.nvmlInit(); h = n.nvmlDeviceGetHandleByIndex(0); n.nvmlDeviceGetPowerUsage(h)"
    )
    crash = child(
        code, _env(fake_nvml, tmp_path / "c", {**BASE, "faults": {"crash": ["nvmlDeviceGetPowerUsage"]}})
    )
    assert crash.returncode == -signal.SIGSEGV
    with pytest.raises(subprocess.TimeoutExpired):
        child(
            code,
            _env(fake_nvml, tmp_path / "h", {**BASE, "faults": {"hang": ["nvmlDeviceGetPowerUsage"]}}),
            3,
        )


def test_xid_event_queue(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = {**BASE, "xid_events": [{"device": 1, "xid": 79}, {"device": 0, "xid": 48}]}
    code = """
import json, pynvml as n
n.nvmlInit()
s = n.nvmlEventSetCreate()
for i in range(2):
    h = n.nvmlDeviceGetHandleByIndex(i)
    n.nvmlDeviceRegisterEvents(h, n.nvmlDeviceGetSupportedEventTypes(h) & n.nvmlEventTypeXidCriticalError, s)
out = []
for _ in range(3):
    try:
        d = n.nvmlEventSetWait(s, 10)
        out.append([n.nvmlDeviceGetName(d.device), d.eventType, d.eventData])
    except n.NVMLError_Timeout:
        out.append("timeout")
n.nvmlEventSetFree(s)
print(json.dumps(out))
"""
    assert child_json(code, _env(fake_nvml, tmp_path, doc)) == [
        ["NVIDIA GeForce RTX 4090", 8, 79],
        ["NVIDIA A100-SXM4-80GB", 8, 48],
        "timeout",
    ]


def test_garbage_bytes_reach_pynvml_unchanged(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = {**BASE, "system": {**BASE["system"], "nvmlSystemGetDriverVersion": {"hex": "ff" * 16}}}
    code = """
import json, pynvml as n
n.nvmlInit()
try:
    print(json.dumps(n.nvmlSystemGetDriverVersion()))
except UnicodeDecodeError as e:
    print(json.dumps(repr(e.object[:4])))
"""
    assert child_json(code, _env(fake_nvml, tmp_path, doc)) == repr(b"\xff" * 4)


def test_a_bad_profile_is_refused() -> None:
    with pytest.raises(ProfileError):
        flatten({"schema_version": 2})
    with pytest.raises(ProfileError):
        flatten({"schema_version": 1, "devices": [{"nvmlDeviceGetName": {"error": "NO_SUCH_ERROR"}}]})
