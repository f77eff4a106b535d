"""Plausibility of what NVML answered: values no working driver returns are garbage, and garbage is a finding.

A driver whose memory is corrupted, a mismatched or half-loaded library, or a broken shim can answer NVML calls with
bytes that are no version string, a compute capability of -1.99999, 2^64-1 bytes of memory or 4,000,000,000 degrees.
Each value is checked against the range any NVIDIA GPU can have; the bounds are deliberately wide (a check that flags
a real GPU would be worse than none). Pure functions of the raw NVML record (compat.probes.nvml.acquire()).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_DRIVER_RE = re.compile(r"^\d{1,4}\.\d{1,4}(?:\.\d{1,4})?$")
_UNDECODABLE = ("codec can't decode", "can't decode byte", "invalid start byte", "invalid continuation byte")

TIB = 1 << 40
MAX_MEMORY = 64 * TIB
"""No GPU has 64 TiB of memory (the largest have a few hundred GiB); 2^64-1 is NVML_VALUE_NOT_AVAILABLE."""
MAX_TEMPERATURE_C = 200
"""GPUs shut down near 100 °C; a sensor reading above 200 °C is not a temperature."""
MAX_POWER_MW = 20_000_000
"""20 kW: far above any GPU board (the largest draw about 1.5 kW)."""
MAX_CC_MAJOR = 20
MAX_DEVICES = 1024
MAX_COUNTER = 1 << 48
"""ECC and page counters near 2^64 are the not-available sentinel or random bits, not errors counted."""
PCIE_WIDTHS = (1, 2, 4, 8, 12, 16, 32)


def _item(gpu: int | None, field: str, value: Any, why: str) -> dict[str, Any]:
    text = value if isinstance(value, str) else repr(value)
    return {"gpu": gpu, "field": field, "value": text[:80], "why": why}


def _undecodable(errors: Mapping[str, Any], field: str) -> str | None:
    err = errors.get(field)
    if isinstance(err, Mapping) and err.get("code") is None:
        msg = str(err.get("message") or "")
        if any(s in msg for s in _UNDECODABLE):
            return msg
    return None


def _text(gpu: int | None, field: str, value: Any, errors: Mapping[str, Any]) -> list[dict[str, Any]]:
    bad = _undecodable(errors, field)
    if bad is not None:
        return [_item(gpu, field, bad, "bytes that are not text")]
    if isinstance(value, str) and (
        any(not c.isprintable() or c == "\ufffd" for c in value) or len(value) > 256
    ):
        return [_item(gpu, field, value, "unprintable characters")]
    return []


def _int_range(gpu: int | None, field: str, value: Any, lo: int, hi: int, unit: str) -> list[dict[str, Any]]:
    if isinstance(value, int) and not isinstance(value, bool) and not lo <= value <= hi:
        return [_item(gpu, field, value, f"outside {lo}..{hi} {unit}".rstrip())]
    return []


def nvml_garbage(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every implausible value in a raw NVML record: [{"gpu" (index or None), "field", "value", "why"}]."""
    if raw.get("status") != "ok":
        return []
    out: list[dict[str, Any]] = []
    sys_errors = raw.get("errors") or {}
    drv = raw.get("driver_version")
    out += _text(None, "driver_version", drv, sys_errors)
    if isinstance(drv, str) and not out and not _DRIVER_RE.match(drv.strip()):
        out.append(_item(None, "driver_version", drv, "not a driver version (digits and dots)"))
    out += _int_range(None, "cuda_driver_version", raw.get("cuda_driver_version"), 1000, 99990, "")
    out += _int_range(None, "device_count", raw.get("device_count"), 0, MAX_DEVICES, "devices")
    for dev in raw.get("devices") or []:
        i = dev.get("index")
        errors = dev.get("errors") or {}
        for field in ("name", "uuid", "pci_bus_id"):
            out += _text(i, field, dev.get(field), errors)
        cc = dev.get("cc")
        if isinstance(cc, list) and len(cc) == 2 and not (1 <= cc[0] <= MAX_CC_MAJOR and 0 <= cc[1] <= 9):
            out.append(_item(i, "cc", f"{cc[0]}.{cc[1]}", "not a compute capability"))
        mem = dev.get("memory")
        if isinstance(mem, Mapping):
            total = mem.get("total")
            out += _int_range(i, "memory.total", total, 1, MAX_MEMORY, "bytes")
            for k in ("used", "free"):
                v = mem.get(k)
                if isinstance(v, int) and isinstance(total, int) and 0 < total <= MAX_MEMORY and v > total:
                    out.append(_item(i, f"memory.{k}", v, f"more than the total {total} bytes"))
        out += _int_range(i, "temperature", dev.get("temperature"), 0, MAX_TEMPERATURE_C, "°C")
        out += _int_range(
            i, "temperature_slowdown", dev.get("temperature_slowdown"), 0, MAX_TEMPERATURE_C, "°C"
        )
        for k in ("power_usage", "power_limit", "power_default_limit"):
            out += _int_range(i, k, dev.get(k), 0, MAX_POWER_MW, "mW")
        for k in (
            "ecc_uncorrected_volatile",
            "ecc_uncorrected_aggregate",
            "retired_pages_sbe",
            "retired_pages_dbe",
        ):
            out += _int_range(i, k, dev.get(k), 0, MAX_COUNTER, "")
        for k in ("pcie_gen", "pcie_gen_max"):
            out += _int_range(i, k, dev.get(k), 1, 16, "")
        for k in ("pcie_width", "pcie_width_max"):
            v = dev.get(k)
            if isinstance(v, int) and v not in PCIE_WIDTHS:
                out.append(_item(i, k, v, "not a PCIe link width"))
    return out


__all__ = ["nvml_garbage"]
