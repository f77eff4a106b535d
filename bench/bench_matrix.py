"""Benchmark: loading the matrix cold (empty parsed-matrix cache) against warm (cache filled), in one run.

Each figure is the median of N in-process `load_matrix()` calls on the shipped matrix: cold with a fresh, empty
cache directory every time (YAML parsed, cache written), warm with the cache from the previous call (YAML not
parsed; rows still built and validated), and the YAML parse alone for reference.
Run: python bench/bench_matrix.py [N]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat.matrix import CORE_FILES, load_matrix, load_yaml  # noqa: E402


def _median(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(n: int = 15) -> None:
    import os

    d = ROOT / "matrix"
    texts = [(d / name).read_text(encoding="utf-8") for name in CORE_FILES]
    with tempfile.TemporaryDirectory() as tmp:

        def cold() -> None:
            os.environ["COMPAT_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
            load_matrix(d)

        def warm() -> None:
            load_matrix(d)

        def nocache() -> None:
            load_matrix(d, cache=False)

        c = _median(cold, n)
        os.environ["COMPAT_CACHE_DIR"] = str(Path(tmp) / "warm")
        load_matrix(d)  # fill the cache
        w = _median(warm, n)
        off = _median(nocache, n)
        y = _median(lambda: [load_yaml(t) for t in texts], n)
    print(f"matrix load, median of {n}:")
    print(f"  cold (cache empty, YAML parsed, cache written): {c * 1000:7.1f} ms")
    print(f"  warm (cache hit, rows built and validated):      {w * 1000:7.1f} ms")
    print(f"  cache=False:                                     {off * 1000:7.1f} ms")
    print(f"  YAML parse alone (core files):                   {y * 1000:7.1f} ms")
    print(f"  warm / cold: {w / c:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
