"""GPU health (temperature, throttling, power, ECC, retired pages, PCIe) and the kernel log (Xid, OOM kills)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from compat.checks.context import Ctx, Result
from compat.checks.doctor_common import details_of, gib, gpu_label, real_gpus
from compat.checks.registry import check
from compat.findings import SEVERITIES, Finding, Fix, Skip
from compat.probes.model import Health, ProbeFailed, XidEvent

# Stable check ids. Never renumber or rename.
GPU_THERMAL = "gpu.thermal"
GPU_THROTTLE = "gpu.throttle"
GPU_POWER = "gpu.power"
GPU_ECC = "gpu.ecc"
GPU_RETIRED = "gpu.retired-pages"
GPU_PCIE = "gpu.pcie"
GPU_XID = "gpu.xid"
HOST_OOM = "host.oom"


@check(
    "doctor.gpu-health",
    ids=(GPU_THERMAL, GPU_THROTTLE, GPU_POWER, GPU_ECC, GPU_RETIRED, GPU_PCIE),
    entry_points=("doctor", "check", "explain"),
)
def check_gpu_health(ctx: Ctx) -> Iterator[Result]:
    for g in real_gpus(ctx):
        h = details_of(g).health
        if h is None:
            continue
        label = gpu_label(g)
        reasons = list(h.throttle_reasons)
        temp, slow = h.temperature, h.temperature_slowdown
        thermal = [r for r in reasons if "thermal" in r]
        if (temp is not None and slow is not None and temp >= slow - 5) or thermal:
            yield Finding(
                GPU_THERMAL,
                "warning",
                f"{label} is running hot ({temp} °C)",
                f"{label} is at {temp} °C"
                + (f", its slowdown threshold is {slow} °C" if slow else "")
                + (f"; active thermal throttling: {', '.join(thermal)}" if thermal else "")
                + ". Clocks drop and training slows; at the shutdown threshold the GPU turns off.",
                (
                    Fix(
                        "Check the fans, airflow and data-centre cooling",
                        "nvidia-smi -q -d TEMPERATURE,PERFORMANCE",
                    ),
                ),
                {"gpu": g.index, "temperature": temp, "slowdown": slow},
                group="health",
            )
        hw = [r for r in reasons if r in ("hw_slowdown", "hw_power_brake_slowdown")]
        if hw:
            yield Finding(
                GPU_THROTTLE,
                "warning",
                f"{label}: hardware slowdown is engaged",
                f"{label} reports {', '.join(hw)}: the board halves its clocks because of temperature or an external "
                "power-brake signal (power supply). Training runs at a fraction of its speed.",
                (Fix("Check power supply and cooling", "nvidia-smi -q -d PERFORMANCE"),),
                {"gpu": g.index, "reasons": hw},
                group="health",
            )
        limit, default = h.power_limit_w, h.power_default_limit_w
        if limit is not None and default is not None and default > 0 and limit < 0.9 * default:
            yield Finding(
                GPU_POWER,
                "warning",
                f"{label}: power limit lowered to {limit:g} W (default {default:g} W)",
                f"{label} may draw at most {limit:g} W, below its default {default:g} W; it throttles "
                f"(sw_power_cap) under load. Power draw now: {h.power_usage_w} W.",
                (Fix("Restore the default limit", f"sudo nvidia-smi -i {g.index} -pl {default:g}"),),
                {"gpu": g.index, "power_limit_w": limit, "default_w": default},
                group="health",
            )
        vol, agg = h.ecc_uncorrected_volatile, h.ecc_uncorrected_aggregate
        if vol is not None and vol > 0:
            yield Finding(
                GPU_ECC,
                "error",
                f"{label}: {vol} uncorrectable ECC error(s) since the driver loaded",
                f"{label} has {vol} uncorrected (double-bit) memory error(s) since the driver was loaded: data was "
                "corrupted and CUDA contexts on it were killed. Repeated errors mean failing memory.",
                (
                    Fix(
                        "Reset the GPU (retires or remaps the bad memory)", f"sudo nvidia-smi -r -i {g.index}"
                    ),
                    Fix("If it happens again, drain the machine and contact the vendor (RMA)"),
                ),
                {"gpu": g.index, "ecc_uncorrected_volatile": vol},
                group="health",
            )
        elif agg is not None and agg > 0:
            yield Finding(
                GPU_ECC,
                "warning",
                f"{label}: {agg} uncorrectable ECC error(s) in its lifetime",
                f"{label} has recorded {agg} uncorrected memory error(s) over its lifetime (none since the driver "
                "loaded). Watch it: a rising count predicts failure.",
                (Fix("Watch the counters", "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER"),),
                {"gpu": g.index, "ecc_uncorrected_aggregate": agg},
                group="health",
            )
        rr = h.remapped_rows
        pending = bool(h.retired_pages_pending) or bool(rr is not None and rr.pending)
        if rr is not None and rr.failure:
            yield Finding(
                GPU_RETIRED,
                "error",
                f"{label}: row remapping failed",
                f"{label} could not remap a failing memory row (uncorrectable rows: {rr.uncorrectable}): its "
                "memory can no longer be trusted.",
                (Fix("Drain the machine and contact the vendor (RMA)"),),
                {"gpu": g.index},
                group="health",
            )
        elif pending:
            yield Finding(
                GPU_RETIRED,
                "warning",
                f"{label}: memory page retirement / row remap pending",
                f"{label} marked bad memory for retirement or remapping; it takes effect only after a GPU reset. "
                "Until then the bad memory can be used again.",
                (Fix("Reset the GPU when it is idle", f"sudo nvidia-smi -r -i {g.index}"),),
                {"gpu": g.index},
                group="health",
            )
        pcie = h.pcie
        if pcie is not None:
            w, wmax = pcie.width, pcie.width_max
            if w is not None and wmax is not None and 0 < w < wmax:
                yield Finding(
                    GPU_PCIE,
                    "warning",
                    f"{label}: PCIe link runs at x{w} of x{wmax}",
                    f"{label}'s PCIe link trained at x{w} instead of x{wmax} (generation {pcie.gen} of "
                    f"{pcie.gen_max}; a lower generation at idle is normal power saving, a narrower link is "
                    "not). Host-to-GPU copies are slower; a reseated card or another slot usually fixes it.",
                    (Fix("Check the link", f"nvidia-smi -q -i {g.index} -d PCIE"),),
                    {"gpu": g.index, "width": w, "width_max": wmax},
                    group="health",
                )


def _pci_key(bus_id: str | None) -> str | None:
    """NVML's "00000000:2B:00.0" and the kernel's "0000:2b:00" -> "0000:2b:00"."""
    if not bus_id:
        return None
    parts = str(bus_id).lower().split(":")
    if len(parts) < 3:
        return None
    dom = parts[-3][-4:]
    return f"{dom}:{parts[-2]}:{parts[-1].split('.')[0]}"


def xid_table(doc: Any) -> dict[int, Mapping[str, Any]]:
    """code -> row, from a validated matrix/xid.yaml document (empty when absent or malformed)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("xids"), list):
        return {}
    return {
        row["code"]: row for row in doc["xids"] if isinstance(row, dict) and isinstance(row.get("code"), int)
    }


