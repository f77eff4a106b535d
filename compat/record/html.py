"""report.html: one self-contained page (inline SVG, inline CSS, no script, nothing loaded from the network).

Every string that came from the run (output lines, process and GPU names, paths, kernel-log lines) goes through
`esc`; a Content-Security-Policy that allows no script and no fetch is the second fence, not the first."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from compat.record.document import RunRecord
from compat.record.timeline import fmt_bytes, fmt_t, series
from compat.record.verdict import clock

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 860, 220, 70, 20, 24, 28
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def esc(value: Any) -> str:
    from compat._text import sanitize  # ESC, BEL and the other controls shown as `\x1b`, never as raw bytes

    return html.escape(sanitize(str(value)), quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}"


def svg_plot(
    title: str,
    lines: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    fmt: Callable[[float], str],
    t_end: float,
    limits: Sequence[tuple[str, float]] = (),
    events: Sequence[tuple[float, str]] = (),
) -> str:
    """A line chart of `lines` (label, points) against time, with horizontal `limits` and vertical `events`."""
    pts_all = [v for _, pts in lines for _, v in pts] + [v for _, v in limits]
    if not pts_all:
        return f'<p class="none">{esc(title)}: no data.</p>'
    top = max(pts_all) * 1.05 or 1.0
    t1 = max(t_end, max((p[0] for _, pts in lines for p in pts), default=0.0), 1e-9)
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(t: float) -> float:
        return PAD_L + pw * max(0.0, t) / t1

    def y(v: float) -> float:
        return PAD_T + ph * (1 - v / top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" role="img" aria-label="{esc(title)}">'
    ]
    out.append(f'<text x="{PAD_L}" y="16" class="t">{esc(title)}</text>')
    out.append(f'<rect x="{PAD_L}" y="{PAD_T}" width="{pw}" height="{ph}" class="frame"/>')
    for frac in (0.0, 0.5, 1.0):
        v = top * frac
        out.append(
            f'<text x="{PAD_L - 4}" y="{_num(y(v) + 4)}" class="ax" text-anchor="end">{esc(fmt(v))}</text>'
        )
        tt = t1 * frac
        out.append(
            f'<text x="{_num(x(tt))}" y="{H - 8}" class="ax" text-anchor="middle">{esc(fmt_t(tt))}</text>'
        )
    for label, v in limits:
        out.append(
            f'<line x1="{PAD_L}" x2="{PAD_L + pw}" y1="{_num(y(v))}" y2="{_num(y(v))}" class="limit"/>'
        )
        out.append(
            f'<text x="{PAD_L + pw - 2}" y="{_num(y(v) - 3)}" class="ax" text-anchor="end">{esc(label)}</text>'
        )
    for t, label in events:
        out.append(
            f'<line x1="{_num(x(t))}" x2="{_num(x(t))}" y1="{PAD_T}" y2="{PAD_T + ph}" class="event"/>'
        )
        out.append(f'<text x="{_num(x(t) + 3)}" y="{PAD_T + 12}" class="ev">{esc(label[:60])}</text>')
    for i, (label, pts) in enumerate(lines):
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{_num(x(t))},{_num(y(v))}" for t, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"/>')
        out.append(
            f'<text x="{PAD_L + 8 + 170 * i}" y="{H - PAD_B - 6}" class="lg" fill="{color}">{esc(label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _events(rec: RunRecord) -> list[tuple[float, str]]:
    ev: list[tuple[float, str]] = []
    for e in rec.kernel_log.get("events") or []:
        if e.get("t") is not None:
            ev.append((float(e["t"]), f"{e.get('kind')}: {e.get('text', '')}"))
    for x in rec.xid_events:
        if x.get("t") is not None:
            ev.append((float(x["t"]), f"Xid {x.get('xid')} GPU {x.get('gpu')}"))
    if rec.wall_s is not None and rec.exit.status != "running":
        ev.append((rec.wall_s, f"end: {rec.exit.status} {rec.exit.signal or rec.exit.code or ''}".strip()))
    return ev


def _exit_text(rec: RunRecord) -> str:
    from compat.record.document import signal_name

    ex = rec.exit
    if ex.status == "signaled":
        text = f"killed by {signal_name(ex.signal)}" + (" (core dumped)" if ex.core_dumped else "")
    elif ex.status == "exited":
        text = f"exit status {ex.code}"
    else:
        text = ex.status
    return text + (f", core file {ex.core_file}" if ex.core_file else "") + f" (from {ex.source})"


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:900px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
.verdict{padding:10px 14px;border-left:5px solid #d62728;background:#fff4f4}
.verdict.ok{border-color:#2ca02c;background:#f3fbf3}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font-size:12px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;font-size:13px}
svg{display:block;margin:8px 0}.t{font-weight:bold;font-size:13px}.ax{font-size:11px;fill:#555}
.lg{font-size:12px}.ev{font-size:11px;fill:#a00}.frame{fill:none;stroke:#bbb}
.limit{stroke:#888;stroke-dasharray:4 3}.event{stroke:#a00;stroke-dasharray:2 2}.none{color:#777}
"""


