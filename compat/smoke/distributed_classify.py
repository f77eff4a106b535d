"""Classifying a `compat smoke --distributed` run: the launcher's verdict (every rank's outcome) becomes the smoke
result document plus "world_size", "backend" and "ranks"; a failure names a rank that died, a collective that timed
out, an NCCL error, or the root cause one rank hit (out of memory, a hardware fault ...)."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from compat.findings import Fix
from compat.smoke import causes, harness
from compat.smoke.result import SmokeResult
from compat.smoke.verdict import as_float, as_int  # the smoke documents' number readers

# Causes that one rank can hit by itself and that break the collective for all the others: when the first rank
# to fail shows one of these, it is the root cause; the other ranks' communication errors are symptoms.
COMM_CATEGORY = "nccl_distributed"
WEAK_ROOTS = ("segfault", COMM_CATEGORY)

_TIMEOUT_RE = re.compile(
    r"Timed out waiting|Watchdog caught collective operation timeout|collective operation "
    r"timeout|Socket Timeout|wait timeout after|DistStoreError: Timed out",
    re.IGNORECASE,
)
_COMM_RE = re.compile(
    r"\bgloo\b|\bNCCL\b|\bnccl\w*|ProcessGroup|c10d|Connection (?:closed|reset) by peer|"
    r"DistBackendError|DistNetworkError|DistStoreError",
    re.IGNORECASE,
)

DIST_FIXES = (
    Fix("Look at the first rank that failed: the others usually only lost their peer"),
    Fix(
        "Re-run with NCCL's diagnostics to see the failing transport and interface",
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET compat smoke --distributed",
    ),
    Fix("Test NCCL alone on this machine", "all_reduce_perf -b 8 -e 256M -f 2 -g <number of GPUs>"),
)


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _loss(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _first_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip() and not line.startswith((" ", "\t", "Traceback")):
            return line.strip()[:300]
    return ""


def _rank_text(raw: Mapping[str, Any]) -> str:
    err = _dict(_dict(raw.get("result")).get("error"))
    parts = [str(err.get(k) or "") for k in ("traceback", "text")]
    parts.append(harness.strip_markers(str(raw.get("output_tail") or "")))
    return "\n".join(p for p in parts if p)


def _rank_entry(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One rank as the result document shows it."""
    res = _dict(raw.get("result"))
    rc = as_int(raw.get("exit_code"))
    sig = as_int(raw.get("signal"))
    killed = raw.get("killed") if isinstance(raw.get("killed"), str) else None
    text = _rank_text(raw)
    if rc == 0 and res.get("status") == "passed":
        status = "passed"
    elif killed == "deadline":
        status = "timed_out"
    elif killed:
        status = "killed"
    elif sig is not None:
        status = "crashed"
    elif _TIMEOUT_RE.search(text):
        status = "timed_out"
    else:
        status = "failed"
    losses = [v if isinstance(v, (int, float, str)) else None for v in (res.get("losses") or [])]
    message = res.get("message") if isinstance(res.get("message"), str) else None
    if status == "crashed" and not message:
        message = f"died of {harness.signal_name(sig or 0)} during {raw.get('stage') or 'start-up'}"
    elif status == "killed" and not message:
        message = {
            "after_failure": "still running after another rank failed: killed",
            "terminated": "killed when the run was stopped",
        }.get(str(killed), f"killed ({killed})")
    elif status == "timed_out" and killed == "deadline" and not message:
        message = "still running at the deadline: killed"
    elif status == "failed" and not message:
        message = f"exited with code {rc} without a verdict"
    cause = None
    if status in ("failed", "crashed", "timed_out"):
        c = causes.cause_of(text)
        if c is None and sig is not None:
            c = causes.signal_cause(sig, None)
        cause = (
            c.category
            if c is not None
            else (COMM_CATEGORY if status == "timed_out" or _COMM_RE.search(text) else None)
        )
    entry: dict[str, Any] = {
        "rank": as_int(raw.get("rank")),
        "status": status,
        "pid": as_int(raw.get("pid")),
        "exit_code": rc,
        "signal": harness.signal_name(sig) if sig is not None else None,
        "killed": killed,
        "stage": raw.get("stage") if isinstance(raw.get("stage"), str) else None,
        "seconds": as_float(raw.get("seconds")),
        "device": res.get("device") if isinstance(res.get("device"), str) else None,
        "device_name": res.get("device_name") if isinstance(res.get("device_name"), str) else None,
        "steps": as_int(res.get("steps")) or len(losses),
        "losses": losses,
        "loss_first": as_float(losses[0]) if losses else None,
        "loss_last": as_float(losses[-1]) if losses else None,
        "samples_per_second": as_float(res.get("samples_per_second")),
        "peak_memory_bytes": as_int(res.get("peak_memory_bytes")),
        "allreduce": res.get("allreduce") if isinstance(res.get("allreduce"), dict) else None,
        "weights_in_sync": res.get("weights_in_sync")
        if isinstance(res.get("weights_in_sync"), dict)
        else None,
        "message": message,
        "cause": cause,
        "timings": {
            k: round(float(v), 4) for k, v in _dict(res.get("timings")).items() if as_float(v) is not None
        },
    }
    if status != "passed":
        entry["output_tail"] = "\n".join(
            harness.strip_markers(str(raw.get("output_tail") or "")).splitlines()[-20:]
        )
    return entry


