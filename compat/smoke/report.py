"""A smoke result as findings (group "smoke", for the doctor's report) and as terminal text (`compat smoke`)."""

from __future__ import annotations

import sys
from typing import IO, Any, Optional

from compat.findings import Finding
from compat.smoke.result import SmokeResult

_STAGE_LABELS = (
    ("child_start", "child start"),
    ("import", "import"),
    ("device", "device"),
    ("setup", "setup"),
    ("first_step", "first step"),
    ("steady_steps", "steady steps"),
    ("compare", "CPU comparison"),
    ("find_max_batch", "max-batch search"),
    ("child_exit", "child exit"),
    ("overhead", "overhead"),
)


def _mib(n: Optional[int]) -> str:
    if n is None:
        return "?"
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 1024:.0f} KiB"


def _facts(result: SmokeResult, *keys: str) -> dict[str, Any]:
    doc = result.to_json()
    return {k: doc[k] for k in keys if doc.get(k) is not None}


def summary(result: SmokeResult) -> str:
    """One sentence: losses, throughput, memory, cuDNN, precision."""
    parts = []
    if result.loss_first is not None and result.loss_last is not None:
        parts.append(f"loss {result.loss_first:.4g} → {result.loss_last:.4g} over {result.steps} steps")
    if result.samples_per_second is not None:
        parts.append(f"{result.samples_per_second:,.0f} samples/s")
    if result.peak_memory_bytes is not None:
        kind = result.details.get("peak_memory_kind")
        where = {
            "host_peak_rss": " (host, peak RSS)",
            "gpu_max_allocated": " (GPU)",
            "gpu_peak": " (GPU)",
        }.get(str(kind), "")
        parts.append(f"peak memory {_mib(result.peak_memory_bytes)}{where}")
    if result.cudnn_used is not None:
        parts.append("cuDNN used" if result.cudnn_used else "cuDNN not used")
    amp = result.details.get("amp")
    if amp:
        parts.append(f"mixed precision {amp}")
    compare = result.details.get("compare")
    if isinstance(compare, dict) and compare.get("match") is True:
        parts.append(f"forward pass matches the CPU (max difference {compare.get('max_abs_diff'):.2g})")
    return "; ".join(parts)


def smoke_findings(result: SmokeResult) -> list[Finding]:
    """The doctor's "smoke" group. Ids: smoke.passed, smoke.failed, smoke.crashed, smoke.timed_out, smoke.skipped,
    smoke.not_installed, smoke.cpu_only, smoke.max_batch."""
    what = " ".join(x for x in (result.framework, result.framework_version) if x) or "the framework"
    where = result.device_name or result.device or "?"
    diag = result.details.get("diagnosis")
    cause_title = diag.get("title") if isinstance(diag, dict) else None
    facts = _facts(
        result,
        "status",
        "framework",
        "framework_version",
        "device",
        "device_name",
        "cause",
        "signal",
        "loss_first",
        "loss_last",
        "samples_per_second",
        "peak_memory_bytes",
        "cudnn_used",
        "max_batch",
    )
    stage = result.details.get("stage")
    if stage:
        facts["stage"] = stage
    out: list[Finding] = []
    if result.verdict == "passed":
        out.append(
            Finding(
                "smoke.passed",
                "info",
                f"Smoke training passed: {what} on {result.device} ({where})",
                summary(result) + ".",
                facts=facts,
                group="smoke",
            )
        )
        if result.device == "cpu" and result.details.get("requested_device", "auto") == "auto":
            out.append(
                Finding(
                    "smoke.cpu_only",
                    "info",
                    f"Smoke training ran on the CPU: {what} sees no GPU",
                    "With --device auto the job uses the GPU when the framework sees one; it saw none. "
                    "Use --device cuda to make that a failure.",
                    facts=facts,
                    group="smoke",
                )
            )
        if result.max_batch is not None:
            per = result.details.get("memory_per_sample_bytes")
            search = result.details.get("max_batch_search") or {}
            stopped = {
                "out_of_memory": "the next doubling ran out of memory",
                "cap": "the cap was reached",
                "limit": "the search limit was reached",
            }.get(str(search.get("stopped")), "")
            out.append(
                Finding(
                    "smoke.max_batch",
                    "info",
                    f"Largest batch that fit: {result.max_batch}"
                    + (f" (about {_mib(per)} per sample)" if per else ""),
                    f"Doubling the batch size of the tiny CNN from {result.details.get('batch_size')}: "
                    f"{stopped}.",
                    facts=facts,
                    group="smoke",
                )
            )
        elif result.details.get("max_batch_note"):
            out.append(
                Finding(
                    "smoke.max_batch",
                    "info",
                    "Max-batch search not run",
                    str(result.details["max_batch_note"]) + ".",
                    facts=facts,
                    group="smoke",
                )
            )
        return out
    if result.verdict == "skipped":
        explicit = result.exit_code != 0
        out.append(
            Finding(
                "smoke.not_installed" if explicit else "smoke.skipped",
                "error" if explicit else "info",
                f"{result.framework} is not installed" if explicit else "Smoke training skipped",
                result.message,
                fixes=result.fixes,
                facts=facts,
                group="smoke",
            )
        )
        return out
    title = {
        "failed": "Smoke training failed",
        "crashed": f"Smoke training crashed ({result.signal})",
        "timed_out": "Smoke training timed out",
    }[result.verdict]
    if cause_title:
        title += f": {cause_title}"
    message = result.message
    if isinstance(diag, dict) and diag.get("evidence"):
        evidence = str(diag["evidence"]).strip().splitlines()[0].strip()
        if evidence and evidence[:80] not in message:
            message += f". Evidence: {evidence[:300]}"
    out.append(
        Finding(
            f"smoke.{result.verdict}", "error", title, message, fixes=result.fixes, facts=facts, group="smoke"
        )
    )
    return out


def render_text(result: SmokeResult, stream: Optional[IO[str]] = None) -> str:
    """`compat smoke` without --json."""
    from compat.render import Style, render_finding, use_color

    out = stream or sys.stdout
    st = Style(use_color(out))
    label = result.verdict.upper().replace("_", " ")
    kind = {"passed": "ok", "skipped": "warning" if result.exit_code else "dim"}.get(result.verdict, "error")
    what = " ".join(x for x in (result.framework, result.framework_version) if x)
    where = f"{result.device} ({result.device_name})" if result.device_name else (result.device or "")
    head = f"compat smoke: {st(label, kind)}"
    if what:
        head += f"  {what}" + (f" on {where}" if where else "")
    lines = [head]
    line = summary(result)
    if line:
        lines.append(f"  {line}")
    timings = result.details.get("timings") or {}
    if timings:
        parts = [f"{name} {timings[key]:.2f} s" for key, name in _STAGE_LABELS if key in timings]
        lines.append(st(f"  time to verdict {result.seconds:.1f} s: " + " · ".join(parts), "dim"))
    for f in smoke_findings(result):
        if f.id == "smoke.passed":
            continue
        lines.append("")
        lines.extend(render_finding(f, st))
    tail = result.details.get("stderr_tail")
    if result.verdict not in ("passed", "skipped") and tail:
        lines.append("")
        lines.append(st("  last lines the child wrote on stderr:", "dim"))
        from compat._text import sanitize

        lines.extend(st("    " + sanitize(t), "dim") for t in str(tail).splitlines()[-12:])
    return "\n".join(lines) + "\n"
