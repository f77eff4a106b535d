"""The inline SVG line charts of report.html: every label kept inside the chart, the run's own lines on their scale.

A chart draws the run's own lines (what the run used) to the scale of their values. Context (what the whole
container or GPU used, a limit) is drawn on that scale when it is close to it; far above it, the line is clipped
to the frame and its value is written under the chart, so a 3 GiB container does not flatten a 289 MiB run."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

from compat._text import sanitize
from compat.record.timeline import fmt_t

W = 860
PAD_L, PAD_R, PAD_T, PH = 80, 20, 30, 168
"""Left margin (the value labels), right margin, top margin (the title), plot height."""
AXIS_H = 20
"""The time labels under the plot."""
ROW_H = 16
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
FONT = {"t": 13.0, "ax": 11.0, "lg": 12.0, "ev": 11.0, "note": 11.0}
"""Font size (px) of each text class; the CSS of report.html says the same."""
CHAR_W = 0.62
"""Width of a character as a fraction of the font size: generous for system-ui digits and lower case."""
CONTEXT_FACTOR = 2.0
"""Context up to this many times the run's own maximum shares the scale; higher, it is clipped and written."""

Points = Sequence[tuple[float, float]]


def esc(value: Any) -> str:
    # ESC, BEL and the other controls shown as `\x1b`, never as raw bytes
    return html.escape(sanitize("unknown" if value is None else str(value)), quote=True)


def text_width(text: str, cls: str) -> float:
    return len(text) * FONT[cls] * CHAR_W


def fit(text: str, cls: str, room: float) -> str:
    """`text`, shortened with an ellipsis to fit `room` pixels."""
    if text_width(text, cls) <= room:
        return text
    n = max(1, int(room / (FONT[cls] * CHAR_W)) - 1)
    return text[:n] + "…"


def _num(v: float) -> str:
    return f"{v:.1f}"


def _finite(pts: Points) -> list[tuple[float, float]]:
    return [(t, v) for t, v in pts if math.isfinite(t) and math.isfinite(v)]


def _text(x: float, y: float, cls: str, text: str, anchor: str = "start", fill: str = "") -> str:
    a = f' text-anchor="{anchor}"' if anchor != "start" else ""
    f = f' fill="{fill}"' if fill else ""
    return f'<text x="{_num(x)}" y="{_num(y)}" class="{cls}"{a}{f}>{esc(text)}</text>'


def _rows(
    items: Sequence[tuple[str, str]], cls: str, gap: float = 18.0
) -> list[list[tuple[str, str, float]]]:
    """(text, colour) items laid out left to right in rows that fit the chart's width."""
    rows: list[list[tuple[str, str, float]]] = []
    x = float(W)  # forces a first row
    room = W - PAD_L - PAD_R
    for label, color in items:
        label = fit(label, cls, room)
        w = text_width(label, cls)
        if x + w > W - PAD_R:
            rows.append([])
            x = PAD_L
        rows[-1].append((label, color, x))
        x += w + gap
    return rows


