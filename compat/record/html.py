"""report.html: one self-contained page (inline SVG, inline CSS, no script, nothing loaded from the network).

Every string that came from the run (output lines, process and GPU names, paths, kernel-log lines) goes through
`esc`; a Content-Security-Policy that allows no script and no fetch is the second fence, not the first."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compat.explain.render import shown_command
from compat.findings import Fix
from compat.record.chart import esc, svg_plot
from compat.record.document import RunRecord, signal_name
from compat.record.summary import other_findings, parse_fixes, run_fixes, verdict_fixes
from compat.record.timeline import fmt_bytes, fmt_t, series
from compat.record.verdict import clock

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _end_label(rec: RunRecord) -> str:
    ex = rec.exit
    if ex.status == "signaled":
        return f"killed by {signal_name(ex.signal) or 'a signal'}"
    if ex.status == "exited":
        return "exited" if ex.code is None else f"exit status {ex.code}"
    return str(ex.status)


def _events(rec: RunRecord) -> list[tuple[float, str]]:
    ev: list[tuple[float, str]] = []
    for e in rec.kernel_log.get("events") or []:
        if e.get("t") is not None:
            text = " ".join(str(p) for p in (e.get("kind") or "kernel", e.get("text")) if p)
            ev.append((float(e["t"]), text.replace(" ", ": ", 1) if e.get("text") else text))
    for x in rec.xid_events:
        if x.get("t") is not None:
            gpu = f" GPU {x['gpu']}" if x.get("gpu") is not None else ""
            ev.append((float(x["t"]), f"Xid {x.get('xid') or '?'}{gpu}"))
    if rec.wall_s is not None and rec.exit.status != "running":
        ev.append((rec.wall_s, f"end: {_end_label(rec)}"))
    return ev


def _exit_text(rec: RunRecord) -> str:
    ex = rec.exit
    text = _end_label(rec) + (" (core dumped)" if ex.status == "signaled" and ex.core_dumped else "")
    if ex.status == "vanished":
        text = "vanished (its exit status could not be read)"
    return text + (f", core file {ex.core_file}" if ex.core_file else "") + f" (from {ex.source})"


def _cgroup_text(cg: Mapping[str, Any]) -> str:
    where = cg.get("path") or cg.get("reason") or "not found"
    if not cg.get("path"):
        return str(where)
    return f"{where}, limit {fmt_bytes(cg['limit'])}" if cg.get("limit") else f"{where}, no memory limit"


def fixes_html(fixes: Sequence[Fix]) -> str:
    """Fixes as explain shows them: each sentence and, under it, its command (a shell command after "$ ")."""
    if not fixes:
        return ""
    items = "".join(
        f"<li>{esc(f.text)}" + (f"<br><code>{esc(shown_command(f))}</code>" if f.command else "") + "</li>"
        for f in fixes
    )
    return f'<ol class="fixes">{items}</ol>'


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:900px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}h3{font-size:14px;margin:10px 0 4px}
.verdict{padding:10px 14px;border-left:5px solid #d62728;background:#fff4f4}
.verdict.ok{border-color:#2ca02c;background:#f3fbf3}
.verdict.unknown{border-color:#7f7f7f;background:#f6f6f6}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font-size:12px}
code{background:#f0f0f0;padding:1px 4px;font-size:12px;word-break:break-all}.fixes li{margin:3px 0}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;font-size:13px}
svg{display:block;margin:8px 0;max-width:100%;height:auto}.t{font-weight:bold;font-size:13px}
.ax{font-size:11px;fill:#555}.lg{font-size:12px}.note{font-size:11px}.ev{font-size:11px;fill:#a00}
.frame{fill:none;stroke:#bbb}.ctx{stroke-dasharray:5 3;opacity:.75}
.limit{stroke:#888;stroke-dasharray:4 3}.event{stroke:#a00;stroke-dasharray:2 2}.none{color:#777}
"""


def _facts(rec: RunRecord) -> str:
    gpus = rec.gpu.get("gpus") or []
    rows = (
        ("started", clock(rec, 0) + " (" + str(rec.to_json()["started_at"]) + ")"),
        ("wall time", fmt_t(rec.wall_s or 0)),
        ("exit", _exit_text(rec)),
        ("cgroup", _cgroup_text(rec.cgroup)),
        (
            "GPU",
            ", ".join(f"{g.get('index')}: {g.get('name') or 'unnamed'}" for g in gpus)
            or f"not available: {rec.gpu.get('reason') or 'no reason given'}",
        ),
        (
            "kernel log",
            "read" if rec.kernel_log.get("readable") else rec.kernel_log.get("reason") or "not read",
        ),
    )
    return "<table>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + "</table>"


def _per_value(
    gpus: Sequence[Mapping[str, Any]], key: str, label: Callable[[str, float], str]
) -> list[tuple[str, float]]:
    """One limit line per distinct value (eight GPUs of 80 GiB: one "GPUs 0-7 total 80.0 GiB" line)."""
    by: dict[float, list[int]] = {}
    for g in gpus:
        if isinstance(g.get(key), (int, float)):
            by.setdefault(float(g[key]), []).append(int(g["index"]))
    out = []
    for v, idx in by.items():
        if len(idx) == 1:
            who = f"GPU {idx[0]}"
        elif idx == list(range(idx[0], idx[0] + len(idx))):
            who = f"GPUs {idx[0]}-{idx[-1]}"
        else:
            who = "GPUs " + ", ".join(map(str, idx))
        out.append((label(who, v), v))
    return out


