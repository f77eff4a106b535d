"""NVML (nvidia-ml-py, module `pynvml`): driver, the driver's CUDA version, GPUs and their health.

acquire() calls NVML and records raw values (JSON-serialisable, one error per field that failed);
compat.probes.nvml_parse.parse() turns them into facts. The real driver library is only ever touched in a child process (_nvml_child.py, through the
process runner, with a timeout): a library that segfaults, aborts or hangs is a finding, never a crash or a hang
of compat or of the training script that called compat.guard(). Any object with pynvml's functions (a fake in
tests) can stand in for the module; a fake runs in-process, in a daemon thread with a deadline.

This module imports nothing from compat at import time: the child loads it by path.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_nvml_child.py")
CHILD_MARKER = "@@compat-nvml "
CHILD_START_S = 5.0
"""Seconds allowed on top of the NVML timeout for the child interpreter to start and import pynvml."""


# NVML return codes (nvml.h); stable across releases.
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_RESET_REQUIRED = 16
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_UNKNOWN = 999

ERROR_KINDS = {
    NVML_ERROR_LIBRARY_NOT_FOUND: "library-not-found",
    NVML_ERROR_DRIVER_NOT_LOADED: "driver-not-loaded",
    NVML_ERROR_LIB_RM_VERSION_MISMATCH: "version-mismatch",
    NVML_ERROR_NO_PERMISSION: "no-permission",
    NVML_ERROR_GPU_IS_LOST: "gpu-lost",
    NVML_ERROR_RESET_REQUIRED: "reset-required",
    NVML_ERROR_TIMEOUT: "timeout",
    NVML_ERROR_UNKNOWN: "unknown",
}

# nvmlClocksEventReason* bits (formerly ClocksThrottleReason*), nvml.h.
THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}

NVML_TEMPERATURE_GPU = 0
NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1


def error_code(exc: BaseException) -> int | None:
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def error_kind(code: int | None) -> str:
    return ERROR_KINDS.get(code, "error") if code is not None else "error"


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _err(exc: BaseException) -> dict[str, Any]:
    code = error_code(exc)
    try:
        msg = str(exc) or type(exc).__name__
    except Exception:
        msg = type(exc).__name__
    return {"code": code, "kind": error_kind(code), "message": msg}


class _Fields:
    """Collects values and per-field errors for one device (or the system)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.errors: dict[str, dict[str, Any]] = {}

    def get(self, name: str, fn: Callable[[], Any], conv: Callable[[Any], Any] = lambda v: v) -> Any:
        try:
            value = conv(fn())
        except Exception as exc:
            self.errors[name] = _err(exc)
            return None
        self.values[name] = value
        return value

    def out(self) -> dict[str, Any]:
        d = dict(self.values)
        if self.errors:
            d["errors"] = self.errors
        return d


def _procs(items: Any) -> list[dict[str, Any]]:
    out = []
    for p in items or []:
        used = getattr(p, "usedGpuMemory", None)
        out.append(
            {"pid": int(getattr(p, "pid", 0)), "used_memory": int(used) if isinstance(used, int) else None}
        )
    return out


def _first(nvml: Any, *names: str) -> Callable[..., Any]:
    for n in names:
        fn = getattr(nvml, n, None)
        if fn is not None:
            return fn  # type: ignore[no-any-return]
    raise AttributeError(f"NVML binding has none of {', '.join(names)}")


def _pair(v: Any) -> list[int]:
    return [int(v[0]), int(v[1])]


def _memory(m: Any) -> dict[str, int | None]:
    return {
        k: (int(getattr(m, k)) if getattr(m, k, None) is not None else None)
        for k in ("total", "used", "free")
    }


def _ints(v: Any) -> list[int]:
    return [int(x) for x in v]


def _rows(v: Any) -> list[int]:
    """nvmlDeviceGetRemappedRows: (correctable, uncorrectable, pending, failure)."""
    out = _ints(v)
    if len(out) != 4:
        raise ValueError(f"expected 4 values, got {len(out)}")
    return out


