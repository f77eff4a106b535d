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
    from compat.about import __version__

    parts = [f"## {inline(title)} report", "", _summary(doc) + f" · compat {__version__}", ""]
    if doc.get("host"):
        parts += [f"Host: `{cell(doc['host'])}`", ""]
    interp = doc.get("interpreter")
    if isinstance(interp, Mapping) and interp.get("python"):
        parts += [
            f"Interpreter inspected: `{cell(interp['python'])}` ({inline(interp.get('reason', ''))})",
            "",
        ]
        if isinstance(interp.get("note"), str) and interp["note"]:
            parts += [inline(interp["note"]), ""]
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
    out = "\n".join(parts).rstrip() + "\n"
    return _redacted_text(out) if redact else out


def _redacted_text(text: str) -> str:
    """The rendered document once more through the redactor: what rendering joined or added (a command line
    joined from its arguments, a records directory) is covered too."""
    from compat.redact import Redactor

    return Redactor().text(text)


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _dumps(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False, default=str)


__all__ = ["doctor_markdown"]


def run_markdown(record: Mapping[str, Any]) -> str:
    """The last recorded run (`compat run` / `watch` / notebook record) as a Markdown section."""
    v, ex = _map(record.get("verdict")), _map(record.get("exit"))
    cmd = record.get("command")
    lines = [f"**{inline(v.get('title', 'no verdict'))}**", ""]
    rows = ["| | |", "|---|---|"]
    if isinstance(cmd, list) and cmd:
        rows.append(f"| **Command** | `{cell(' '.join(str(c) for c in cmd))[:300]}` |")
    rows.append(f"| **Kind** | {cell(record.get('kind', '?'))} |")
    if record.get("started_at"):
        rows.append(f"| **Started** | {cell(record['started_at'])} |")
    if record.get("wall_s") is not None:
        rows.append(f"| **Wall time** | {cell(record['wall_s'])} s |")
    status = ex.get("status", "?")
    how = (
        f"signal {ex.get('signal_name') or ex.get('signal')}"
        if ex.get("signal")
        else f"code {ex.get('code')}"
    )
    rows.append(f"| **Exit** | {cell(status)} ({cell(how)}) |")
    lines.append("\n".join(rows))
    deciding = [d for d in v.get("deciding") or [] if isinstance(d, str)]
    if deciding:
        lines += ["", "Evidence:", ""] + [f"- {inline(d)}" for d in deciding[:8]]
    findings = [f for f in v.get("findings") or [] if isinstance(f, Mapping)]
    if findings:
        lines += ["", findings_section(findings)]
    tail = [str(t) for t in record.get("output_tail") or []][-40:]
    if tail:
        lines += ["", details(f"Last {len(tail)} lines of output", fence(sanitize("\n".join(tail))))]
    return "\n".join(lines)


def explain_markdown(explain_doc: Mapping[str, Any], source: str) -> str:
    """`compat explain --json` of a log as a Markdown section: each diagnosis, its evidence and its fixes."""
    diags = [d for d in explain_doc.get("diagnoses") or [] if isinstance(d, Mapping)]
    if not diags:
        return f"No known failure signature in `{cell(source)}` ({cell(explain_doc.get('status', 'nothing-found'))})."
    out: list[str] = []
    for d in diags:
        conf = d.get("confidence")
        pct = f" · confidence {float(conf):.0%}" if isinstance(conf, (int, float)) else ""
        kind = "suspected" if d.get("suspected") else "diagnosis"
        out += [f"#### {kind}: {inline(d.get('title', ''))} `{cell(d.get('category', ''))}`{pct}", ""]
        if d.get("explanation"):
            out += [inline(d["explanation"]), ""]
        fixes = [x for x in d.get("fixes") or [] if isinstance(x, Mapping)]
        if fixes:
            out.append("**Fix:**")
            for x in fixes:
                out.append(f"- {inline(x.get('text', ''))}")
                if x.get("command"):
                    out.append(
                        "\n".join("  " + ln for ln in fence(sanitize(str(x["command"])), "sh").splitlines())
                    )
            out.append("")
        ev = [str(e) for e in d.get("evidence") or []][:10]
        if ev:
            out += [details("Evidence from the log", fence(sanitize("\n".join(ev)))), ""]
    return "\n".join(out).rstrip()


def bundle_markdown(
    doctor_json: Mapping[str, Any],
    *,
    run: Mapping[str, Any] | None = None,
    run_missing: str = "",
    explain: Mapping[str, Any] | None = None,
    log_name: str = "",
    redact: bool = False,
) -> str:
    """`compat report`: the doctor's report, the last recorded run and the explanation of a log, one document."""
    if redact:
        from compat.redact import Redactor

        r = Redactor()
        doctor_json = r.document(dict(doctor_json))
        run = r.document(dict(run)) if run is not None else None
        explain = r.document(dict(explain)) if explain is not None else None
        log_name = r.text(log_name)
    doctor = doctor_markdown(doctor_json).rstrip()
    doctor = doctor.rsplit("\n<sub>", 1)[0].rstrip()  # one footer, for the whole bundle
    what = f"the snapshot {doctor_json['snapshot']}" if doctor_json.get("snapshot") else "this machine"
    parts = [doctor.replace("## compat doctor report", f"## compat report: {inline(what)}", 1), ""]
    parts += ["### Last recorded run", ""]
    parts += [run_markdown(run) if run is not None else (run_missing or "No run recorded."), ""]
    if explain is not None:
        parts += [f"### Explain: `{cell(log_name)}`", "", explain_markdown(explain, log_name), ""]
    parts.append(f"<sub>Generated by `compat report{' --redact' if redact else ''}`.</sub>")
    out = "\n".join(parts).rstrip() + "\n"
    return _redacted_text(out) if redact else out