def render_html(rec: RunRecord) -> str:
    v = rec.verdict or {}
    t_end = rec.wall_s or (rec.samples[-1].t if rec.samples else 1.0)
    events = _events(rec)
    what = " ".join(rec.command) if rec.command else f"pid {rec.pid}"
    ok = v.get("outcome") == "ok"
    body: list[str] = [f"<h1>compat {esc(rec.kind)}: {esc(what)}</h1>"]
    body.append(f'<div class="verdict{" ok" if ok else ""}"><b>{esc(v.get("title", "no verdict"))}</b>')
    if v.get("deciding"):
        body.append("<ul>" + "".join(f"<li>{esc(d)}</li>" for d in v["deciding"]) + "</ul>")
    if v.get("headroom"):
        body.append(f"<p>{esc(v['headroom'])}</p>")
    body.append("</div>")
    body.append(
        "<table>"
        + "".join(
            f"<tr><th>{esc(k)}</th><td>{esc(val)}</td></tr>"
            for k, val in (
                ("started", clock(rec, 0) + " (" + rec.to_json()["started_at"] + ")"),
                ("wall time", fmt_t(rec.wall_s or 0)),
                (
                    "exit",
                    f"{rec.exit.status} code={rec.exit.code} signal={rec.exit.signal} core={rec.exit.core_file}",
                ),
                (
                    "cgroup",
                    f"{rec.cgroup.get('path', rec.cgroup.get('reason', 'unknown'))} limit {fmt_bytes(rec.cgroup.get('limit'))}",
                ),
                (
                    "GPU",
                    ", ".join(f"{g['index']}: {g['name']}" for g in rec.gpu.get("gpus") or [])
                    or f"not available: {rec.gpu.get('reason')}",
                ),
                (
                    "kernel log",
                    "read" if rec.kernel_log.get("readable") else rec.kernel_log.get("reason") or "not read",
                ),
            )
        )
        + "</table>"
    )
    body.append("<h2>Memory</h2>")
    mem_lines = [
        ("host RSS (process tree)", series(rec.samples, "rss")),
        ("cgroup memory", series(rec.samples, "cgroup")),
    ]
    limits: list[tuple[str, float]] = []
    if rec.cgroup.get("limit"):
        limits.append((f"cgroup limit {fmt_bytes(rec.cgroup['limit'])}", float(rec.cgroup["limit"])))
    body.append(svg_plot("Host memory", mem_lines, fmt_bytes, t_end, limits, events))
    gpus = rec.gpu.get("gpus") or []
    if gpus:
        glines = [(f"GPU {g['index']} used", series(rec.samples, "used", int(g["index"]))) for g in gpus]
        glines += [(f"GPU {g['index']} run", series(rec.samples, "own", int(g["index"]))) for g in gpus]
        glim = [(f"GPU {g['index']} total", float(g["mem_total"])) for g in gpus if g.get("mem_total")]
        body.append(svg_plot("GPU memory", glines, fmt_bytes, t_end, glim, events))
        body.append("<h2>Temperature and power</h2>")
        tl = [(f"GPU {g['index']} °C", series(rec.samples, "temp", int(g["index"]))) for g in gpus]
        body.append(svg_plot("Temperature (°C)", tl, lambda v: f"{v:.0f} °C", t_end, (), events))
        pl = [(f"GPU {g['index']} W", series(rec.samples, "power", int(g["index"]))) for g in gpus]
        plim = [
            (f"GPU {g['index']} limit", float(g["power_limit_w"])) for g in gpus if g.get("power_limit_w")
        ]
        body.append(svg_plot("Power (W)", pl, lambda v: f"{v:.0f} W", t_end, plim, events))
    else:
        body.append(f'<p class="none">GPU: not available ({esc(rec.gpu.get("reason") or "unknown")}).</p>')
    findings = v.get("findings") or []
    if findings:
        body.append("<h2>Findings</h2><ul>")
        for f in findings:
            body.append(f"<li><b>{esc(f['severity'])}</b> {esc(f['title'])}<br>{esc(f['message'])}</li>")
        body.append("</ul>")
    if v.get("explain"):
        body.append("<h2>compat explain on the output</h2><ul>")
        for d in v["explain"]:
            body.append(f"<li>{esc(d['title'])} ({esc(d['category'])}, {esc(d['confidence'])})</li>")
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
            f"<tr><td>{esc(p)}</td><td>{esc(n)}</td></tr>" for p, n in sorted(rec.processes.items())[:200]
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
