"""`compat record`: this machine's NVML answers, for every call compat makes, as a profile the fake NVML library
(tests/fake_nvml) replays. Serials are never read; UUIDs are replaced; no host name is recorded.

The capture runs in a child process (like every use of the driver library): a driver that hangs or crashes takes
the child down, never compat. profile() starts the child, bounded; capture() is what the child runs.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from compat.schema_version import SCHEMA_VERSION

# NVML return codes by name (nvml.h), as profiles spell them.
ERROR_NAMES = {
    1: "UNINITIALIZED",
    2: "INVALID_ARGUMENT",
    3: "NOT_SUPPORTED",
    4: "NO_PERMISSION",
    5: "ALREADY_INITIALIZED",
    6: "NOT_FOUND",
    7: "INSUFFICIENT_SIZE",
    8: "INSUFFICIENT_POWER",
    9: "DRIVER_NOT_LOADED",
    10: "TIMEOUT",
    11: "IRQ_ISSUE",
    12: "LIBRARY_NOT_FOUND",
    13: "FUNCTION_NOT_FOUND",
    14: "CORRUPTED_INFOROM",
    15: "GPU_IS_LOST",
    16: "RESET_REQUIRED",
    17: "OPERATING_SYSTEM",
    18: "LIB_RM_VERSION_MISMATCH",
    19: "IN_USE",
    20: "MEMORY",
    21: "NO_DATA",
    25: "ARGUMENT_VERSION_MISMATCH",
    999: "UNKNOWN",
}

# (profile key, pynvml function, extra arguments, the library symbol pynvml resolves it to).
DEVICE_CALLS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("nvmlDeviceGetName", "nvmlDeviceGetName", (), "nvmlDeviceGetName"),
    ("nvmlDeviceGetUUID", "nvmlDeviceGetUUID", (), "nvmlDeviceGetUUID"),
    ("nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo", (), "nvmlDeviceGetPciInfo_v3"),
    (
        "nvmlDeviceGetCudaComputeCapability",
        "nvmlDeviceGetCudaComputeCapability",
        (),
        "nvmlDeviceGetCudaComputeCapability",
    ),
    ("nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo", (), "nvmlDeviceGetMemoryInfo"),
    (
        "nvmlDeviceGetComputeRunningProcesses",
        "nvmlDeviceGetComputeRunningProcesses",
        (),
        "nvmlDeviceGetComputeRunningProcesses_v3",
    ),
    (
        "nvmlDeviceGetGraphicsRunningProcesses",
        "nvmlDeviceGetGraphicsRunningProcesses",
        (),
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
    ),
    ("nvmlDeviceGetPersistenceMode", "nvmlDeviceGetPersistenceMode", (), "nvmlDeviceGetPersistenceMode"),
    ("nvmlDeviceGetMigMode", "nvmlDeviceGetMigMode", (), "nvmlDeviceGetMigMode"),
    ("nvmlDeviceGetTemperature:0", "nvmlDeviceGetTemperature", (0,), "nvmlDeviceGetTemperature"),
    (
        "nvmlDeviceGetTemperatureThreshold:1",
        "nvmlDeviceGetTemperatureThreshold",
        (1,),
        "nvmlDeviceGetTemperatureThreshold",
    ),
    (
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksEventReasons",
        (),
        "nvmlDeviceGetCurrentClocksEventReasons",
    ),
    (
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
        (),
        "nvmlDeviceGetCurrentClocksThrottleReasons",
    ),
    ("nvmlDeviceGetPowerUsage", "nvmlDeviceGetPowerUsage", (), "nvmlDeviceGetPowerUsage"),
    (
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetEnforcedPowerLimit",
        (),
        "nvmlDeviceGetEnforcedPowerLimit",
    ),
    (
        "nvmlDeviceGetPowerManagementDefaultLimit",
        "nvmlDeviceGetPowerManagementDefaultLimit",
        (),
        "nvmlDeviceGetPowerManagementDefaultLimit",
    ),
    ("nvmlDeviceGetTotalEccErrors:1:0", "nvmlDeviceGetTotalEccErrors", (1, 0), "nvmlDeviceGetTotalEccErrors"),
    ("nvmlDeviceGetTotalEccErrors:1:1", "nvmlDeviceGetTotalEccErrors", (1, 1), "nvmlDeviceGetTotalEccErrors"),
    ("nvmlDeviceGetRetiredPages:0", "nvmlDeviceGetRetiredPages", (0,), "nvmlDeviceGetRetiredPages"),
    ("nvmlDeviceGetRetiredPages:1", "nvmlDeviceGetRetiredPages", (1,), "nvmlDeviceGetRetiredPages"),
    (
        "nvmlDeviceGetRetiredPagesPendingStatus",
        "nvmlDeviceGetRetiredPagesPendingStatus",
        (),
        "nvmlDeviceGetRetiredPagesPendingStatus",
    ),
    ("nvmlDeviceGetRemappedRows", "nvmlDeviceGetRemappedRows", (), "nvmlDeviceGetRemappedRows"),
    (
        "nvmlDeviceGetCurrPcieLinkGeneration",
        "nvmlDeviceGetCurrPcieLinkGeneration",
        (),
        "nvmlDeviceGetCurrPcieLinkGeneration",
    ),
    (
        "nvmlDeviceGetMaxPcieLinkGeneration",
        "nvmlDeviceGetMaxPcieLinkGeneration",
        (),
        "nvmlDeviceGetMaxPcieLinkGeneration",
    ),
    (
        "nvmlDeviceGetCurrPcieLinkWidth",
        "nvmlDeviceGetCurrPcieLinkWidth",
        (),
        "nvmlDeviceGetCurrPcieLinkWidth",
    ),
    ("nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth", (), "nvmlDeviceGetMaxPcieLinkWidth"),
)
SYSTEM_CALLS = ("nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion", "nvmlSystemGetNVMLVersion")
STRING_SIZES = {
    "nvmlSystemGetDriverVersion": 80,
    "nvmlSystemGetNVMLVersion": 80,
    "nvmlDeviceGetName": 96,
    "nvmlDeviceGetUUID": 96,
}


def redacted_uuid(index: int) -> str:
    return f"GPU-00000000-0000-0000-0000-{index:012d}"


def _error(exc: BaseException) -> dict[str, Any]:
    if type(exc).__name__ == "NVMLLibraryMismatchError":
        # pynvml's unversioned wrappers (running processes) turn the _v3 symbol's FunctionNotFound into this.
        return {"error": "FUNCTION_NOT_FOUND"}
    code = getattr(exc, "value", None)
    if isinstance(code, int):
        return {"error": ERROR_NAMES.get(code, code)}
    return {"error": "UNKNOWN", "exception": f"{type(exc).__name__}: {exc}"[:300]}


def _raw_string(nvml: Any, name: str, *pre: Any) -> dict[str, str]:
    """The bytes a string call returned, when they are not UTF-8 (pynvml's decode fails on them)."""
    import ctypes

    size = STRING_SIZES.get(name, 96)
    buf = ctypes.create_string_buffer(size)
    fn = nvml._nvmlGetFunctionPointer(name)
    ret = fn(*pre, buf, ctypes.c_uint(size))
    if ret != 0:
        raise nvml.NVMLError(ret)
    return {"hex": buf.value.hex()}


def _value(key: str, v: Any) -> Any:
    func = key.split(":")[0]
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return {"hex": v.hex()}
    if func == "nvmlDeviceGetPciInfo":
        bus = v.busId
        return {"bus_id": bus.decode() if isinstance(bus, bytes) else str(bus)}
    if func == "nvmlDeviceGetMemoryInfo":
        return {"total": int(v.total), "free": int(v.free), "used": int(v.used), "reserved": 0}
    if func.endswith("RunningProcesses"):
        return [
            {
                "pid": int(p.pid),
                "used_memory": int(p.usedGpuMemory) if isinstance(p.usedGpuMemory, int) else None,
            }
            for p in v
        ]
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    return int(v)


def _call(nvml: Any, key: str, fn: Callable[[], Any], raw: Callable[[], Any] | None = None) -> Any:
    try:
        return _value(key, fn())
    except UnicodeDecodeError:
        if raw is None:
            return {"error": "UNKNOWN", "exception": "undecodable bytes"}
        try:
            return raw()
        except Exception as exc:
            return _error(exc)
    except Exception as exc:
        return _error(exc)


def _host(root: str) -> dict[str, Any]:
    """The files the doctor reads besides NVML: /proc/driver/nvidia/version and the /dev/nvidia* node names."""
    out: dict[str, Any] = {"proc_version": None, "dev_nodes": []}
    try:
        with open(os.path.join(root, "proc/driver/nvidia/version"), encoding="utf-8", errors="replace") as f:
            out["proc_version"] = f.read(4096)
    except OSError:
        pass
    try:
        out["dev_nodes"] = sorted(
            n
            for n in os.listdir(os.path.join(root, "dev"))
            if n.startswith("nvidia") and not os.path.isdir(os.path.join(root, "dev", n))
        )
    except OSError:
        pass
    return out


def capture(nvml: Any, root: str = "/") -> dict[str, Any]:
    """Call every NVML function compat calls (the child's work); the profile document."""
    missing: list[str] = []
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": "recorded",
        "sources": [
            {
                "recorded_by": "compat record",
                "nvidia-ml-py": getattr(nvml, "__version__", None) or _dist_version("nvidia-ml-py"),
            }
        ],
        "redacted": [
            "UUIDs (replaced by GPU-00000000-0000-0000-0000-<index>)",
            "serials and host names (not read)",
        ],
        "init": "SUCCESS",
        "missing_functions": missing,
        "system": {},
        "devices": [],
        "host": _host(root),
    }
    try:
        nvml.nvmlInit()
    except Exception as exc:
        doc["init"] = _error(exc)["error"]
        return doc
    try:
        for name in SYSTEM_CALLS:
            fn = getattr(nvml, name, None)
            if fn is None:
                continue
            value = _call(
                nvml,
                name,
                fn,
                functools.partial(_raw_string, nvml, name) if name in STRING_SIZES else None,
            )
            if isinstance(value, dict) and value.get("error") == "FUNCTION_NOT_FOUND":
                missing.append(name)
                continue
            doc["system"][name] = value
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            doc["system"]["nvmlDeviceGetCount_v2"] = _error(exc)
            return doc
        for i in range(count):
            dev: dict[str, Any] = {}
            try:
                h = nvml.nvmlDeviceGetHandleByIndex(i)
            except Exception as exc:
                dev["nvmlDeviceGetHandleByIndex_v2"] = _error(exc)
                doc["devices"].append(dev)
                continue
            for key, func, args, symbol in DEVICE_CALLS:
                fn = getattr(nvml, func, None)
                if fn is None:
                    continue
                value = _call(
                    nvml,
                    key,
                    functools.partial(fn, h, *args),
                    functools.partial(_raw_string, nvml, func, h) if func in STRING_SIZES else None,
                )
                if isinstance(value, dict) and value.get("error") == "FUNCTION_NOT_FOUND":
                    if symbol not in missing:
                        missing.append(symbol)
                    continue
                if key == "nvmlDeviceGetUUID" and not (isinstance(value, dict) and "error" in value):
                    value = redacted_uuid(i)
                dev[key] = value
            doc["devices"].append(dev)
        return doc
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:
            pass


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def profile(
    timeout: float = 30.0, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, Any] | None, str]:
    """Run capture() in a child under `timeout`; (the profile, "") or (None, why it failed)."""
    from compat._proc import run as run_command

    env = dict(os.environ if environ is None else environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    root = env.get("COMPAT_HOST_ROOT") or "/"
    fd, out = tempfile.mkstemp(prefix="compat-profile-", suffix=".json")
    os.close(fd)
    try:
        res = run_command([sys.executable, os.path.abspath(__file__), out, root], timeout, environ=env)
        if not res.ok:
            return None, f"the NVML capture child: {res.describe()}"
        try:
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as exc:
            return None, f"the NVML capture child wrote no profile ({exc})"
        return (doc, "") if isinstance(doc, dict) else (None, "the NVML capture child wrote no profile")
    finally:
        try:
            os.unlink(out)
        except OSError:
            pass


def _child_main(argv: list[str]) -> int:
    out, root = argv[0], (argv[1] if len(argv) > 1 else "/")
    try:
        import pynvml
    except ImportError as exc:
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "init": "LIBRARY_NOT_FOUND",
            "error": str(exc),
        }
    else:
        doc = capture(pynvml, root)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=True)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
