"""The smoke job's verdict: the child's result file, exit status and output become the SmokeResult (passed,
failed with its cause and fixes, timed out, killed ...), with the timings of every stage."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from compat.findings import Fix
from compat.smoke import causes, harness
from compat.smoke.result import SmokeOptions, SmokeResult

MISMATCH_FIXES = (
    Fix("Check the GPU's memory for ECC errors and retired pages", "nvidia-smi -q -d ECC,PAGE_RETIREMENT"),
    Fix("Run NVIDIA's GPU diagnostics", "dcgmi diag -r 2"),
    Fix("Look for Xid errors in the kernel log", "dmesg | grep -i xid"),
)


def as_float(v: Any) -> Optional[float]:
    """A finite number from a smoke document as a float; None for anything else (bools included)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def as_int(v: Any) -> Optional[int]:
    """A finite number from a smoke document as an int; None for anything else (bools included)."""
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _loss_value(v: Any) -> float:
    """A loss as the child wrote it: a number, or "nan"/"inf" for the values JSON cannot hold."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return math.nan


def _printable(line: str) -> str:
    """No control characters: a junk-writing child must not drive the user's terminal (escape sequences)."""
    return "".join(ch if ch.isprintable() or ch == "\t" else "\ufffd" for ch in line)


def _tail(text: str, lines: int = 30) -> str:
    kept = harness.strip_markers(text).rstrip().splitlines()
    return "\n".join(_printable(line)[:1000] for line in kept[-lines:])


def _timings(
    run: harness.ChildRun, child: Mapping[str, Any], child_end: Any, total: float
) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in (
        "child_start",
        "import",
        "device",
        "setup",
        "first_step",
        "steady_steps",
        "compare",
        "find_max_batch",
    ):
        v = as_float(child.get(key))
        if v is not None:
            out[key] = v
    end = as_float(child_end)
    if end is not None:
        out["child_exit"] = max(0.0, run.t_exit - end)
    out["total"] = total
    out["overhead"] = max(0.0, total - sum(v for k, v in out.items() if k not in ("total", "child_exit")))
    return {k: round(v, 4) for k, v in out.items()}


