"""Why the run ended: the recorded evidence and explain's reading of the output, combined into one verdict that
names the evidence that decided it. Pure: a RunRecord (and explain's diagnoses) in, a RunVerdict out."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.findings import Finding, Fix
from compat.record.document import RunRecord, signal_name
from compat.record.timeline import Growth, fmt_bytes, fmt_t, peak, series, steady_growth, sustained_throttling

_HOST_ALLOC = re.compile(
    r"^\s*MemoryError\b|std::bad_alloc|Cannot allocate memory|DefaultCPUAllocator: can't allocate memory"
)
OUTCOMES = ("ok", "host_oom", "gpu_oom", "hardware_xid", "segfault", "killed", "signal", "error", "unknown")
NEAR_LIMIT = 0.9


@valueclass
class RunVerdict:
    """The end of a run, explained."""

    outcome: str
    """One of OUTCOMES."""
    title: str
    """One line: what happened."""
    deciding: tuple[str, ...]
    """The evidence that decided it, most decisive first."""
    findings: tuple[Finding, ...] = ()
    """The verdict as a finding, then what else the timeline shows (leaks, throttling, Xid)."""
    explain: tuple[dict[str, Any], ...] = ()
    """compat explain's diagnoses of the captured output (at most three)."""
    headroom: str | None = None
    """On success: one line of headroom."""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "title": self.title,
            "deciding": list(self.deciding),
            "findings": [f.to_json() for f in self.findings],
            "explain": list(self.explain),
            "headroom": self.headroom,
        }


def clock(rec: RunRecord, t: float | None) -> str:
    """Wall-clock time (local, HH:MM:SS) of `t` seconds into the run."""
    return time.strftime("%H:%M:%S", time.localtime(rec.started + (t if t is not None else rec.wall_s or 0)))


def _who(rec: RunRecord) -> str:
    return {"notebook": "the kernel", "watch": "the process"}.get(rec.kind, "the run")


def _rss_at_end(rec: RunRecord) -> tuple[float | None, float | None]:
    pts = series(rec.samples, "rss")
    pk = peak(pts)
    return (pts[-1][1] if pts else None), (pk[1] if pk else None)


def _leaks(rec: RunRecord) -> list[Finding]:
    out: list[Finding] = []
    limit = rec.cgroup.get("limit") or rec.host.get("mem_total")
    g = steady_growth(series(rec.samples, "rss"))
    if g is not None:
        out.append(_leak_finding("host", "host RSS of the process tree", g, limit, rec))
    for info in rec.gpu.get("gpus") or []:
        idx = int(info["index"])
        pts = series(rec.samples, "own", idx) or series(rec.samples, "used", idx)
        g = steady_growth(pts)
        if g is not None:
            out.append(_leak_finding(f"gpu{idx}", f"GPU {idx} memory", g, info.get("mem_total"), rec))
    return out


def _leak_finding(key: str, what: str, g: Growth, limit: Any, rec: RunRecord) -> Finding:
    to_limit = ""
    reached = isinstance(limit, int) and g.end_value >= NEAR_LIMIT * limit
    if isinstance(limit, int) and not reached and g.rate > 0:
        to_limit = f"; at that rate it reaches the {fmt_bytes(limit)} limit in about {fmt_t((limit - g.end_value) / g.rate)}"
    elif reached:
        to_limit = f", until the {fmt_bytes(limit)} limit"
    msg = (
        f"The {what} grew steadily from {fmt_bytes(g.start_value)} at {fmt_t(g.start_t)} into the run "
        f"({clock(rec, g.start_t)}) at {fmt_bytes(g.rate)}/s to {fmt_bytes(g.end_value)}{to_limit}. Memory that grows "
        "across steps instead of breathing per step is a leak: the classic is accumulating tensors that keep "
        "their autograd history (`total_loss += loss` instead of `loss.item()`), or a list of outputs kept for "
        "logging."
    )
    return Finding(
        f"record.leak.{key}",
        "error" if reached else "warning",
        f"{what} grew steadily ({fmt_bytes(g.rate)}/s from {fmt_t(g.start_t)})",
        msg,
        (
            Fix(
                "Accumulate Python numbers (`loss.item()`), detach what you keep, and delete references to "
                "outputs you no longer need."
            ),
        ),
        {
            "start_t": round(g.start_t, 2),
            "rate_bytes_per_s": round(g.rate),
            "start": int(g.start_value),
            "end": int(g.end_value),
            "r2": round(g.r2, 3),
            "limit": limit,
        },
        group="resources",
    )