# (field, NVML function(s), extra arguments after the handle, conversion). Several names: the first the binding has.
DEVICE_FIELDS: tuple[tuple[str, tuple[str, ...], tuple[int, ...], Callable[[Any], Any]], ...] = (
    ("name", ("nvmlDeviceGetName",), (), _text),
    ("uuid", ("nvmlDeviceGetUUID",), (), _text),
    ("pci_bus_id", ("nvmlDeviceGetPciInfo",), (), lambda p: _text(p.busId)),
    ("cc", ("nvmlDeviceGetCudaComputeCapability",), (), _pair),
    ("memory", ("nvmlDeviceGetMemoryInfo",), (), _memory),
    ("compute_processes", ("nvmlDeviceGetComputeRunningProcesses",), (), lambda v: _procs(v)),
    ("graphics_processes", ("nvmlDeviceGetGraphicsRunningProcesses",), (), lambda v: _procs(v)),
    ("persistence_mode", ("nvmlDeviceGetPersistenceMode",), (), int),
    ("mig_mode", ("nvmlDeviceGetMigMode",), (), _pair),
    ("temperature", ("nvmlDeviceGetTemperature",), (NVML_TEMPERATURE_GPU,), int),
    (
        "temperature_slowdown",
        ("nvmlDeviceGetTemperatureThreshold",),
        (NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,),
        int,
    ),
    (
        "clocks_event_reasons",
        ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
        (),
        int,
    ),
    ("power_usage", ("nvmlDeviceGetPowerUsage",), (), int),
    ("power_limit", ("nvmlDeviceGetEnforcedPowerLimit",), (), int),
    ("power_default_limit", ("nvmlDeviceGetPowerManagementDefaultLimit",), (), int),
    (
        "ecc_uncorrected_volatile",
        ("nvmlDeviceGetTotalEccErrors",),
        (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC),
        int,
    ),
    (
        "ecc_uncorrected_aggregate",
        ("nvmlDeviceGetTotalEccErrors",),
        (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC),
        int,
    ),
    (
        "retired_pages_sbe",
        ("nvmlDeviceGetRetiredPages",),
        (NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,),
        len,
    ),
    (
        "retired_pages_dbe",
        ("nvmlDeviceGetRetiredPages",),
        (NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,),
        len,
    ),
    ("retired_pages_pending", ("nvmlDeviceGetRetiredPagesPendingStatus",), (), int),
    ("remapped_rows", ("nvmlDeviceGetRemappedRows",), (), _rows),
    ("pcie_gen", ("nvmlDeviceGetCurrPcieLinkGeneration",), (), int),
    ("pcie_gen_max", ("nvmlDeviceGetMaxPcieLinkGeneration",), (), int),
    ("pcie_width", ("nvmlDeviceGetCurrPcieLinkWidth",), (), int),
    ("pcie_width_max", ("nvmlDeviceGetMaxPcieLinkWidth",), (), int),
)


def _device_fields(nvml: Any, handle: Any, f: _Fields) -> None:
    for field, names, args, conv in DEVICE_FIELDS:

        def call(names: tuple[str, ...] = names, args: tuple[int, ...] = args) -> Any:
            # The binding has both names, an old driver only the older one (nvmlDeviceGetCurrentClocksEventReasons is
            # not in the R525 NVML reference): on FunctionNotFound try the next name (found with tests/fake_nvml).
            for n in names[:-1]:
                fn = getattr(nvml, n, None)
                if fn is None:
                    continue
                try:
                    return fn(handle, *args)
                except Exception as exc:
                    if error_code(exc) != NVML_ERROR_FUNCTION_NOT_FOUND:
                        raise
            return _first(nvml, names[-1])(handle, *args)

        f.get(field, call, conv)


