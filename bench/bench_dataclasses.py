"""Benchmark: what `compat doctor` spends defining its value classes as records, and as plain dataclasses.

Each run is a fresh interpreter that runs `compat doctor --no-smoke --json` in-process with `compat._valueclass.valueclass`
timed, or replaced by `dataclasses.dataclass` with the same options (--dataclass), and prints how many classes the
run defined, the milliseconds spent defining them, and for records the milliseconds spent compiling the `__init__`
of those instantiated (compiled lazily): CPU time of the defining thread, so that other processes and the doctor's
own probe threads do not count. Runs alternate between the two, so that a change in load hits both alike;
the medians are printed. Compare interpreters by running it with each:

    python bench/bench_dataclasses.py [-n N] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def child(as_dataclass: bool) -> dict[str, float]:
    """One measured doctor run in this process (call it first thing in a fresh interpreter)."""
    from compat import _valueclass as _record

    spent = {"classes": 0.0, "define_ms": 0.0, "compile_ms": 0.0}
    real_make, real_init_fn = _record._make, _record._init_fn

    def make(cls: Any, frozen: bool, kw_only: bool) -> Any:
        t = time.thread_time()
        try:
            if as_dataclass:
                return dataclasses.dataclass(cls, frozen=frozen, kw_only=kw_only)
            return real_make(cls, frozen, kw_only)
        finally:
            spent["define_ms"] += (time.thread_time() - t) * 1e3
            spent["classes"] += 1

    def init_fn(cls: type, frozen: bool) -> Any:
        t = time.thread_time()
        try:
            return real_init_fn(cls, frozen)
        finally:
            spent["compile_ms"] += (time.thread_time() - t) * 1e3

    _record._make, _record._init_fn = make, init_fn  # type: ignore[assignment]
    from compat.cli import main

    with redirect_stdout(io.StringIO()):
        try:
            main(["doctor", "--no-smoke", "--json", "--python", sys.executable])
        except SystemExit:
            pass
    return spent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("-n", type=int, default=7, help="runs of each (default 7)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", choices=["record", "dataclass"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "dataclass")))
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    runs: dict[str, list[dict[str, float]]] = {"record": [], "dataclass": []}
    for i in range(args.n + 1):  # the first round warms the bytecode and the doctor's caches
        for mode in runs:
            cmd = [sys.executable, __file__, "--child", mode]
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=True).stdout
            if i:
                runs[mode].append(json.loads(out.splitlines()[-1]))
    result = {
        "python": ".".join(map(str, sys.version_info[:3])),
        **{
            mode: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]}
            for mode, rs in runs.items()
        },
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"Python {result['python']}, median of {args.n} doctor runs:")
        for mode in runs:
            r: Any = result[mode]
            print(
                f"  {mode:9}  {int(r['classes'])} classes  define {r['define_ms']:6.1f} ms"
                f"  + __init__ compiled on first use {r['compile_ms']:5.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
