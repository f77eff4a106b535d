"""Benchmark: the cost of `import compat` and of `compat.guard()` at the top of a training script.

Prints medians (N runs each, fresh interpreters) side by side:
  python -c "pass"                          the interpreter floor
  python -c "import compat"                 must not pull in typer, rich, yaml, pynvml or a framework
  python -c "import compat; compat.guard()" warm (cached verdict) and cold (cache emptied before each run)
  python -c "import torch"                  for scale, when torch is installed
Run: python bench/bench_guard.py [N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUARD = "import warnings, compat\nwarnings.simplefilter('ignore')\ntry:\n    compat.guard()\nexcept compat.IncompatibleEnvironment:\n    pass\n"


def median_ms(code: str, n: int, env: dict[str, str], before: object = None) -> float:
    times = []
    for _ in range(n):
        if callable(before):
            before()
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=300,
            check=False,
        )
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    cache = Path(tempfile.mkdtemp(prefix="compat-bench-"))
    env = {**os.environ, "COMPAT_CACHE_DIR": str(cache)}
    floor = median_ms("pass", n, env)
    imp = median_ms("import compat", n, env)
    subprocess.run(
        [sys.executable, "-c", GUARD], cwd=ROOT, env=env, check=False, timeout=300
    )  # prime the cache
    warm = median_ms(GUARD, n, env)

    def clear() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    cold = median_ms(GUARD, max(3, n // 4), env, before=clear)
    rows = [
        ("python -c pass", floor),
        ("import compat", imp),
        ("compat.guard() warm (cached)", warm),
        ("compat.guard() cold", cold),
    ]
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            rows.append(("import torch (for scale)", median_ms("import torch", max(3, n // 4), env)))
    except Exception:  # noqa: BLE001
        pass
    print(f"runs: {n} (cold and torch: {max(3, n // 4)})")
    for name, ms in rows:
        print(f"{name:32s} {ms:8.1f} ms   (+{ms - floor:7.1f} ms over the floor)")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