def acquire(nvml: Any) -> dict[str, Any]:
    """Call NVML once for everything the doctor needs; returns raw values (JSON-serialisable)."""
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return {"status": "error", "error": _err(exc), "stage": "init"}
    try:
        sysf = _Fields()
        # Looked up inside the call: an old binding (nvidia-ml-py3 7.352) has no nvmlSystemGetCudaDriverVersion.
        sysf.get("driver_version", lambda: nvml.nvmlSystemGetDriverVersion(), _text)
        sysf.get("cuda_driver_version", lambda: nvml.nvmlSystemGetCudaDriverVersion(), int)
        sysf.get("nvml_version", lambda: nvml.nvmlSystemGetNVMLVersion(), _text)
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            return {"status": "error", "error": _err(exc), "stage": "device-count", **sysf.out()}
        devices = []
        for i in range(count):
            f = _Fields()
            try:
                h = nvml.nvmlDeviceGetHandleByIndex(i)
            except Exception as exc:
                devices.append({"index": i, "errors": {"handle": _err(exc)}})
                continue
            f.values["index"] = i
            _device_fields(nvml, h, f)
            devices.append(f.out())
        return {"status": "ok", **sysf.out(), "device_count": count, "devices": devices}
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def load_pynvml() -> tuple[Any, dict[str, Any] | None]:
    """The real binding, or why it is not there."""
    try:
        import pynvml
    except ImportError as exc:
        return None, {
            "status": "unavailable",
            "error": {
                "code": None,
                "kind": "binding-missing",
                "message": f"nvidia-ml-py is not installed ({exc}); install it with: pip install nvidia-ml-py",
            },
        }
    return pynvml, None


def _child_error(kind: str, message: str, status: str = "error") -> dict[str, Any]:
    return {"status": status, "error": {"code": None, "kind": kind, "message": message}}


class _NoLibrary:
    """pynvml where libnvidia-ml.so.1 cannot be loaded: nvmlInit raises what pynvml raises then."""

    class Error(Exception):
        value = NVML_ERROR_LIBRARY_NOT_FOUND

        def __str__(self) -> str:
            return "NVML Shared Library Not Found"

    def nvmlInit(self) -> None:
        raise self.Error()

    def nvmlShutdown(self) -> None:
        raise self.Error()


def _genuine_pynvml(environ: Mapping[str, str] | None) -> bool:
    """The child would import nvidia-ml-py's own pynvml (not a stand-in on its PYTHONPATH, not an old fork): the one
    that asks the loader for libnvidia-ml.so.1 and raises NVML_ERROR_LIBRARY_NOT_FOUND when it is not there.

    The child is this interpreter started with `environ`: its import path is that PYTHONPATH, then the same standard
    and site directories as ours. Searched in that order here; an interpreter started with -I, -E or -s (whose path
    the child does not share) gets no shortcut."""
    import importlib.machinery

    if sys.flags.isolated or sys.flags.ignore_environment or sys.flags.no_user_site:
        return False
    env = os.environ if environ is None else environ
    theirs = [os.path.abspath(p or ".") for p in (env.get("PYTHONPATH") or "").split(os.pathsep) if p]
    ours = [p for p in sys.path if p and os.path.abspath(p) != os.path.dirname(os.path.abspath(__file__))]
    try:
        spec = importlib.machinery.PathFinder.find_spec("pynvml", theirs + ours)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None)
    if not origin or os.path.basename(origin) != "pynvml.py":
        return False
    try:
        names = os.listdir(os.path.dirname(origin))
    except OSError:
        return False
    return any(n.startswith("nvidia_ml_py-") and n.endswith(".dist-info") for n in names)


def no_driver_library(environ: Mapping[str, str] | None = None) -> bool:
    """Certain that the NVML child would only report "NVML Shared Library Not Found" (compat.probes.loader);
    COMPAT_NVML_ALWAYS_CHILD=1 turns the shortcut off."""
    env = os.environ if environ is None else environ
    if env.get("COMPAT_NVML_ALWAYS_CHILD") == "1":
        return False
    from compat.probes.loader import certainly_absent  # the parent only: the child never asks

    return certainly_absent("libnvidia-ml.so.1", env) and _genuine_pynvml(environ)


