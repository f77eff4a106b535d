"""The timeline of a run: samples, bounded storage, and what the series show (peaks, leaks, throttling)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from compat._valueclass import valueclass

MAX_SAMPLES = 4000
"""Beyond this the timeline keeps every other old sample (a long run stays bounded, the shape stays)."""

THERMAL = ("sw_thermal", "hw_thermal", "hw_slowdown", "hw_power_brake")
POWER = ("sw_power_cap",)


@valueclass
class GpuSample:
    index: int
    used: int | None
    """Memory in use on the GPU, all processes (bytes)."""
    own: int | None
    """Memory held by the run's process tree (bytes; None when NVML lists no process of it)."""
    util: int | None
    temp: int | None
    power: float | None
    throttle: tuple[str, ...] = ()
    ecc: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "used": self.used,
            "own": self.own,
            "util": self.util,
            "temp": self.temp,
            "power": self.power,
            "throttle": list(self.throttle),
            "ecc": self.ecc,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GpuSample:
        return cls(
            int(d["index"]),
            d.get("used"),
            d.get("own"),
            d.get("util"),
            d.get("temp"),
            d.get("power"),
            tuple(d.get("throttle") or ()),
            d.get("ecc"),
        )


@valueclass
class Sample:
    """One reading, `t` seconds after the start."""

    t: float
    rss: int | None
    """Resident memory of the whole process tree (bytes)."""
    procs: int
    cgroup: int | None
    """The cgroup's memory in use (bytes)."""
    swap: int | None
    """Swap in use on the host (bytes)."""
    shm: int | None
    """/dev/shm in use (bytes)."""
    gpus: tuple[GpuSample, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "t": round(self.t, 2),
            "rss": self.rss,
            "procs": self.procs,
            "cgroup": self.cgroup,
            "swap": self.swap,
            "shm": self.shm,
            "gpus": [g.to_json() for g in self.gpus],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Sample:
        return cls(
            float(d["t"]),
            d.get("rss"),
            int(d.get("procs") or 0),
            d.get("cgroup"),
            d.get("swap"),
            d.get("shm"),
            tuple(GpuSample.from_json(g) for g in d.get("gpus") or ()),
        )


class Timeline:
    """Samples in time order, bounded by MAX_SAMPLES (old ones thinned, recent ones kept)."""

    def __init__(self, limit: int = MAX_SAMPLES) -> None:
        self.samples: list[Sample] = []
        self.limit = limit

    def add(self, s: Sample) -> None:
        self.samples.append(s)
        if len(self.samples) > self.limit:
            half = len(self.samples) // 2
            self.samples = self.samples[:half:2] + self.samples[half:]


def series(samples: Sequence[Sample], what: str, gpu: int | None = None) -> list[tuple[float, float]]:
    """(t, value) points of one quantity: "rss", "cgroup", "swap", "shm", or per GPU "used", "own", "temp",
    "power", "util"."""
    out: list[tuple[float, float]] = []
    for s in samples:
        if gpu is None:
            v = getattr(s, what)
        else:
            g = next((g for g in s.gpus if g.index == gpu), None)
            v = getattr(g, what) if g is not None else None
        if v is not None:
            out.append((s.t, float(v)))
    return out


def peak(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """(t, value) of the maximum."""
    return max(points, key=lambda p: p[1]) if points else None


@valueclass
class Growth:
    """Steady growth of one series: where it began and how fast."""

    start_t: float
    start_value: float
    end_t: float
    end_value: float
    rate: float
    """Units per second (least squares)."""
    r2: float


def _fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    n = len(points)
    mt = sum(p[0] for p in points) / n
    mv = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mt) ** 2 for p in points)
    sxy = sum((p[0] - mt) * (p[1] - mv) for p in points)
    syy = sum((p[1] - mv) ** 2 for p in points)
    if sxx == 0 or syy == 0:
        return 0.0, 0.0
    slope = sxy / sxx
    return slope, (sxy * sxy) / (sxx * syy)


def _sse_level(points: Sequence[tuple[float, float]]) -> float:
    if not points:
        return 0.0
    m = sum(p[1] for p in points) / len(points)
    return sum((p[1] - m) ** 2 for p in points)


