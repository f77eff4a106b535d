"""The doctor report as Markdown to paste into a GitHub issue: the machine in one table, then the findings with
their fixes, the details folded in <details> sections (what maintainers ask for in GPU bug templates).

Pure: a report's JSON document in, a string out. `redact=True` passes the document through compat.redact first
(host names, user names in paths, GPU UUIDs, serials), so nothing identifying reaches the text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compat._text import sanitize

_MARK = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}
MAX_DETAIL_CHARS = 20_000
"""A <details> block longer than this is cut (a 1 MB probe dump is not a bug report)."""


def cell(text: Any) -> str:
    """A value safe inside a Markdown table cell: one line, pipes escaped, no control characters."""
    s = sanitize(str(text))
    return " ".join(s.split()).replace("|", "\\|")


def inline(text: Any) -> str:
    """A value safe in running Markdown text: one line, no control characters, HTML brackets escaped."""
    s = " ".join(sanitize(str(text)).split())
    return s.replace("<", "&lt;").replace(">", "&gt;")


def fence(body: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run inside `body`."""
    longest, run = 0, 0
    for ch in body:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def details(summary: str, body: str) -> str:
    if len(body) > MAX_DETAIL_CHARS:
        body = body[:MAX_DETAIL_CHARS] + f"\n… ({len(body) - MAX_DETAIL_CHARS} more characters left out)"
    return f"<details><summary>{inline(summary)}</summary>\n\n{body}\n\n</details>"


def machine_table(doc: Mapping[str, Any]) -> str:
    from compat.inventory import inventory_rows

    lines = ["| | |", "|---|---|"]
    lines += [f"| **{cell(k)}** | {cell(v)} |" for k, v in inventory_rows(doc)]
    return "\n".join(lines)


def findings_section(findings: list[Mapping[str, Any]]) -> str:
    if not findings:
        return "✅ No problems found."
    out: list[str] = []
    for f in findings:
        sev = str(f.get("severity", "info"))
        line = f" (line {f['line']})" if f.get("line") is not None else ""
        out.append(
            f"#### {_MARK.get(sev, '')} {sev}: {inline(f.get('title', ''))}{line} `{cell(f.get('id', ''))}`"
        )
        out.append("")
        out.append(inline(f.get("message", "")))
        fixes = [x for x in f.get("fixes") or [] if isinstance(x, Mapping)]
        if fixes:
            out.append("")
            out.append("**Fix:**")
            for x in fixes:
                out.append(f"- {inline(x.get('text', ''))}")
                if x.get("command"):
                    block = fence(sanitize(str(x["command"])), "sh" if x.get("kind") == "shell" else "")
                    out.append("\n".join("  " + ln for ln in block.splitlines()))
        out.append("")
    return "\n".join(out).rstrip()


def _summary(doc: Mapping[str, Any]) -> str:
    findings = [f for f in doc.get("findings") or [] if isinstance(f, Mapping)]
    counts = {s: sum(1 for f in findings if f.get("severity") == s) for s in ("error", "warning", "info")}
    tally = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n)
    verdict = str(doc.get("verdict", "unknown")).upper()
    updated = (doc.get("matrix") or {}).get("updated", "unknown")
    return f"**Verdict: {verdict}**" + (f" ({tally})" if tally else "") + f" · matrix updated {cell(updated)}"


def doctor_markdown(
    report_json: Mapping[str, Any], *, redact: bool = False, title: str = "compat doctor"
) -> str:
    """The doctor report `report_json` (the `compat doctor --json` document) as one Markdown document."""
    doc: Mapping[str, Any] = report_json
    if redact:
        from compat.redact import redact_document

        doc = redact_document(dict(report_json))
    from compat import __version__

    parts = [f"## {inline(title)} report", "", _summary(doc) + f" · compat {__version__}", ""]
    if doc.get("host"):
        parts += [f"Host: `{cell(doc['host'])}`", ""]
    interp = doc.get("interpreter")
    if isinstance(interp, Mapping) and interp.get("python"):
        parts += [
            f"Interpreter inspected: `{cell(interp['python'])}` ({inline(interp.get('reason', ''))})",
            "",
        ]
    parts += ["### Machine", "", machine_table(doc), "", "### Findings", ""]
    findings = [f for f in doc.get("findings") or [] if isinstance(f, Mapping)]
    parts += [findings_section(findings), ""]
    skipped = [s for s in doc.get("skipped") or [] if isinstance(s, Mapping)]
    if skipped:
        body = "\n".join(f"- `{cell(s.get('id', ''))}`: {inline(s.get('reason', ''))}" for s in skipped)
        parts += [details(f"Skipped checks ({len(skipped)})", body), ""]
    facts = doc.get("facts") or {}
    rows = ["| fact | value | source |", "|---|---|---|"]
    for name in sorted(k for k in facts if k != "gpus"):
        f = facts[name]
        if isinstance(f, Mapping):
            value = f"missing: {f.get('reason')}" if f.get("missing") else f.get("raw")
            rows.append(f"| {cell(name)} | {cell(value)} | {cell(f.get('source', ''))} |")
    parts += [details("Facts and where they came from", "\n".join(rows)), ""]
    gpus = doc.get("gpus")
    if isinstance(gpus, list) and gpus:
        parts += [details(f"GPUs ({len(gpus)}): memory, health, MIG (JSON)", fence(_dumps(gpus), "json")), ""]
    smoke = doc.get("smoke")
    if isinstance(smoke, Mapping):
        parts += [details(f"Smoke training: {smoke.get('status', '?')}", fence(_dumps(smoke), "json")), ""]
    probes = doc.get("probes")
    if isinstance(probes, Mapping) and probes:
        parts += [details("Probe results (JSON)", fence(_dumps(probes), "json")), ""]
    parts.append(f"<sub>Generated by `compat doctor --format markdown{' --redact' if redact else ''}`.</sub>")
    return "\n".join(parts).rstrip() + "\n"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False, default=str)


__all__ = ["doctor_markdown"]
