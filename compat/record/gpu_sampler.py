"""The GPU sampler child: loads pynvml (only ever here, never in compat's own process) and prints one JSON line
per sample until its stdin closes or its parent goes away.

Lines: {"info": [...]} once, then {"s": [...]} per sample and {"xid": N, "gpu": I} per Xid event; or a single
{"unavailable": "reason"} when NVML cannot start. Run as `python -m compat.record.gpu_sampler INTERVAL`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

# Clock-event (throttle) reason bits, from nvml.h (nvmlClocksEventReason*): stable values across drivers.
REASONS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
    0x100: "display_clocks",
}


def reasons(mask: int) -> list[str]:
    return [name for bit, name in REASONS.items() if mask & bit]


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:
        return None


def _text(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def main(argv: list[str]) -> int:  # pragma: no cover - needs a GPU; exercised on the device machine
    interval = float(argv[0]) if argv else 1.0
    stop = threading.Event()

    def watch_stdin() -> None:
        try:
            while sys.stdin.buffer.read(1):
                pass
        except Exception:
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    parent = os.getppid()
    try:
        import pynvml as n

        n.nvmlInit()
    except Exception as exc:
        _emit({"unavailable": f"NVML did not start: {type(exc).__name__}: {exc}"[:300]})
        return 0
    try:
        count = n.nvmlDeviceGetCount()
    except Exception as exc:
        _emit({"unavailable": f"NVML could not count GPUs: {exc}"[:300]})
        return 0
    if count == 0:
        _emit({"unavailable": "NVML sees no GPU"})
        return 0
    handles = [n.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    info = []
    for i, h in enumerate(handles):
        mem = _try(n.nvmlDeviceGetMemoryInfo, h)
        limit = _try(n.nvmlDeviceGetEnforcedPowerLimit, h)
        info.append(
            {
                "index": i,
                "name": _text(_try(n.nvmlDeviceGetName, h) or "unknown"),
                "uuid": _text(_try(n.nvmlDeviceGetUUID, h) or ""),
                "mem_total": int(mem.total) if mem else None,
                "power_limit_w": round(limit / 1000.0, 1) if limit else None,
            }
        )
    _emit({"info": info})
    events = None
    try:
        events = n.nvmlEventSetCreate()
        for h in handles:
            n.nvmlDeviceRegisterEvents(h, n.nvmlEventTypeXidCriticalError, events)
    except Exception:
        events = None  # not supported here: the kernel log is the fallback for Xid
    ecc_kind = getattr(n, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    counter = getattr(n, "NVML_VOLATILE_ECC", 0)
    throttle_fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        n, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    while not stop.is_set() and os.getppid() == parent:
        t0 = time.time()
        rows = []
        for i, h in enumerate(handles):
            mem = _try(n.nvmlDeviceGetMemoryInfo, h)
            util = _try(n.nvmlDeviceGetUtilizationRates, h)
            power = _try(n.nvmlDeviceGetPowerUsage, h)
            mask = _try(throttle_fn, h) if throttle_fn else None
            procs = _try(n.nvmlDeviceGetComputeRunningProcesses, h) or []
            rows.append(
                {
                    "i": i,
                    "used": int(mem.used) if mem else None,
                    "util": int(util.gpu) if util else None,
                    "temp": _try(n.nvmlDeviceGetTemperature, h, 0),
                    "power": round(power / 1000.0, 1) if power is not None else None,
                    "throttle": reasons(int(mask)) if mask is not None else None,
                    "ecc": _try(n.nvmlDeviceGetTotalEccErrors, h, ecc_kind, counter),
                    "procs": [
                        [int(p.pid), int(p.usedGpuMemory) if p.usedGpuMemory is not None else None]
                        for p in procs[:64]
                    ],
                }
            )
        _emit({"t": round(t0, 3), "s": rows})
        remaining = interval - (time.time() - t0)
        if events is not None and remaining > 0:
            try:
                ev = n.nvmlEventSetWait(events, int(remaining * 1000))
                _emit(
                    {
                        "t": round(time.time(), 3),
                        "xid": int(ev.eventData),
                        "gpu": _try(n.nvmlDeviceGetIndex, ev.device),
                    }
                )
            except Exception:
                pass  # NVML_ERROR_TIMEOUT: no event in this interval
        remaining = interval - (time.time() - t0)
        if remaining > 0:
            stop.wait(remaining)
    return 0


if __name__ == "__main__":  # pragma: no cover
    try:
        code = main(sys.argv[1:])
    except (BrokenPipeError, KeyboardInterrupt):
        code = 0
    # os._exit, not SystemExit: the stdin-watching daemon thread may hold stdin's lock, and interpreter shutdown
    # would then abort ("could not acquire lock ... at interpreter shutdown"): found by the fake-NVML test.
    try:
        sys.stdout.flush()
    except Exception:
        pass
    os._exit(code)