def svg_plot(
    title: str,
    lines: Sequence[tuple[str, Points]],
    fmt: Callable[[float], str],
    t_end: float,
    limits: Sequence[tuple[str, float]] = (),
    events: Sequence[tuple[float, str]] = (),
    context: Sequence[tuple[str, Points]] = (),
    context_limits: Sequence[tuple[str, float]] = (),
) -> str:
    """A line chart against time: the run's own `lines` and `limits` set the scale; `context` lines and
    `context_limits` join it when they are within CONTEXT_FACTOR of it, else are clipped and written below."""
    lines = [(label, _finite(pts)) for label, pts in lines]
    context = [(label, _finite(pts)) for label, pts in context]
    own = [v for _, pts in lines for _, v in pts] + [v for _, v in limits if math.isfinite(v)]
    ctx = [max((v for _, v in pts), default=0.0) for _, pts in context] + [v for _, v in context_limits]
    if not own and not any(pts for _, pts in context):
        return f'<p class="none">{esc(title)}: no data.</p>'
    base = max(own, default=0.0)
    if base <= 0:
        base = max(ctx, default=0.0)
    on_scale = [c for c in ctx if math.isfinite(c) and c <= CONTEXT_FACTOR * base]
    top = max([base, *on_scale]) * 1.05 or 1.0
    t1 = max(t_end, max((p[0] for _, pts in (*lines, *context) for p in pts), default=0.0), 1e-9)
    pw = W - PAD_L - PAD_R

    def x(t: float) -> float:
        return PAD_L + pw * min(1.0, max(0.0, t / t1))

    def y(v: float) -> float:
        return PAD_T + PH * (1 - min(1.0, max(0.0, v / top)))  # off the scale: clipped to the frame

    legend: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    body: list[str] = [_text(PAD_L, 18, "t", fit(title, "t", pw))]
    body.append(f'<rect x="{PAD_L}" y="{PAD_T}" width="{pw}" height="{PH}" class="frame"/>')
    for frac, anchor in ((0.0, "middle"), (0.5, "middle"), (1.0, "end")):
        body.append(_text(PAD_L - 4, y(top * frac) + 4, "ax", fmt(top * frac), "end"))
        tx = x(t1 * frac) + (4 if frac == 1.0 else 0)
        body.append(_text(tx, PAD_T + PH + 15, "ax", fmt_t(t1 * frac), anchor))
    for label, v in [*limits, *context_limits]:
        if not math.isfinite(v) or v > top:
            notes.append((f"{label} (above this scale)", "#555"))
            continue
        yy = y(v)
        body.append(f'<line x1="{PAD_L}" x2="{PAD_L + pw}" y1="{_num(yy)}" y2="{_num(yy)}" class="limit"/>')
        ly = yy - 3 if yy - 3 - FONT["ax"] >= PAD_T else yy + FONT["ax"] + 1
        # at the left: the end of the run is marked at the right, often at the same height as a limit it hit
        body.append(_text(PAD_L + 4, ly, "ax", fit(label, "ax", pw / 2)))
    for k, (t, label) in enumerate(sorted(events, key=lambda e: e[0])):
        ex = x(t)
        body.append(f'<line x1="{_num(ex)}" x2="{_num(ex)}" y1="{PAD_T}" y2="{PAD_T + PH}" class="event"/>')
        ey = PAD_T + 12 + 13 * (k % 4)
        right, left = W - 2 - (ex + 3), ex - 3 - 2
        if right >= min(text_width(label, "ev"), left):  # the side with more room (or room enough)
            body.append(_text(ex + 3, ey, "ev", fit(label, "ev", right)))
        else:
            body.append(_text(ex - 3, ey, "ev", fit(label, "ev", left), "end"))
    drawn = [(label, pts, False) for label, pts in lines] + [(label, pts, True) for label, pts in context]
    for i, (label, pts, is_ctx) in enumerate(drawn):
        if not pts:
            continue
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{_num(x(t))},{_num(y(v))}" for t, v in pts)
        cls = ' class="ctx"' if is_ctx else ""
        body.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.6"{cls}/>')
        legend.append((label, color))
        hi = max(v for _, v in pts)
        if is_ctx and hi > top:
            notes.append((f"{label} peaked at {fmt(hi)} (above this scale; clipped)", color))
    rows = _rows(legend, "lg") + _rows(notes, "note")
    n_legend = len(_rows(legend, "lg"))
    h = PAD_T + PH + AXIS_H + ROW_H * len(rows) + 6
    for r, row in enumerate(rows):
        cls = "lg" if r < n_legend else "note"
        ry = PAD_T + PH + AXIS_H + ROW_H * (r + 1) - 3
        body.extend(_text(lx, ry, cls, label, fill=color) for label, color, lx in row)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
        f'role="img" aria-label="{esc(title)}">'
    )
    return "\n".join([head, *body, "</svg>"])
