"""Benchmark: `compat doctor --no-smoke` side by side with `python -m torch.utils.collect_env`.

Both run in fresh interpreters of this environment (torch must be installed for the comparison), N times each;
medians and their ratio are printed. The doctor is measured twice:
  warm   the default: a framework import that succeeded before, with nothing it depends on changed since
         (interpreter, every installed distribution, the framework's files, CUDA/LD/framework variables, the
         driver, /dev/nvidia*, this boot), is not repeated (compat.probes.frameworks.cache_key)
  cold   --no-cache: every installed framework is imported afresh in a child interpreter (torch and TensorFlow
         in parallel), as on the first run or after anything changed
It also prints what each reports (lines of output; for the doctor: findings, skips and probe sections), and the
doctor's own per-probe timings.
Run: python bench/bench_doctor.py [N]
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    res = subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - t, res.stdout


def median_s(argv: list[str], n: int, env: dict[str, str]) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(n):
        s, out = timed(argv, env)
        times.append(s)
    return statistics.median(times), out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    if importlib.util.find_spec("torch") is None:
        sys.exit("bench_doctor: torch is not installed in this environment (collect_env needs it)")
    cache = Path(tempfile.mkdtemp(prefix="compat-bench-doctor-"))
    env = {
        **os.environ,
        "COMPAT_CACHE_DIR": str(cache),
        "NO_COLOR": "1",
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    doctor = [sys.executable, "-m", "compat", "doctor", "--no-smoke", "--json"]
    collect = [sys.executable, "-m", "torch.utils.collect_env"]
    try:
        timed(doctor, env)  # the first run imports the frameworks and fills the cache
        warm, doc_text = median_s(doctor, n, env)
        cold, _ = median_s([*doctor, "--no-cache"], max(3, n // 2), env)
        ce, ce_text = median_s(collect, n, env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    doc = json.loads(doc_text)
    meta = doc.get("probes", {}).get("meta", {})
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; runs: {n} (doctor --no-cache: {max(3, n // 2)})"
    )
    print(f"{'command':52s} {'median':>9s} {'vs collect_env':>15s}")
    for label, s in (
        ("python -m torch.utils.collect_env", ce),
        ("compat doctor --no-smoke (warm: import cached)", warm),
        ("compat doctor --no-smoke --no-cache (cold)", cold),
    ):
        print(f"{label:52s} {s * 1000:7.0f} ms {ce / s:13.2f}x")
    print()
    print(f"collect_env: {len([ln for ln in ce_text.splitlines() if ln.strip()])} lines of text")
    print(
        f"doctor: {len(doc.get('findings', []))} findings, {len(doc.get('skipped', []))} skipped checks, "
        f"{len(doc.get('facts', {}))} facts, probe sections: {', '.join(meta.get('probes', []))}"
    )
    print(
        "doctor probe seconds (last warm run): "
        + ", ".join(f"{k} {v:.3f}" for k, v in sorted(meta.get("seconds", {}).items()))
    )


if __name__ == "__main__":
    main()
