"""Records built by hand for the diagnosis and rendering tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compat.record.document import ExitInfo, RunRecord
from compat.record.timeline import GpuSample, Sample

GiB = 1 << 30
MiB = 1 << 20


def record(
    exit: ExitInfo,
    *,
    rss: Sequence[float] | None = None,
    gpu_used: Sequence[float] | None = None,
    gpu_total: int = 80 * GiB,
    throttle: Sequence[tuple[str, ...]] | None = None,
    cgroup: dict[str, Any] | None = None,
    kernel_events: list[dict[str, Any]] | None = None,
    readable: bool = True,
    output: list[str] | None = None,
    kind: str = "run",
) -> RunRecord:
    rss = rss or [1 * GiB] * 10
    n = len(rss)
    samples = []
    for i in range(n):
        gpus: tuple[GpuSample, ...] = ()
        if gpu_used is not None:
            th = throttle[i] if throttle else ()
            gpus = (GpuSample(0, int(gpu_used[i]), int(gpu_used[i]) - 500 * MiB, 90, 70, 300.0, th, 0),)
        samples.append(Sample(float(i), int(rss[i]), 2, int(rss[i]) + 100 * MiB, 0, 0, gpus))
    rec = RunRecord(kind, 4242, command=["python", "train.py"], started=1_700_000_000.0)
    rec.wall_s = float(n)
    rec.exit = exit
    rec.samples = samples
    rec.host = {"mem_total": 64 * GiB, "swap_total": 0, "shm_total": 32 * GiB}
    rec.cgroup = (
        cgroup
        if cgroup is not None
        else {
            "version": 2,
            "path": "/job",
            "limit": 24 * GiB,
            "peak": int(max(rss)),
            "oom_kill_before": 0,
            "oom_kill_after": 0,
            "oom_kill_delta": 0,
            "oom_events_delta": 0,
        }
    )
    if gpu_used is not None:
        rec.gpu = {
            "available": True,
            "reason": "",
            "gpus": [
                {
                    "index": 0,
                    "name": "NVIDIA A100-SXM4-80GB",
                    "uuid": "GPU-1",
                    "mem_total": gpu_total,
                    "power_limit_w": 400.0,
                }
            ],
        }
    else:
        rec.gpu = {"available": False, "reason": "NVML did not start: no driver", "gpus": []}
    rec.kernel_log = {
        "readable": readable,
        "reason": ""
        if readable
        else "cannot read the kernel log (/dev/kmsg: Operation not permitted); the cgroup counters decide instead",
        "events": kernel_events or [],
    }
    rec.output_tail = output or []
    rec.output_lines = len(rec.output_tail)
    return rec
