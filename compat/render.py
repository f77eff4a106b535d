"""Renderers: a report as terminal text (grouped, coloured on a TTY) or as one JSON document."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from compat._text import sanitize
from compat.findings import Finding, Report

GROUPS = (
    ("driver", "Driver & GPUs"),
    ("cuda", "CUDA & cuDNN"),
    ("frameworks", "Frameworks"),
    ("resources", "Resources"),
    ("health", "Health"),
    ("environment", "Environment"),
    ("smoke", "Smoke training"),
    ("dockerfile", "Dockerfile"),
    ("stack", "Stack"),
)
_MARK = {"error": "✗", "warning": "!", "info": "i"}
_COLOR = {"error": "31", "warning": "33", "info": "36", "ok": "32", "dim": "2", "bold": "1"}


COLOR_MODES = ("auto", "always", "never")
COLOR_MODE = "auto"
"""Set by `--color` (compat.cli): always / never win over the environment; auto follows it."""


def use_color(stream: IO[str], environ: Mapping[str, str] | None = None, mode: str | None = None) -> bool:
    """Colour or not, in this order: `--color always|never`; NO_COLOR set and non-empty (no-color.org) turns it
    off; FORCE_COLOR set and non-empty (force-color.org) turns it on; TERM=dumb off; else only on a terminal."""
    env = os.environ if environ is None else environ
    m = COLOR_MODE if mode is None else mode
    if m == "always":
        return True
    if m == "never":
        return False
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except (ValueError, OSError):
        return False


class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, kind: str) -> str:
        if not self.color:
            return text
        return f"\x1b[{_COLOR[kind]}m{text}\x1b[0m"


def dumps(doc: Mapping[str, Any]) -> str:
    """The one JSON form every --json output uses: deterministic key order, UTF-8 kept."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


def _fact_line(facts: Mapping[str, Any]) -> str:
    parts = []
    for name in sorted(facts):
        if name == "gpus":
            gpus = facts[name]
            if gpus is None:
                continue
            if not gpus:
                parts.append("gpus none")
            for g in gpus:
                origin = (
                    "from the matrix" if g.get("cc_source") == "matrix" and g.get("cc") else g.get("source")
                )
                name = f"gpu {g['name']}" if g.get("name") else "gpu"  # --cc alone: a GPU known by that
                parts.append(f"{name} (cc {g.get('cc') or 'unknown'}, {origin})")
            continue
        f = facts[name]
        if isinstance(f, dict) and "raw" in f:
            parts.append(f"{name} {f['raw']} ({f.get('source')})")
    return " · ".join(parts)


def render_finding(f: Finding, st: Style) -> list[str]:
    loc = f" (line {f.line})" if f.line is not None else ""
    lines = [
        f"  {st(_MARK[f.severity] + ' ' + f.severity, f.severity)}  {f.title}{loc}  {st('[' + f.id + ']', 'dim')}"
    ]
    lines.append(f"      {f.message}")
    for fix in f.fixes:
        lines.append(f"      → {fix.text}")
        if fix.command:
            lines.append(f"        {st(('$ ' if fix.kind == 'shell' else '') + fix.command, 'bold')}")
    return lines


def _safe(f: Finding) -> Finding:
    """The finding with every string from outside shown, never sent, as control sequences: a tool's output that
    carries an SGR such as ESC[31m would otherwise pass the stream filter, which lets compat's own colours through."""
    from dataclasses import replace

    return replace(
        f,
        title=sanitize(f.title),
        message=sanitize(f.message),
        fixes=tuple(
            replace(x, text=sanitize(x.text), command=sanitize(x.command) if x.command else x.command)
            for x in f.fixes
        ),
    )


def inventory_block(doc: Mapping[str, Any], st: Style) -> list[str]:
    """The machine at a glance (the doctor's header, like nvidia-smi's): one aligned line per subject."""
    from compat.inventory import inventory_rows

    rows = inventory_rows(doc)
    width = max(len(k) for k, _ in rows)
    return [f"  {st(k.ljust(width), 'bold')}  {sanitize(v)}" for k, v in rows]


def render_text(
    report: Report,
    title: str,
    stream: IO[str] | None = None,
    *,
    verbose: bool = False,
    show_skipped: bool = True,
    inventory: bool = False,
) -> str:
    """The report as terminal text. `show_skipped=False` collapses the skipped checks to a count;
    `inventory=True` opens with the machine's inventory block (the doctor)."""
    out = stream or sys.stdout
    st = Style(use_color(out))
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in ("error", "warning", "info")}
    verdict = report.verdict
    head = f"{title}: {st(verdict.upper(), 'ok' if verdict == 'ok' else verdict)}"
    summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n)
    lines = [
        f"{head}{' (' + summary + ')' if summary else ''}   {st('matrix updated ' + report.matrix_updated, 'dim')}"
    ]
    from compat.target import header_line

    interp = header_line(report.extra.get("interpreter"))
    if interp:
        lines.append(st(sanitize(interp), "dim"))
    if inventory:
        lines.append("")
        lines.extend(inventory_block(report.to_json(), st))
    by_group: dict[str, list[Finding]] = {}
    for f in report.sorted_findings():
        by_group.setdefault(f.group, []).append(f)
    known = {g for g, _ in GROUPS}
    for key, label in GROUPS + tuple((g, g.title()) for g in sorted(by_group) if g not in known):
        items = by_group.get(key)
        if not items:
            continue
        lines.append("")
        lines.append(st(label, "bold"))
        for f in items:
            lines.extend(render_finding(_safe(f), st))
    if not report.findings:
        lines.append("")
        lines.append(st("  ✓ no problems found with the facts given", "ok"))
    if report.skipped and not show_skipped:
        n = len(report.skipped)
        lines.append("")
        lines.append(
            st(
                f"Skipped: {n} check{'s' if n != 1 else ''} without the facts they need (--show-skipped lists them)",
                "dim",
            )
        )
    elif report.skipped:
        lines.append("")
        lines.append(
            st(
                f"Skipped ({len(report.skipped)})"
                + ("" if verbose else ": checks without the facts they need"),
                "dim",
            )
        )
        for s in report.skipped:
            lines.append(st(f"  - {s.id}: {sanitize(s.reason)}", "dim"))
    fl = sanitize(_fact_line(report.facts))
    if fl:
        lines.append("")
        lines.append(st("Facts: " + fl, "dim"))
    return "\n".join(lines) + "\n"