@check(
    "doctor.kernel-log",
    ids=(GPU_XID, HOST_OOM),
    entry_points=("doctor", "check", "explain"),
)
def check_kernel_log(ctx: Ctx) -> Iterator[Result]:
    h = ctx.probes.health
    if not isinstance(h, Health) or h.status != "ok":
        why = h.reason if isinstance(h, ProbeFailed) else (h.error if h is not None else None)
        reason = "kernel log not readable: " + str(why or "no health probe data")
        yield Skip(GPU_XID, reason)
        yield Skip(HOST_OOM, reason)
        return
    table = xid_table(ctx.m.raw.get("xid.yaml"))
    by_pci = {_pci_key(details_of(g).pci_bus_id): g for g in real_gpus(ctx)}
    groups: dict[int, list[XidEvent]] = {}
    for e in h.xid:
        if e.code is not None:
            groups.setdefault(e.code, []).append(e)
    for code in sorted(groups):
        evs = groups[code]
        row = table.get(code)
        sev = str(row.get("severity")) if row else "warning"
        if sev not in SEVERITIES:
            sev = "warning"
        where = sorted({str(e.pci) for e in evs})
        gpu_txt = ", ".join((f"GPU {by_pci[w].index} ({w})" if w in by_pci else w) for w in where)
        procs = sorted({str(e.process) for e in evs if e.process})
        name = row.get("name") if row else "not in compat's Xid table"
        last = evs[-1]
        msg = (
            f"The kernel log has {len(evs)} Xid {code} event(s) on {gpu_txt}"
            + (f" (processes: {', '.join(procs[:5])})" if procs else "")
            + f". Last: {last.message!r}. "
        )
        if row:
            msg += f"{row.get('meaning')} (cause: {row.get('cause')}; NVIDIA's catalog: {row.get('source')})"
            fixes: tuple[Fix, ...] = (Fix(str(row.get("action"))),)
        else:
            msg += "See NVIDIA's Xid catalog for this code."
            fixes = (
                Fix(
                    "Look the code up in NVIDIA's Xid catalog",
                    "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
                ),
            )
        yield Finding(
            GPU_XID,
            sev,
            f"Xid {code} ({name}) on {gpu_txt}",
            msg,
            fixes,
            {"xid": code, "count": len(evs), "pci": where},
            group="health",
        )
    ooms = h.oom
    if ooms:
        cg = [o for o in ooms if o.cgroup]
        who = ", ".join(
            f"{o.process} (pid {o.pid}" + (f", {gib(o.anon_rss)}" if o.anon_rss else "") + ")"
            for o in ooms[-5:]
        )
        yield Finding(
            HOST_OOM,
            "warning",
            f"The kernel's OOM killer killed {h.oom_total if h.oom_total is not None else len(ooms)} process(es)",
            f"Out-of-memory kills in the kernel log ({h.source}): {who}"
            + (f"; {len(cg)} of them at a cgroup (container) memory limit" if cg else "")
            + ". A training script or its DataLoader workers that die with 'Killed' or "
            "'DataLoader worker (pid N) is killed by signal: Killed' ran out of host RAM, not GPU memory.",
            (
                Fix(
                    "Use fewer DataLoader workers or a smaller batch, or give the job more memory "
                    "(docker run --memory ...)"
                ),
            ),
            {"oom_kills": len(ooms)},
            group="health",
        )


# ------------------------------------------------------------------ resources