def _sse_line(points: Sequence[tuple[float, float]]) -> float:
    n = len(points)
    mt = sum(p[0] for p in points) / n
    mv = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mt) ** 2 for p in points)
    slope = sum((p[0] - mt) * (p[1] - mv) for p in points) / sxx if sxx else 0.0
    return sum((p[1] - (mv + slope * (p[0] - mt))) ** 2 for p in points)


def _thin(points: Sequence[tuple[float, float]], n: int) -> list[tuple[float, float]]:
    if len(points) <= n:
        return list(points)
    step = len(points) / n
    return [points[int(i * step)] for i in range(n)] + [points[-1]]


def steady_growth(
    points: Sequence[tuple[float, float]], *, min_points: int = 8, min_growth: float = 64 << 20
) -> Growth | None:
    """The earliest start from which the series grows steadily to its end: a linear fit with R² ≥ 0.9, at
    least 80% of steps not falling, and growth of at least `min_growth` and half the starting value. A series
    that rises once and stays flat, or saws up and down (a training loop's normal breathing), is not growth."""
    pts = _thin(points, 300)
    if len(pts) < min_points:
        return None
    fits: list[tuple[int, float, float]] = []
    for s in range(0, len(pts) - min_points + 1):
        win = pts[s:]
        first, last = win[0][1], win[-1][1]
        if last - first < max(min_growth, 0.5 * first):
            break  # later starts only shrink the growth
        steps = [b[1] - a[1] for a, b in itertools.pairwise(win)]
        if sum(1 for d in steps if d >= 0) < 0.8 * len(steps):
            continue
        slope, r2 = _fit(win)
        if slope > 0 and r2 >= 0.9:
            fits.append((s, slope, r2))
    if not fits:
        return None
    # Where the growth began: the change point of "level, then a straight line" with the least squared error.
    s, slope, r2 = min(fits, key=lambda f: _sse_level(pts[: f[0]]) + _sse_line(pts[f[0] :]))
    return Growth(pts[s][0], pts[s][1], pts[-1][0], pts[-1][1], slope, r2)


@valueclass
class Throttling:
    gpu: int
    kind: str
    """"thermal" or "power"."""
    reasons: tuple[str, ...]
    samples: int
    longest_s: float
    fraction: float


def sustained_throttling(
    samples: Sequence[Sample], *, min_run: int = 5, min_fraction: float = 0.3
) -> list[Throttling]:
    """GPUs whose thermal or power clock-event reasons were active in a run of ≥ `min_run` consecutive samples
    and in ≥ `min_fraction` of all samples."""
    out: list[Throttling] = []
    gpus = sorted({g.index for s in samples for g in s.gpus})
    for idx in gpus:
        for kind, names in (("thermal", THERMAL), ("power", POWER)):
            run = best = hits = total = 0
            best_len_s = 0.0
            start_t = 0.0
            seen: set[str] = set()
            for s in samples:
                g = next((g for g in s.gpus if g.index == idx), None)
                if g is None:
                    continue
                total += 1
                active = [r for r in g.throttle if r in names]
                if active:
                    hits += 1
                    seen.update(active)
                    if run == 0:
                        start_t = s.t
                    run += 1
                    if run > best:
                        best, best_len_s = run, s.t - start_t
                else:
                    run = 0
            if total and best >= min_run and hits / total >= min_fraction:
                out.append(Throttling(idx, kind, tuple(sorted(seen)), hits, best_len_s, hits / total))
    return out


BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 40, top: float | None = None) -> str:
    """Values as a bar string of at most `width` characters (max of each bucket), scaled to `top` or the max."""
    if not values:
        return ""
    if len(values) > width:
        step = len(values) / width
        values = [
            max(values[int(i * step) : max(int(i * step) + 1, int((i + 1) * step))]) for i in range(width)
        ]
    hi = top if top else max(values)
    if hi <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[min(len(BARS) - 1, max(0, int(v / hi * (len(BARS) - 1) + 0.5)))] for v in values)


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def fmt_t(t: float) -> str:
    t = max(0, int(t))
    h, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
