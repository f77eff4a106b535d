"""Text rendering of diagnoses: the root cause first with its evidence and fixes, then the rest."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import IO, Any

from compat.explain.diagnosis import Diagnosis
from compat.findings import Fix
from compat.render import Style, use_color

WIDTH = 100
_HIDDEN_FACTS = {"cross_check"}


def _wrap(text: str, indent: str, hang: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _facts_line(facts: Mapping[str, Any]) -> str:
    return " · ".join(f"{k} {facts[k]}" for k in sorted(facts) if k not in _HIDDEN_FACTS)


def render(diags: Sequence[Diagnosis], source: str, lines_read: int, stream: IO[str] | None = None) -> str:
    st = Style(use_color(stream) if stream is not None else False)
    read = f"{lines_read:,} line{'s' if lines_read != 1 else ''} read"
    if not diags:
        return (
            "\n".join(
                [
                    f"compat explain: {st('no known failure signature', 'ok')} in {source} ({read}).",
                    "  The log may stop before the error, or the failure is not one compat knows yet.",
                    f"  Check the stack of the machine that failed: {st('$ compat doctor', 'bold')}",
                ]
            )
            + "\n"
        )
    root, rest = diags[0], diags[1:]
    out = [f"compat explain: {st('root cause', 'error')} found in {source} ({read})", ""]
    if root.suspected:  # issue 14: a bare death - ranked suspects, each with the command that confirms it
        out = [f"compat explain: {st('inconclusive', 'warning')} - suspects ranked in {source} ({read})", ""]
    out += _one(root, st, primary=True)
    if rest:
        out.append("")
        out.append(st("Also found (less likely, or consequences of the root cause):", "bold"))
        for d in rest:
            out.append("")
            out += _one(d, st, primary=False)
    return "\n".join(out) + "\n"


def _one(d: Diagnosis, st: Style, *, primary: bool) -> list[str]:
    mark = st("✗", "error") if primary else st("!", "warning")
    head = f"{mark} {st(d.title, 'bold') if primary else d.title}  {st(f'[{d.category} · confidence {d.confidence:.2f}]', 'dim')}"
    lines = [head if primary else "  " + head]
    ind = "    " if primary else "      "
    lines.append(f"{ind[:-2]}Evidence:")
    at = {e.text: e for e in d.evidence_at}
    for ev in d.evidence if primary else d.evidence[:2]:
        e = at.get(ev)
        if e is None or not e.line:
            lines.append(f"{ind}│ {ev}")
            continue
        for k, c in enumerate(e.before):
            lines.append(st(f"{ind}{e.line - len(e.before) + k:>6} │ {c}", "dim"))
        lines.append(f"{ind}{e.line:>6} │ {ev}")
        for k, c in enumerate(e.after):
            lines.append(st(f"{ind}{e.line + 1 + k:>6} │ {c}", "dim"))
    if d.confirm is not None and d.confirm.command:
        lines.append(f"{ind[:-2]}Confirm: {d.confirm.text}")
        lines.append(f"{ind}  {st('$ ' + d.confirm.command, 'bold')}")
    lines += _wrap(d.explanation, ind[:-2])
    fl = _facts_line(d.facts)
    if fl:
        lines += _wrap("Facts: " + fl, ind[:-2])
    cc = d.facts.get("cross_check")
    if cc:
        lines.append(f"{ind[:-2]}{st('Cross-check: ' + str(cc), 'dim')}")
    lines += fix_lines(d.fixes if primary else d.fixes[:2], ind[:-2], st)
    return lines


def shown_command(f: Fix) -> str:
    """A fix's command as it is shown: a shell command after "$ ", Python code or a config line as it is."""
    return ("$ " if f.kind == "shell" else "") + (f.command or "")


def fix_lines(fixes: Sequence[Fix], indent: str, st: Style | None = None) -> list[str]:
    """The "Fix:" block at `indent`: each fix's sentence, and under it its command (also for a run's summary
    and `compat explain --last`, so every view of a fix reads the same)."""
    if not fixes:
        return []
    st = st or Style(False)
    ind = indent + "  "
    lines = [f"{indent}Fix:"]
    for f in fixes:
        lines += _wrap(f"→ {f.text}", ind, "  ")
        if f.command:
            lines.append(f"{ind}  {st(shown_command(f), 'bold')}")
    return lines
