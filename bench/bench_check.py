"""Benchmark: `compat check` from process start to exit, and the share spent loading the matrix.

Prints the median wall time of N runs of the real command, the median in-process time of load_matrix(),
and the median of `python -c pass` as the interpreter floor. Run: python bench/bench_check.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = [
    "check",
    "--driver",
    "470.82.01",
    "--torch",
    "2.1.0+cu121",
    "--gpu",
    "RTX 4090",
    "--python",
    "3.11",
    "--os",
    "linux",
    "--json",
]


def wall(cmd: list[str], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, timeout=120, check=False
        )
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    floor = wall([sys.executable, "-c", "pass"], n)
    total = wall([sys.executable, "-m", "compat", *ARGS], n)
    code = (
        "import time,statistics\n"
        "from compat.matrix import load_matrix\n"
        "ts=[]\n"
        "for _ in range(%d):\n"
        "    t=time.perf_counter(); load_matrix(); ts.append(time.perf_counter()-t)\n"
        "print(statistics.median(ts))\n" % n
    )
    load = float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300, check=True
        ).stdout
    )
    imp = wall([sys.executable, "-c", "import compat.cli"], n)
    print(f"runs per measurement:        {n}")
    print(f"python -c pass (floor):      {floor * 1000:7.1f} ms")
    print(f"import compat.cli (typer):   {imp * 1000:7.1f} ms")
    print(f"compat check ... --json:     {total * 1000:7.1f} ms  (median, process start to exit)")
    print(f"load_matrix() in-process:    {load * 1000:7.1f} ms  ({load / total:.0%} of the check)")


if __name__ == "__main__":
    main()