def in_child(mode: str, timeout: float, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run acquire() (mode "full") or acquire_light() ("light") on the real pynvml in a child process.

    Never raises. A crash (signal), a hang (the timeout), a failed or garbled child is a result with
    status "crashed", "timeout" or "error" and a one-line message; the child's process group is always killed.
    """
    from compat._proc import run, signal_name

    python = sys.executable
    if not python:
        return _child_error("child-failed", "no Python interpreter to run the NVML probe in (sys.executable)")
    if no_driver_library(environ):  # what the child would answer, without starting it
        return acquire_light(_NoLibrary()) if mode == "light" else acquire(_NoLibrary())
    res = run([python, CHILD, mode], timeout + CHILD_START_S, environ=environ, limit=4 << 20)
    if res.status == "timeout":
        return _child_error("hang", f"NVML did not answer within {timeout:g} s", "timeout")
    if res.status == "crashed":
        err = res.stderr.strip().splitlines()
        return _child_error(
            "crashed",
            f"the NVIDIA driver library crashed: {signal_name(res.returncode)} in libnvidia-ml"
            + (f" ({err[-1][:200]})" if err else ""),
            "crashed",
        )
    for line in reversed(res.stdout.splitlines()):
        if line.startswith(CHILD_MARKER):
            try:
                doc = json.loads(line[len(CHILD_MARKER) :])
            except (ValueError, RecursionError):
                break
            if isinstance(doc, dict) and isinstance(doc.get("status"), str):
                return doc
            break
    err = [x for x in res.stderr.strip().splitlines() if x.strip()]
    why = res.describe() if res.status != "ok" else "it printed no answer"
    return _child_error(
        "child-failed",
        f"the NVML probe process failed: {why}"
        + (f" ({err[-1][:200]})" if err and res.status == "ok" else ""),
    )


def probe(nvml: Any = None, timeout: float = 5.0) -> dict[str, Any]:
    """acquire() under a deadline; `nvml` defaults to the real pynvml module, which runs in a child process."""
    if nvml is None:
        return in_child("full", timeout)
    from compat.probes.host import call_with_deadline

    res = call_with_deadline(lambda: acquire(nvml), timeout, "nvml")
    if isinstance(res, dict) and res.get("status") == "timeout":
        return {
            "status": "timeout",
            "error": {"code": None, "kind": "hang", "message": f"NVML did not answer within {timeout:g} s"},
        }
    return res  # type: ignore[no-any-return]


# ------------------------------------------------------------------ the guard's cheap read


def acquire_light(nvml: Any) -> dict[str, Any]:
    """The guard's cheap NVML read: driver, and each GPU's name, compute capability and free memory."""
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return {"status": "error", "error": _err(exc)}
    try:
        drv = _text(nvml.nvmlSystemGetDriverVersion())
        gpus = []
        for i in range(int(nvml.nvmlDeviceGetCount())):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            f = _Fields()
            for field, names, _args, conv in DEVICE_FIELDS:
                if field in ("name", "cc", "memory"):
                    f.get(field, functools.partial(lambda n, h: _first(nvml, *n)(h), names, h), conv)
            cc, mem = f.values.get("cc"), f.values.get("memory") or {}
            gpus.append(
                {
                    "name": f.values.get("name"),
                    "cc": f"{cc[0]}.{cc[1]}" if cc else None,
                    "memory_free": mem.get("free"),
                }
            )
        return {"status": "ok", "driver": drv, "gpus": gpus}
    except Exception as exc:
        return {"status": "error", "error": _err(exc)}
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()


def read_nvml_light(
    nvml: Any = None, timeout: float = 3.0
) -> tuple[str | None, list[dict[str, Any]] | None, str]:
    """(driver, [{"name", "cc", "memory_free"}], why-not) for compat.guard: no CUDA context is created.

    The real pynvml runs in a child process (the guard's cold path pays for it; its warm path reads the cache).
    """
    if nvml is None:
        res = in_child("light", timeout)
    else:
        from compat.probes.host import call_with_deadline

        res = call_with_deadline(lambda: acquire_light(nvml), timeout, "nvml-light")
    if res.get("status") == "ok":
        return res["driver"], res["gpus"], ""
    if res.get("status") == "timeout":
        return None, None, f"NVML did not answer within {timeout:g} s"
    err = res.get("error") or {}
    if err.get("kind") == "library-not-found":
        return None, [], "no NVIDIA driver (libnvidia-ml.so.1 not found)"
    if err.get("kind") in ("crashed", "child-failed", "binding-missing"):
        return None, None, str(err.get("message"))
    return None, None, f"NVML: {err.get('message', 'failed')}"