def _comm_cause(title: str, evidence: Optional[str], extra: tuple[Fix, ...] = ()) -> causes.Cause:
    return causes.Cause(
        COMM_CATEGORY, title, evidence=evidence, fixes=DIST_FIXES + extra, source="distributed"
    )


def _names(ranks: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(str(r.get("rank")) for r in ranks)


def _explain_ranks(
    entries: list[dict[str, Any]], raw_ranks: Sequence[Mapping[str, Any]], order: Sequence[int]
) -> tuple[str, str, Optional[str], Optional[causes.Cause]]:
    """(status, message, signal name, cause) of a run where at least one rank did not pass."""
    by_rank = {e["rank"]: (e, raw) for e, raw in zip(entries, raw_ranks, strict=False)}
    bad = [e for e in entries if e["status"] != "passed"]
    root_rank = next((r for r in order if r in by_rank), None)
    if root_rank is None:  # none failed by itself: killed at the deadline (or stopped)
        stuck = [e for e in bad if e["status"] in ("timed_out", "killed")]
        stages = sorted({str(e["stage"]) for e in stuck})
        msg = (
            f"rank(s) {_names(stuck)} hung (during {', '.join(stages)}) and were killed at the deadline: "
            "a collective never completed"
        )
        return (
            "timed_out",
            msg,
            None,
            _comm_cause("The distributed run hung: a collective never completed", None),
        )
    root, root_raw = by_rank[root_rank]
    others = [e for e in bad if e["rank"] != root_rank]
    text = _rank_text(root_raw)
    own = causes.cause_of(text)
    sig = root["signal"]
    signum = as_int(root_raw.get("signal"))
    if own is None and signum is not None:
        own = causes.signal_cause(signum, None)
    after = ""
    if others:
        after = "; then " + "; ".join(f"rank {e['rank']}: {e['message']}" for e in others[:4])
    any_timeout = [e for e in entries if e["status"] == "timed_out"]
    if sig is not None:
        status = "crashed"
        msg = f"rank {root_rank} died of {sig} during {root['stage'] or 'start-up'}{after}"
    elif root["status"] == "timed_out" or any_timeout:
        status = "timed_out"
        waiting = [e for e in others if e["status"] in ("killed", "timed_out")]
        msg = (
            f"rank {root_rank}'s collective timed out during {root['stage'] or 'start-up'} "
            f"({_first_line(text) or 'no error text'})"
            + (
                f": rank(s) {_names(waiting)} never joined it (still in "
                f"{', '.join(sorted({str(e['stage']) for e in waiting}))}) and were killed"
                if waiting
                else ""
            )
        )
    else:
        status = "failed"
        msg = f"rank {root_rank} failed during {root['stage'] or 'start-up'}: {root['message']}{after}"
    if own is not None and own.category not in WEAK_ROOTS:
        return (
            status,
            msg,
            sig,
            own,
        )  # e.g. one rank ran out of memory: that, not the collective, is the cause
    if own is not None and own.category == COMM_CATEGORY:
        return status, msg, sig, own
    all_text = "\n".join(_rank_text(raw) for raw in raw_ranks)
    found = causes.cause_of(all_text)
    if found is not None and found.category == COMM_CATEGORY:
        return status, msg, sig, found
    if sig is not None:
        extra = own.fixes if own is not None else causes.own_fixes("segfault")
        return (
            status,
            msg,
            sig,
            _comm_cause(
                f"Rank {root_rank} died ({sig}) and the collective failed", _first_line(text) or None, extra
            ),
        )
    if status == "timed_out":
        return (
            status,
            msg,
            sig,
            _comm_cause("A collective operation timed out between ranks", _first_line(text) or None),
        )
    if _COMM_RE.search(text) or any(e["status"] in ("crashed", "killed") for e in others):
        return (
            status,
            msg,
            sig,
            _comm_cause("Distributed communication failed between ranks", _first_line(text) or None),
        )
    return status, msg, sig, own


def classify(
    run: harness.ChildRun, *, timeout: float, version: Optional[str], base: Mapping[str, Any], t_begin: float
) -> SmokeResult:
    """Pure but for the clock: what the launcher's run means."""
    doc = run.result if isinstance(run.result, dict) and run.result.get("role") == "launcher" else {}
    details: dict[str, Any] = dict(base)
    raw_ranks = [r for r in (doc.get("ranks") or []) if isinstance(r, dict)]
    entries = [_rank_entry(r) for r in raw_ranks]
    details["world_size"] = as_int(doc.get("world_size"))
    details["backend"] = doc.get("backend") if isinstance(doc.get("backend"), str) else None
    details["ranks"] = entries
    details["first_failed_rank"] = as_int(doc.get("first_failed_rank"))
    details["stage"] = doc.get("stage") if isinstance(doc.get("stage"), str) else run.stage
    details["exit_code"] = run.returncode
    if run.leftovers:
        details["leftover_processes"] = run.leftovers
    if run.oom is not None:
        details["oom_kill_confirmed"] = run.oom.confirmed
        details["oom_evidence"] = run.oom.evidence
    timings = {k: round(v, 4) for k, v in _dict(doc.get("timings")).items() if as_float(v) is not None}
    # The slowest rank's stages (the run waits for it): import, init (rendezvous), allreduce, setup, steps, verify.
    for key in ("import", "init", "allreduce", "setup", "first_step", "steady_steps", "verify"):
        vals = [e["timings"][key] for e in entries if key in e["timings"]]
        if vals:
            timings[key if key != "setup" else "model_setup"] = max(vals)
    per_rank_setup = [
        sum(e["timings"].get(k, 0.0) for k in ("init", "allreduce", "setup"))
        for e in entries
        if "init" in e["timings"]
    ]
    if per_rank_setup:
        timings["setup"] = round(max(per_rank_setup), 4)
    total = time.monotonic() - t_begin
    timings["total"] = round(total, 4)
    details["timings"] = timings

    verdict: str
    message: str
    sig: Optional[str] = None
    cause: Optional[causes.Cause] = None
    fixes: tuple[Fix, ...] = ()
    stderr = harness.strip_markers(run.stderr)
    if run.start_error is not None:
        verdict, message = "failed", f"the distributed smoke launcher could not start: {run.start_error}"
    elif run.timed_out:
        verdict = "timed_out"
        message = (
            f"no verdict within {timeout:g} s: the launcher and its ranks were killed (SIGTERM, then SIGKILL)"
            f" during {details['stage'] or 'start-up'}"
        )
        cause = _comm_cause("The distributed run hung", None)
        fixes = (
            Fix(
                "If the ranks are only slow to start (first CUDA use, NCCL initialisation), allow more time",
                f"compat smoke --distributed --timeout {max(600, int(timeout * 3))}",
            ),
        )
    elif not doc:
        verdict = "failed" if run.signal is None else "crashed"
        sig = harness.signal_name(run.signal) if run.signal is not None else None
        message = (
            f"the launcher {'died of ' + sig if sig else f'exited with code {run.returncode}'} without a "
            f"verdict ({run.result_problem})"
        )
        cause = causes.cause_of(stderr)
        details["stderr_tail"] = "\n".join(stderr.splitlines()[-30:])
    elif (
        doc.get("status") == "passed"
        and run.returncode == 0
        and entries
        and all(e["status"] == "passed" for e in entries)
    ):
        verdict, message = "passed", ""
        first = entries[0]
        losses = [_loss(v) for v in first["losses"]]
        if len(losses) < 2 or not all(math.isfinite(v) for v in losses) or not losses[-1] < losses[0]:
            verdict, message = "failed", "the ranks reported success but rank 0's loss did not decrease"
    elif not entries:  # the launcher failed before starting ranks: no GPU, no NCCL, torch broken
        verdict = "failed"
        err = _dict(doc.get("error"))
        message = str(doc.get("message") or "the launcher failed before starting any rank")
        problem = doc.get("plan_problem")
        if problem == "no_gpu":
            cause = causes.Cause(
                "no_gpu_visible",
                "No GPU is visible to PyTorch, so NCCL has nothing to run on",
                evidence=message,
                fixes=causes.own_fixes("no_gpu_visible"),
                source="distributed",
            )
        elif problem == "no_nccl":
            cause = _comm_cause(
                "This PyTorch build has no NCCL backend",
                message,
                (Fix("Install a CUDA build of PyTorch for Linux (they ship NCCL)", "compat suggest"),),
            )
        else:
            cause = causes.cause_of("\n".join([message, str(err.get("traceback") or ""), stderr]))
        details["stderr_tail"] = "\n".join(stderr.splitlines()[-30:])
    else:
        order = [r for r in (doc.get("failure_order") or []) if isinstance(r, int)]
        verdict, message, sig, cause = _explain_ranks(entries, raw_ranks, order)

    if cause is not None:
        details["diagnosis"] = cause.to_json()
        fixes = cause.fixes + fixes
    rank0 = entries[0] if entries else {}
    rates = [e["samples_per_second"] for e in entries if e.get("samples_per_second") is not None]
    peaks = [e["peak_memory_bytes"] for e in entries if e.get("peak_memory_bytes") is not None]
    device = rank0.get("device") or (doc.get("device") if isinstance(doc.get("device"), str) else None)
    version_seen = next(
        (
            str(_dict(r.get("result")).get("framework_version"))
            for r in raw_ranks
            if _dict(r.get("result")).get("framework_version")
        ),
        None,
    )
    version_seen = (
        version_seen
        or (doc.get("framework_version") if isinstance(doc.get("framework_version"), str) else None)
        or version
    )
    if verdict == "passed":
        message = (
            f"torch {version_seen or ''} trained a tiny CNN under DistributedDataParallel on "
            f"{len(entries)} ranks ({details['backend']}, {device}) for {rank0.get('steps')} steps: "
            f"all-reduce correct, weights identical on every rank; rank 0 loss "
            f"{rank0.get('loss_first'):.4g} → {rank0.get('loss_last'):.4g}"
        ).replace("  ", " ")
    details["losses"] = rank0.get("losses", [])
    if doc.get("status") == "passed":
        details["peak_memory_kind"] = "gpu_max_allocated" if device == "cuda" else "host_peak_rss"
    cudnn = _dict(raw_ranks[0].get("result")).get("cudnn_used") if raw_ranks else None
    return SmokeResult(
        verdict=verdict,
        framework="torch",
        framework_version=version_seen,
        device=device,
        device_name=rank0.get("device_name"),
        steps=int(rank0.get("steps") or 0),
        loss_first=rank0.get("loss_first"),
        loss_last=rank0.get("loss_last"),
        seconds=total,
        samples_per_second=sum(rates) if rates and len(rates) == len(entries) else None,
        peak_memory_bytes=max(peaks) if peaks else None,
        cudnn_used=cudnn
        if isinstance(cudnn, bool) and device == "cuda"
        else (False if device == "cpu" else None),
        signal=sig,
        cause=cause.category if cause is not None else None,
        message=message,
        fixes=fixes,
        details=details,
    )
