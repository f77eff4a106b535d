"""The terminal summary of a record: the verdict, its deciding evidence and sparklines of memory."""

from __future__ import annotations

from typing import Any

from compat.record.document import RunRecord
from compat.record.timeline import fmt_bytes, peak, series, sparkline

WIDTH = 40


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
    findings = v.get("findings", [])
    for f in findings if v.get("outcome") == "ok" else findings[1:]:  # else the first is the verdict itself
        lines.append(f"  {f['severity']}: {f['title']}")
    if v.get("headroom"):
        lines.append(f"  {v['headroom']}")
    for n in rec.notes[:3]:
        lines.append(f"  note: {n}")
    if report_dir:
        lines.append(f"  report: {report_dir}/report.html, {report_dir}/run.json")
    return "\n".join(lines) + "\n"
