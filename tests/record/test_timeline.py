"""What the series show: steady growth (a leak) versus a training loop's normal breathing, and throttling."""

from __future__ import annotations

import math

from compat.record.timeline import (
    MAX_SAMPLES,
    GpuSample,
    Sample,
    Timeline,
    sparkline,
    steady_growth,
    sustained_throttling,
)

MiB = 1 << 20


def test_leak_found_with_its_start_and_rate() -> None:
    # flat at 2 GiB for 30 s, then +50 MiB/s with per-step jitter
    pts = [
        (float(t), 2048.0 * MiB + (0 if t < 30 else (t - 30) * 50 * MiB + (t % 3) * 5 * MiB))
        for t in range(120)
    ]
    g = steady_growth(pts)
    assert g is not None
    assert 25 <= g.start_t <= 35
    assert 45 * MiB < g.rate < 55 * MiB


def test_breathing_and_a_single_step_are_not_leaks() -> None:
    saw = [(float(t), 4096.0 * MiB + 1024 * MiB * math.sin(t / 3)) for t in range(200)]
    assert steady_growth(saw) is None
    step = [(float(t), (1024.0 if t < 50 else 6000.0) * MiB) for t in range(200)]
    assert steady_growth(step) is None
    assert steady_growth([(0.0, 1.0), (1.0, 2.0)]) is None


def test_timeline_stays_bounded_and_keeps_the_end() -> None:
    tl = Timeline(limit=100)
    for i in range(1000):
        tl.add(Sample(float(i), i, 1, None, None, None))
    assert len(tl.samples) <= 100
    assert tl.samples[-1].t == 999.0 and tl.samples[0].t == 0.0


def _s(t: int, reasons: tuple[str, ...]) -> Sample:
    return Sample(float(t), 1, 1, None, None, None, (GpuSample(0, 1, 1, 99, 88, 300.0, reasons),))


def test_sustained_thermal_throttling() -> None:
    samples = [_s(t, ("sw_thermal", "hw_slowdown") if 10 <= t < 40 else ()) for t in range(60)]
    th = sustained_throttling(samples)
    assert [(x.gpu, x.kind) for x in th] == [(0, "thermal")]
    assert th[0].samples == 30 and abs(th[0].longest_s - 29) < 1e-9


def test_brief_throttling_is_not_sustained() -> None:
    samples = [_s(t, ("sw_thermal",) if t % 10 == 0 else ()) for t in range(60)]
    assert sustained_throttling(samples) == []


def test_sparkline() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7]) == "▁▂▃▄▅▆▇█"
    assert len(sparkline(list(range(500)), width=40)) == 40
    assert sparkline([]) == ""
    assert MAX_SAMPLES >= 3600  # an hour at 1 Hz before any thinning