def _throttling(rec: RunRecord) -> list[Finding]:
    out = []
    for th in sustained_throttling(rec.samples):
        sev = "warning" if th.kind == "thermal" else "info"
        out.append(
            Finding(
                f"record.throttle.{th.kind}",
                sev,
                f"GPU {th.gpu} {th.kind} throttling for {th.fraction:.0%} of the run",
                f"GPU {th.gpu} reported {', '.join(th.reasons)} in {th.samples} samples "
                f"({th.fraction:.0%} of the run; longest stretch {fmt_t(th.longest_s)}). "
                + (
                    "Clocks were cut for heat: check cooling and airflow."
                    if th.kind == "thermal"
                    else "The GPU ran at its power cap: normal under full load, but it caps throughput."
                ),
                facts={"gpu": th.gpu, "reasons": list(th.reasons), "fraction": round(th.fraction, 3)},
                group="health",
            )
        )
    return out


def _ecc(rec: RunRecord) -> list[Finding]:
    """Uncorrected ECC errors that rose during the run: memory faults on the GPU."""
    out = []
    for info in rec.gpu.get("gpus") or []:
        idx = int(info["index"])
        pts = series(rec.samples, "ecc", idx)
        if len(pts) >= 2 and pts[-1][1] > pts[0][1]:
            rise = int(pts[-1][1] - pts[0][1])
            out.append(
                Finding(
                    "record.ecc",
                    "error",
                    f"GPU {idx}: {rise} uncorrected ECC error(s) during the run",
                    f"The volatile uncorrected ECC counter of GPU {idx} rose from {int(pts[0][1])} to "
                    f"{int(pts[-1][1])}: GPU memory faults, which crash or corrupt a run.",
                    (
                        Fix(
                            "Drain the GPU and run the vendor diagnostics (nvidia-smi -q -d ECC, dcgmi diag)."
                        ),
                    ),
                    {"gpu": idx, "rise": rise},
                    group="health",
                )
            )
    return out


def _xids(rec: RunRecord) -> list[tuple[float | None, int, str]]:
    out: list[tuple[float | None, int, str]] = []
    for x in rec.xid_events:
        if x.get("xid") is not None:
            out.append((x.get("t"), int(x["xid"]), f"NVML Xid event {x['xid']} on GPU {x.get('gpu')}"))
    for e in rec.kernel_log.get("events") or []:
        if e.get("kind") == "xid" and e.get("xid") is not None:
            out.append((e.get("t"), int(e["xid"]), str(e.get("text", ""))))
    return out


def _gpu_peak_text(rec: RunRecord) -> tuple[str, bool]:
    """The GPU memory peak per GPU against its total, who held it, and whether any GPU was at its limit."""
    parts: list[str] = []
    at_limit = False
    for info in rec.gpu.get("gpus") or []:
        idx, total = int(info["index"]), info.get("mem_total")
        pk = peak(series(rec.samples, "used", idx))
        if pk is None:
            continue
        own = peak(series(rec.samples, "own", idx))
        near = isinstance(total, int) and pk[1] >= NEAR_LIMIT * total
        at_limit = at_limit or near
        held = f", the run held {fmt_bytes(own[1])}" if own else ""
        parts.append(f"GPU {idx} peaked at {fmt_bytes(pk[1])} of {fmt_bytes(total)} at {fmt_t(pk[0])}{held}")
    return "; ".join(parts), at_limit


