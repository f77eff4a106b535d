"""Benchmark: the smoke job's time to verdict, broken down by stage.

For each framework, runs the real job N times (in-process run_smoke, so the numbers are the job's own) and prints
the median of each stage: child start (spawn to the child's first line: interpreter start-up), framework import,
device selection, setup (model, optimizer, data), first step (warm-up: kernel selection, tracing), steady-state
steps, child exit, and the smoke job's own overhead (everything else: framework detection, spawn, the child's
bookkeeping, waiting, reading and classifying). Also the wall time of the whole `compat smoke --json` command
and of `python -c pass` as the interpreter floor.

Run: python bench/bench_smoke.py [--framework torch|tensorflow|all] [--device cpu|cuda|auto] [-n N] [--steps N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat.smoke import SmokeOptions, installed_here, run_smoke  # noqa: E402

STAGES = ("child_start", "import", "device", "setup", "first_step", "steady_steps", "child_exit", "overhead")


def wall(cmd: list[str], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            timeout=600,
            check=False,
        )
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(framework: str, device: str, n: int, steps: int) -> None:
    runs = []
    for _ in range(n):
        r = run_smoke(SmokeOptions(framework=framework, device=device, steps=steps, timeout=600))
        if r.verdict != "passed":
            print(f"{framework}: {r.verdict}: {r.message}")
            return
        runs.append(r)
    med = {k: statistics.median(float(r.details["timings"].get(k, 0.0)) for r in runs) for k in STAGES}
    total = statistics.median(r.seconds for r in runs)
    sps = statistics.median(r.samples_per_second or 0.0 for r in runs)
    r0 = runs[0]
    print(
        f"\n{framework} {r0.framework_version} on {r0.device} ({r0.device_name}), {steps} steps of batch "
        f"{r0.details['batch_size']}, median of {n}:"
    )
    print(f"  {'time to verdict':<16} {total:7.3f} s")
    for k in STAGES:
        share = 100 * med[k] / total if total else 0.0
        print(f"  {k:<16} {med[k]:7.3f} s  {share:5.1f} %")
    print(f"  {'throughput':<16} {sps:7.0f} samples/s (steady state)")
    cli = wall(
        [
            sys.executable,
            "-m",
            "compat",
            "smoke",
            "--json",
            "--framework",
            framework,
            "--device",
            device,
            "--steps",
            str(steps),
        ],
        max(1, n // 2),
    )
    print(
        f"  {'CLI wall':<16} {cli:7.3f} s  (`compat smoke --json`: + compat's own start-up {cli - total:+.3f} s)"
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--framework", default="torch", choices=("torch", "tensorflow", "all"))
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    p.add_argument("-n", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    print(f"python -c pass: {wall([sys.executable, '-c', 'pass'], 5):.3f} s (interpreter floor)")
    installed = installed_here()
    for fw in ("torch", "tensorflow") if a.framework == "all" else (a.framework,):
        if not installed.get(fw):
            print(f"\n{fw}: not installed, skipped")
            continue
        bench(fw, a.device, a.n, a.steps)


if __name__ == "__main__":
    main()
