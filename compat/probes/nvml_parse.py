"""NVML's raw record (compat.probes.nvml.acquire()) -> the driver, the driver's CUDA version and each GPU's details.

Pure functions of the JSON record, kept apart from nvml.py, which the NVML child process loads by path and which
therefore imports nothing from compat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compat.probes.nvml import NVML_ERROR_FUNCTION_NOT_FOUND, NVML_ERROR_NOT_SUPPORTED, THROTTLE_BITS


def cuda_version_from_int(v: int | None) -> str | None:
    """nvmlSystemGetCudaDriverVersion's 12040 -> "12.4" (CUDA_VERSION = 1000 * major + 10 * minor)."""
    if not isinstance(v, int) or v <= 0:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def throttle_reasons(mask: int | None) -> list[str]:
    if not isinstance(mask, int):
        return []
    return [name for bit, name in sorted(THROTTLE_BITS.items()) if mask & bit]


def _mib(b: Any) -> int | None:
    return int(b) // (1024 * 1024) if isinstance(b, int) else None


def gpu_details(dev: Mapping[str, Any]) -> dict[str, Any]:
    """The Gpu.details of one NVML device record: memory (bytes), processes, modes and health."""
    mem = dev.get("memory") or {}
    procs = list(dev.get("compute_processes") or []) + [
        p
        for p in dev.get("graphics_processes") or []
        if p["pid"] not in {q["pid"] for q in dev.get("compute_processes") or []}
    ]
    mig = dev.get("mig_mode")
    rr = dev.get("remapped_rows")
    out: dict[str, Any] = {
        "uuid": dev.get("uuid"),
        "pci_bus_id": dev.get("pci_bus_id"),
        "memory_total": mem.get("total"),
        "memory_used": mem.get("used"),
        "memory_free": mem.get("free"),
        "processes": procs,
        "persistence_mode": None if dev.get("persistence_mode") is None else bool(dev["persistence_mode"]),
        "mig_mode": None if mig is None else {"current": bool(mig[0]), "pending": bool(mig[1])},
        "health": {
            "temperature": dev.get("temperature"),
            "temperature_slowdown": dev.get("temperature_slowdown"),
            "throttle_reasons": throttle_reasons(dev.get("clocks_event_reasons")),
            "power_usage_w": None if dev.get("power_usage") is None else round(dev["power_usage"] / 1000, 1),
            "power_limit_w": None if dev.get("power_limit") is None else round(dev["power_limit"] / 1000, 1),
            "power_default_limit_w": (
                None
                if dev.get("power_default_limit") is None
                else round(dev["power_default_limit"] / 1000, 1)
            ),
            "ecc_uncorrected_volatile": dev.get("ecc_uncorrected_volatile"),
            "ecc_uncorrected_aggregate": dev.get("ecc_uncorrected_aggregate"),
            "retired_pages": (
                None
                if dev.get("retired_pages_sbe") is None and dev.get("retired_pages_dbe") is None
                else {"sbe": dev.get("retired_pages_sbe"), "dbe": dev.get("retired_pages_dbe")}
            ),
            "retired_pages_pending": (
                None if dev.get("retired_pages_pending") is None else bool(dev["retired_pages_pending"])
            ),
            "remapped_rows": None
            if rr is None
            else {
                "correctable": rr[0],
                "uncorrectable": rr[1],
                "pending": bool(rr[2]),
                "failure": bool(rr[3]),
            },
            "pcie": {
                "gen": dev.get("pcie_gen"),
                "gen_max": dev.get("pcie_gen_max"),
                "width": dev.get("pcie_width"),
                "width_max": dev.get("pcie_width_max"),
            },
        },
    }
    # "Not Supported" (GeForce boards have no ECC, no row remapper) and functions an old driver lacks are normal;
    # anything else (no permission, GPU lost) is kept for the report.
    quiet = (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND, None)
    errs = {
        k: v.get("message")
        for k, v in sorted((dev.get("errors") or {}).items())
        if v.get("code") not in quiet
    }
    if errs:
        out["nvml_errors"] = errs
    return out


def parse(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Raw NVML values -> {"driver", "driver_cuda", "gpus": [{"index", "name", "cc", "details"}]} (or the error)."""
    if raw.get("status") != "ok":
        e = raw.get("error")
        err: Mapping[str, Any] = e if isinstance(e, Mapping) else {"message": e}
        return {
            "ok": False,
            "kind": err.get("kind", "error"),
            "message": err.get("message") or "NVML failed",
            "code": err.get("code"),
        }
    gpus = []
    for dev in raw.get("devices") or []:
        cc = dev.get("cc")
        gpus.append(
            {
                "index": dev.get("index"),
                "name": dev.get("name"),
                "cc": f"{cc[0]}.{cc[1]}" if cc else None,
                "details": gpu_details(dev),
            }
        )
    return {
        "ok": True,
        "driver": raw.get("driver_version"),
        "driver_cuda": cuda_version_from_int(raw.get("cuda_driver_version")),
        "nvml_version": raw.get("nvml_version"),
        "gpus": gpus,
    }


__all__ = ["cuda_version_from_int", "gpu_details", "parse", "throttle_reasons"]