def headroom(rec: RunRecord) -> str:
    """One line: peak GPU memory per GPU against its total, peak host RSS against the limit, any throttling."""
    parts = []
    gtext, _ = _gpu_peak_text(rec)
    if gtext:
        parts.append(gtext)
    elif not rec.gpu.get("available"):
        parts.append(f"GPU not recorded ({rec.gpu.get('reason') or 'unavailable'})")
    _, rss_peak = _rss_at_end(rec)
    limit = rec.cgroup.get("limit")
    lim_text = (
        f"of the {fmt_bytes(limit)} cgroup limit"
        if limit
        else f"of {fmt_bytes(rec.host.get('mem_total'))} host memory"
    )
    if rss_peak:
        parts.append(f"host RSS peaked at {fmt_bytes(rss_peak)} {lim_text}")
    else:  # the run ended before the first sample
        parts.append("host RSS not sampled (the run ended before the first sample)")
    th = sustained_throttling(rec.samples)
    parts.append(
        "throttling: " + ", ".join(f"GPU {t.gpu} {t.kind}" for t in th) if th else "no sustained throttling"
    )
    return "Headroom: " + "; ".join(parts) + "."


def verdict_of(rec: RunRecord, explained: Sequence[Any] = ()) -> RunVerdict:
    """The verdict for a finished record. `explained`: compat.explain diagnoses of its captured output."""
    ex = rec.exit
    who = _who(rec)
    exp = tuple(d.to_json() if hasattr(d, "to_json") else dict(d) for d in explained)[:3]
    cats = [d["category"] for d in exp]
    cg = rec.cgroup
    oom_delta = cg.get("oom_kill_delta") or 0
    kevents = rec.kernel_log.get("events") or []
    k_oom = [e for e in kevents if e.get("kind") == "oom_kill"]
    k_segv = [e for e in kevents if e.get("kind") == "segfault"]
    xids = _xids(rec)
    extra = _ecc(rec) + _leaks(rec) + _throttling(rec)
    sig = ex.signal if ex.status == "signaled" else None
    gone = ex.status == "vanished"
    end_t = rec.wall_s
    deciding: list[str] = []
    _, peak_rss = _rss_at_end(rec)
    limit = cg.get("limit")

    if ex.status == "running":  # the watch was interrupted: the process goes on, nothing to judge yet
        title = f"the watch was interrupted at {clock(rec, end_t)}; {who} was still running"
        f = Finding(
            "record.interrupted", "info", title, "The record covers the watch until then.", group="stack"
        )
        return RunVerdict("unknown", title, ("the watch ended before the process did",), (f, *extra), exp)
    if ex.status == "exited" and ex.code == 0 and not oom_delta and not xids:
        return RunVerdict(
            "ok",
            f"{who} finished successfully in {fmt_t(rec.wall_s or 0)}",
            (),
            tuple(extra),
            exp,
            headroom(rec),
        )

    # 1. Host OOM: the cgroup's oom_kill counter or a kernel line naming one of our pids is definitive.
    if oom_delta or k_oom:
        if oom_delta:
            deciding.append(
                f"the memory cgroup {cg.get('path')} counted {oom_delta} OOM kill(s) during the run "
                f"(oom_kill {cg.get('oom_kill_before')} → {cg.get('oom_kill_after')})"
            )
        for e in k_oom[:2]:
            deciding.append(f"kernel log: {e.get('text')}")
        when = k_oom[0].get("t") if k_oom and k_oom[0].get("t") is not None else end_t
        size = cg.get("peak") or peak_rss
        of = (
            f"of the {fmt_bytes(limit)} cgroup limit"
            if limit
            else f"of {fmt_bytes(rec.host.get('mem_total'))} host memory"
        )
        main_victim = sig == signal.SIGKILL or gone
        title = (
            f"killed by the OOM killer at {clock(rec, when)}: {who}'s memory was {fmt_bytes(size)} {of}"
            if main_victim
            else f"a process of {who} was killed by the OOM killer at {clock(rec, when)} (memory {fmt_bytes(size)} {of})"
        )
        if peak_rss is not None:
            deciding.append(f"host RSS of the process tree peaked at {fmt_bytes(peak_rss)}")
        f = Finding(
            "record.host_oom",
            "error",
            title,
            "Host (CPU) memory ran out and the kernel killed the process. " + "; ".join(deciding) + ".",
            (
                Fix(
                    "Lower the batch size or DataLoader workers, or ask for more memory (the cgroup or job limit)."
                ),
            ),
            {"oom_kill_delta": oom_delta, "limit": limit, "peak": size},
            group="resources",
        )
        return RunVerdict("host_oom", title, tuple(deciding), (f, *extra), exp)

    # 2. An Xid during the run is a hardware / driver fault.
    if xids:
        t, code, text = xids[0]
        deciding.append(text)
        title = f"GPU fault (Xid {code}) at {clock(rec, t)}"
        f = Finding(
            "record.xid",
            "error",
            title,
            f"The NVIDIA driver reported Xid {code} during the run: a GPU hardware or driver fault, not a bug "
            "in the training code. " + ("; ".join(f"Xid {c}" for _, c, _ in xids[1:4])),
            (
                Fix(
                    "Look up the Xid in NVIDIA's Xid catalogue; repeated Xids on one GPU mean draining the node "
                    "and a hardware check (nvidia-smi -q, field diagnostics)."
                ),
            ),
            {"xid": code},
            group="health",
        )
        return RunVerdict("hardware_xid", title, tuple(deciding), (f, *extra), exp)

    # 3. CUDA out of memory in the output, with the GPU at its limit.
    if "gpu_oom" in cats:
        gtext, at_limit = _gpu_peak_text(rec)
        deciding.append("the output shows a CUDA out-of-memory error")
        if gtext:
            deciding.append(gtext)
        title = "CUDA out of memory" + (" with the GPU's memory at its limit" if at_limit else "")
        if gtext and not at_limit:
            title += " before the GPU looked full (one big allocation or fragmentation)"
        if not rec.gpu.get("available"):
            deciding.append(f"GPU memory was not recorded ({rec.gpu.get('reason')})")
        f = Finding(
            "record.gpu_oom",
            "error",
            title,
            "; ".join(deciding) + ".",
            (
                Fix(
                    "Lower the batch size, use mixed precision or gradient checkpointing; with fragmentation, "
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."
                ),
            ),
            group="resources",
        )
        return RunVerdict("gpu_oom", title, tuple(deciding), (f, *extra), exp)

    # 4. Segfaults: the signal, the kernel's line, or the kernel's own fault report.
    if (
        sig in (signal.SIGSEGV, signal.SIGBUS)
        or k_segv
        or "segfault" in cats
        or (
            rec.fault_report
            and any("Segmentation fault" in ln or "Bus error" in ln for ln in rec.fault_report)
        )
    ):
        if sig is not None:
            deciding.append(
                f"{who} ended with {signal_name(sig)}" + (" (core dumped)" if ex.core_dumped else "")
            )
        for e in k_segv[:1]:
            deciding.append(f"kernel log: {e.get('text')}")
        if rec.fault_report:
            deciding.append("Python's fault handler: " + " | ".join(rec.fault_report[:4]))
        title = f"crashed with a segmentation fault at {clock(rec, end_t)}"
        if ex.core_file:
            deciding.append(f"core dump written: {ex.core_file}")
        f = Finding(
            "record.segfault",
            "error",
            title,
            "Native code (a framework, a CUDA library, a C extension) crashed. " + "; ".join(deciding) + ".",
            (
                Fix(
                    "Run the failing step under `python -X faulthandler` to see the Python frame; check that the "
                    "framework wheel matches the driver (compat doctor)."
                ),
            ),
            group="stack",
        )
        return RunVerdict("segfault", title, tuple(deciding), (f, *extra), exp)

    # 5. SIGKILL with no OOM evidence; a notebook kernel that vanished without its exit marker (written at every
    # normal exit) ended the same uncatchable way. Another watched process that vanished: see the end.
    if sig == signal.SIGKILL or (gone and not exp and rec.kind == "notebook"):
        how = "SIGKILL" if sig == signal.SIGKILL else "an uncatchable end (no exit report, no fault report)"
        deciding.append(f"{who} ended with {how} at {clock(rec, end_t)}")
        if cg.get("oom_kill_delta") is not None:
            deciding.append(
                f"no OOM kill in its memory cgroup ({cg.get('path')}: oom_kill unchanged at {cg.get('oom_kill_after')})"
            )
        if rec.kernel_log.get("readable"):
            deciding.append("no OOM-killer line naming its pids in the kernel log")
        else:
            deciding.append(f"the kernel log was not readable ({rec.kernel_log.get('reason') or 'not read'})")
        if limit and peak_rss is not None:
            deciding.append(f"host RSS peaked at {fmt_bytes(peak_rss)} of the {fmt_bytes(limit)} limit")
        title = (
            f"killed by something else (a scheduler, a person, a watchdog) with {how}, not by the OOM killer"
        )
        if sig != signal.SIGKILL:
            title = (
                f"{who} vanished without a trace at {clock(rec, end_t)}: killed by something else (a scheduler, a "
                "person, a watchdog) with SIGKILL or another uncatchable end, not by the OOM killer"
            )
        f = Finding(
            "record.killed",
            "error",
            title,
            "; ".join(deciding) + ".",
            (
                Fix(
                    "Check the scheduler's log (sacct, kubectl describe pod, the job's events) for a time or "
                    "preemption limit, and who sent the signal."
                ),
            ),
            group="resources",
        )
        return RunVerdict("killed", title, tuple(deciding), (f, *extra), exp)

    # 6. Other signals.
    if sig is not None:
        deciding.append(f"{who} ended with {signal_name(sig)}" + (" (core dumped)" if ex.core_dumped else ""))
        title = f"terminated by {signal_name(sig)} at {clock(rec, end_t)}"
        f = Finding("record.signal", "error", title, "; ".join(deciding) + ".", group="stack")
        return RunVerdict("signal", title, tuple(deciding), (f, *extra), exp)

    # 7. A plain failure: explain's reading of the output decides.
    if exp:
        top = exp[0]
        deciding.append(f"explain: {top['title']} ({top['category']}, confidence {top['confidence']})")
        deciding.extend(f"output: {ln}" for ln in top.get("evidence", [])[:2])
        how = f"exited with status {ex.code}" if ex.status == "exited" else "ended"
        title = f"{how}: {top['title']}"
        f = Finding(
            f"record.explain.{top['category']}",
            "error",
            title,
            top.get("explanation", ""),
            tuple(Fix.from_json(x) for x in top.get("fixes", [])),  # its kind kept: Python stays python
            group="stack",
        )
        return RunVerdict("error", title, tuple(deciding), (f, *extra), exp)
    mem_line = next((ln for ln in reversed(rec.output_tail) if _HOST_ALLOC.search(ln)), None)
    if mem_line is not None:
        deciding.append(f"output: {mem_line.strip()[:300]}")
        if peak_rss is not None:
            lim = f" of the {fmt_bytes(limit)} cgroup limit" if limit else ""
            deciding.append(f"host RSS of the process tree peaked at {fmt_bytes(peak_rss)}{lim}")
        title = "ran out of host memory: an allocation failed (no OOM kill; an address-space limit or overcommit refused it)"
        f = Finding(
            "record.host_alloc",
            "error",
            title,
            "; ".join(deciding) + ".",
            (
                Fix(
                    "Check `ulimit -v` and the job's memory request; lower the batch size or DataLoader workers."
                ),
            ),
            group="resources",
        )
        return RunVerdict("host_oom", title, tuple(deciding), (f, *extra), exp)
    if ex.status == "exited":
        deciding.append(
            f"exit status {ex.code}; nothing in the last {len(rec.output_tail)} output lines matched a known cause"
        )
        title = f"exited with status {ex.code}"
        f = Finding("record.exit", "error", title, "; ".join(deciding) + ".", group="stack")
        return RunVerdict("error", title, tuple(deciding), (f, *extra), exp)
    # A process that is not compat's child is usually reaped by its parent before compat can read its status:
    # without evidence of a failure (none above), it ended and that is all that is known.
    deciding.append(f"{who} was collected by its parent before its exit status could be read")
    if cg.get("oom_kill_delta") is not None:
        deciding.append(f"no OOM kill in its memory cgroup ({cg.get('path')})")
    k_ok = rec.kernel_log.get("readable")
    deciding.append("no kernel-log line about its pids" if k_ok else "the kernel log was not readable")
    if limit and peak_rss and peak_rss >= NEAR_LIMIT * limit and cg.get("oom_kill_delta") is None:
        deciding.append(
            f"its memory reached {fmt_bytes(peak_rss)} of the {fmt_bytes(limit)} limit: an OOM kill is possible"
        )
    title = (
        f"{who} ended at {clock(rec, end_t)}; its exit status is unknown and nothing recorded shows a failure"
    )
    f = Finding("record.ended", "info", title, "; ".join(deciding) + ".", group="stack")
    return RunVerdict("unknown", title, tuple(deciding), (f, *extra), exp)