def _charts(rec: RunRecord, t_end: float, events: list[tuple[float, str]]) -> list[str]:
    body = ["<h2>Memory</h2>"]
    # The run's own memory sets the scale; the cgroup (often a whole container) and its limit are context.
    limit = rec.cgroup.get("limit")
    cg_limit = [(f"cgroup limit {fmt_bytes(limit)}", float(limit))] if isinstance(limit, (int, float)) else []
    body.append(
        svg_plot(
            "Host memory",
            [("host RSS (the run's process tree)", series(rec.samples, "rss"))],
            fmt_bytes,
            t_end,
            events=events,
            context=[("cgroup memory (all of the cgroup)", series(rec.samples, "cgroup"))],
            context_limits=cg_limit,
        )
    )
    gpus = rec.gpu.get("gpus") or []
    if not gpus:
        body.append(f'<p class="none">GPU: not available ({esc(rec.gpu.get("reason") or "unknown")}).</p>')
        return body
    own = [(f"GPU {g['index']} the run", series(rec.samples, "own", int(g["index"]))) for g in gpus]
    used = [(f"GPU {g['index']} all processes", series(rec.samples, "used", int(g["index"]))) for g in gpus]
    glim = _per_value(gpus, "mem_total", lambda who, v: f"{who} total {fmt_bytes(v)}")
    body.append(svg_plot("GPU memory", own, fmt_bytes, t_end, (), events, used, glim))
    body.append("<h2>Temperature and power</h2>")
    tl = [(f"GPU {g['index']} °C", series(rec.samples, "temp", int(g["index"]))) for g in gpus]
    body.append(svg_plot("Temperature (°C)", tl, lambda v: f"{v:.0f} °C", t_end, (), events))
    pl = [(f"GPU {g['index']} W", series(rec.samples, "power", int(g["index"]))) for g in gpus]
    plim = _per_value(gpus, "power_limit_w", lambda who, v: f"{who} limit {v:.0f} W")
    body.append(svg_plot("Power (W)", pl, lambda v: f"{v:.0f} W", t_end, plim, events))
    return body


def render_html(rec: RunRecord) -> str:
    v = rec.verdict or {}
    t_end = rec.wall_s or (rec.samples[-1].t if rec.samples else 1.0)
    events = _events(rec)
    what = " ".join(rec.command) if rec.command else f"pid {rec.pid}"
    style = {"ok": " ok", "unknown": " unknown"}.get(
        str(v.get("outcome")), ""
    )  # unknown: not styled as failed
    body: list[str] = [f"<h1>compat {esc(rec.kind)}: {esc(what)}</h1>"]
    body.append(f'<div class="verdict{style}"><b>{esc(v.get("title", "no verdict"))}</b>')
    if v.get("deciding"):
        body.append("<ul>" + "".join(f"<li>{esc(d)}</li>" for d in v["deciding"]) + "</ul>")
    if v.get("headroom"):
        body.append(f"<p>{esc(v['headroom'])}</p>")
    shown = run_fixes(rec)
    if shown:
        body.append("<h3>What to do</h3>" + fixes_html(shown))
    body.append("</div>")
    body.append(_facts(rec))
    body += _charts(rec, t_end, events)
    findings = other_findings(v)
    if findings:
        body.append("<h2>Findings</h2><ul>")
        for f in findings:
            body.append(
                f"<li><b>{esc(f.get('severity'))}</b> {esc(f.get('title'))}<br>{esc(f.get('message') or '')}"
                + fixes_html(parse_fixes(f.get("fixes")))
                + "</li>"
            )
        body.append("</ul>")
    if v.get("explain"):
        body.append("<h2>compat explain on the output</h2><ul>")
        for d in v["explain"]:
            more = [f for f in parse_fixes(d.get("fixes")) if f not in verdict_fixes(v)][:3]
            body.append(
                f"<li>{esc(d.get('title'))} ({esc(d.get('category'))}, confidence {esc(d.get('confidence'))})"
                + fixes_html(more)
                + "</li>"
            )
        body.append("</ul>")
    kev = rec.kernel_log.get("events") or []
    if kev:
        body.append("<h2>Kernel log</h2><pre>" + "\n".join(esc(e.get("text", "")) for e in kev) + "</pre>")
    if rec.output_tail:
        body.append(f"<h2>Last {len(rec.output_tail)} of {rec.output_lines} output lines</h2>")
        body.append("<pre>" + "\n".join(esc(ln) for ln in rec.output_tail) + "</pre>")
    if rec.fault_report:
        body.append("<h2>Fault report</h2><pre>" + "\n".join(esc(ln) for ln in rec.fault_report) + "</pre>")
    if rec.processes:
        body.append("<h2>Processes</h2><table><tr><th>pid</th><th>name</th></tr>")
        body.extend(
            f"<tr><td>{esc(p)}</td><td>{esc(n or 'unnamed')}</td></tr>"
            for p, n in sorted(rec.processes.items())[:200]
        )
        body.append("</table>")
    if rec.notes:
        body.append(
            "<h2>Recorder notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in rec.notes) + "</ul>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>compat {esc(rec.kind)} report</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