def classify(
    run: harness.ChildRun,
    *,
    options: SmokeOptions,
    framework: str,
    version: Optional[str],
    base: Mapping[str, Any],
    t_begin: float,
) -> SmokeResult:
    """Pure but for the clock: what the child run means."""
    r: dict[str, Any] = run.result if isinstance(run.result, dict) else {}
    child_status = r.get("status")
    if child_status not in ("passed", "failed", "running"):
        r, child_status = {}, None
    details: dict[str, Any] = dict(base)
    losses = _list(r.get("losses"))
    loss_values = [_loss_value(v) for v in losses]
    details["losses"] = [v if isinstance(v, (int, float, str)) else None for v in losses]
    for key in ("amp", "cudnn_version", "compute_capability", "cuda_build", "keras_version"):
        if r.get(key) is not None:
            details[key] = r[key]
    details["stage"] = run.stage
    if isinstance(r.get("compare"), dict):
        details["compare"] = r["compare"]
    max_batch = None
    if isinstance(r.get("max_batch"), dict):
        mb = r["max_batch"]
        max_batch = as_int(mb.get("max_batch"))
        details["memory_per_sample_bytes"] = as_int(mb.get("bytes_per_sample"))
        details["max_batch_search"] = {"stopped": mb.get("stopped"), "tried": mb.get("tried")}
    if options.find_max_batch and max_batch is None and r.get("device") == "cpu" and child_status is not None:
        details["max_batch_note"] = "--find-max-batch applies to GPUs only: not run on the CPU"
    if run.leftovers:
        details["leftover_processes"] = run.leftovers
    if run.oom is not None:
        details["oom_kill_confirmed"] = run.oom.confirmed
        details["oom_evidence"] = run.oom.evidence
    details["child_exit_code"] = run.returncode
    total = time.monotonic() - t_begin
    details["timings"] = _timings(run, _dict(r.get("timings")), r.get("child_end_time"), total)

    stage = run.stage or "start-up"
    error = _dict(r.get("error"))
    error_text = str(error.get("traceback") or error.get("text") or "")  # the traceback ends with the text
    stderr = harness.strip_markers(run.stderr)
    verdict: str
    message: str
    sig: Optional[str] = None
    cause: Optional[causes.Cause] = None
    fixes: tuple[Fix, ...] = ()

    if run.start_error is not None:
        verdict, message = "failed", f"the smoke child could not start: {run.start_error}"
    elif run.timed_out:
        verdict = "timed_out"
        message = (
            f"no verdict within {options.timeout:g} s: the child hung during {stage}; its process group was "
            "killed (SIGTERM, then SIGKILL)"
        )
        cause = causes.cause_of(error_text + "\n" + stderr)
        fixes = (
            Fix(
                "If the GPU or the framework is only slow to start (first CUDA use, kernel compilation), "
                "allow more time",
                f"compat smoke --timeout {max(600, int(options.timeout * 3))}",
            ),
        )
    elif run.signal is not None:
        verdict = "crashed"
        sig = harness.signal_name(run.signal)
        confirmed = run.oom.confirmed if run.oom is not None else None
        if sig == "SIGKILL":
            cause = causes.signal_cause(run.signal, confirmed) or causes.cause_of(error_text + "\n" + stderr)
            why = {
                True: "the kernel's OOM killer (" + (run.oom.evidence if run.oom else "") + ")",
                False: "not the OOM killer as far as the counters show ("
                + (run.oom.evidence if run.oom else "")
                + "): another process, a supervisor or a container limit",
                None: "possibly the kernel's OOM killer, which could not be confirmed ("
                + (run.oom.evidence if run.oom else "")
                + ")",
            }[confirmed]
            message = f"the smoke child was killed (SIGKILL) during {stage}: {why}"
        else:
            cause = causes.cause_of(error_text + "\n" + stderr) or causes.signal_cause(run.signal, None)
            message = f"the smoke child died of {sig} during {stage}"
    elif child_status is None:
        verdict = "failed"
        if run.returncode == 0:
            message = f"garbage output: the child exited 0 but {run.result_problem or 'wrote no verdict'}"
        else:
            message = (
                f"the child exited with code {run.returncode} during {stage} before writing a verdict"
                f" ({run.result_problem})"
            )
            cause = causes.cause_of(stderr)
        details["stdout_tail"] = _tail(run.stdout, 10)
    elif child_status == "failed":
        verdict = "failed"
        message = str(r.get("message") or "the training step failed")
        if error_text:
            cause = causes.cause_of(error_text + "\n" + stderr)
        if _dict(r.get("compare")).get("match") is False:
            fixes = MISMATCH_FIXES
    elif child_status == "running":
        verdict = "failed"
        message = f"the child exited with code {run.returncode} during {stage} without a verdict"
        cause = causes.cause_of(stderr)
    elif run.returncode != 0:
        verdict = "failed"
        message = f"the child reported success but exited with code {run.returncode}"
    else:
        verdict, message = "passed", ""
        ok, why = _losses_ok(loss_values)
        if not ok:  # the parent checks the child's claim too
            verdict, message = "failed", why

    if verdict == "passed":
        device = r.get("device")
        a, b = loss_values[0], loss_values[-1]
        message = (
            f"{framework} {r.get('framework_version') or version or ''} trained a tiny CNN for "
            f"{len(loss_values)} steps on {device}: loss {a:.4g} → {b:.4g}"
        ).replace("  ", " ")
    else:
        details["stderr_tail"] = _tail(run.stderr)
    if cause is not None:
        details["diagnosis"] = cause.to_json()
        fixes = cause.fixes + fixes
    if run.notes:
        details["notes"] = list(run.notes)
        flood = [n for n in run.notes if "output passed" in n]
        if flood and verdict != "passed":  # say why it was killed, in the text too (issue 19, item 11)
            message = f"{message}; {flood[0]}"

    peak = as_int(r.get("peak_memory_bytes"))
    if peak is not None:
        details["peak_memory_kind"] = r.get("peak_memory_kind")
    cudnn = r.get("cudnn_used") if isinstance(r.get("cudnn_used"), bool) and r.get("device") else None
    return SmokeResult(
        verdict=verdict,
        framework=framework,
        framework_version=_str(r.get("framework_version")) or version,
        device=_str(r.get("device")),
        device_name=_str(r.get("device_name")),
        steps=as_int(r.get("steps")) or len(loss_values),
        loss_first=as_float(r.get("loss_first")) if loss_values else None,
        loss_last=as_float(r.get("loss_last")) if loss_values else None,
        seconds=total,
        samples_per_second=as_float(r.get("samples_per_second")),
        peak_memory_bytes=peak,
        cudnn_used=cudnn,
        max_batch=max_batch,
        signal=sig,
        cause=cause.category if cause is not None else None,
        message=message,
        fixes=fixes,
        details=details,
    )


def _losses_ok(losses: Sequence[float]) -> tuple[bool, str]:
    if len(losses) < 2:
        return False, "the child reported success but fewer than two losses"
    if not all(math.isfinite(v) for v in losses):
        return False, "the loss was not finite"
    if not losses[-1] < losses[0]:
        return False, f"the loss did not decrease ({losses[0]:.6g} → {losses[-1]:.6g})"
    return True, ""
