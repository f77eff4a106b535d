"""The terminal summary of a record: the verdict, its deciding evidence and sparklines of memory."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from compat.explain.render import fix_lines
from compat.findings import Fix
from compat.record.document import RunRecord
from compat.record.timeline import fmt_bytes, peak, series, sparkline

WIDTH = 40


def parse_fixes(rows: Any) -> list[Fix]:
    out: list[Fix] = []
    for x in rows if isinstance(rows, list) else []:
        try:
            if isinstance(x, Mapping) and x.get("text"):
                out.append(Fix.from_json(x))
        except (TypeError, ValueError):  # a record written by another version: show what reads
            continue
    return out


PLACEHOLDER = "python train.py"
"""How explain's catalogue writes "your command" (CUDA_LAUNCH_BLOCKING=1 python train.py)."""


def _first(rows: Any) -> Mapping[str, Any]:
    return rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], Mapping) else {}


def verdict_fixes(v: Mapping[str, Any]) -> list[Fix]:
    """What to do about the end of a run: the fixes of the verdict's own finding; when it has none (a signal,
    a bare exit status), those of explain's reading of the output, which may still name the cause."""
    if v.get("outcome") == "ok":
        return []
    return parse_fixes(_first(v.get("findings")).get("fixes")) or parse_fixes(
        _first(v.get("explain")).get("fixes")
    )


def run_fixes(rec: RunRecord) -> list[Fix]:
    """The verdict's fixes, with the recorded command in place of the catalogue's `python train.py` (a run of
    `torchrun train.py --cfg a.yaml` is told `CUDA_LAUNCH_BLOCKING=1 torchrun train.py --cfg a.yaml`)."""
    fixes = verdict_fixes(rec.verdict or {})
    if rec.kind != "run" or not rec.command:
        return fixes
    own = shlex.join(rec.command)
    return [
        Fix(f.text, f.command.replace(PLACEHOLDER, own), f.kind, f.changes)
        if f.kind == "shell" and f.command and PLACEHOLDER in f.command
        else f
        for f in fixes
    ]


def other_findings(v: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The findings besides the verdict's own (on a run that ended well, all of them)."""
    findings = list(v.get("findings") or [])
    return findings if v.get("outcome") == "ok" else findings[1:]  # else the first is the verdict itself


def _line(label: str, pts: list[tuple[float, float]], top: Any) -> str | None:
    if not pts:
        return None
    pk = peak(pts)
    assert pk is not None
    tail = f"peak {fmt_bytes(pk[1])}" + (f" of {fmt_bytes(top)}" if isinstance(top, int) else "")
    return f"  {label:<14} {sparkline([v for _, v in pts], WIDTH)}  {tail}"


def summary(rec: RunRecord, report_dir: str | None = None) -> str:
    """The summary, its text from the run (output lines, notes, reasons) without control codes: compat's stream
    filter keeps compat's own colour codes, and the run's copies of them must not pass as compat's."""
    from compat._text import sanitize

    return sanitize(_summary(rec, report_dir))


def _summary(rec: RunRecord, report_dir: str | None = None) -> str:
    v = rec.verdict or {}
    head = {"run": "compat run", "watch": "compat watch", "notebook": "compat"}.get(rec.kind, "compat")
    lines = [f"{head}: {v.get('title', 'no verdict')}"]
    for d in v.get("deciding", [])[:6]:
        lines.append(f"  - {d}")
    limit = rec.cgroup.get("limit") or rec.host.get("mem_total")
    for row in (
        _line("host RSS", series(rec.samples, "rss"), limit),
        _line("cgroup memory", series(rec.samples, "cgroup"), rec.cgroup.get("limit")),
    ):
        if row:
            lines.append(row)
    gpus = rec.gpu.get("gpus") or []
    for g in gpus:
        row = _line(
            f"GPU {g['index']} memory", series(rec.samples, "used", int(g["index"])), g.get("mem_total")
        )
        if row:
            lines.append(row)
    if not rec.gpu.get("available"):
        lines.append(
            f"  GPU: not available ({rec.gpu.get('reason') or 'unknown reason'}); host evidence only"
        )
    if not rec.kernel_log.get("readable"):
        lines.append(f"  kernel log: {rec.kernel_log.get('reason') or 'not read'}")
    for f in other_findings(v):
        lines.append(f"  {f['severity']}: {f['title']}")
        lines += fix_lines(parse_fixes(f.get("fixes"))[:2], "    ")
    if v.get("headroom"):
        lines.append(f"  {v['headroom']}")
    for n in rec.notes[:3]:
        lines.append(f"  note: {n}")
    lines += fix_lines(run_fixes(rec), "  ")
    if report_dir:
        lines.append(f"  report: {report_dir}/report.html, {report_dir}/run.json")
    return "\n".join(lines) + "\n"
