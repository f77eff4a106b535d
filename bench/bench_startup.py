"""Benchmark: compat's start-up budget (issue 12, item 8), measured side by side in one run.

Each command runs N times in a fresh interpreter, the commands interleaved round-robin so that a change in the
machine's load hits them alike; the median wall time of each is printed with its difference from, and ratio to,
`python -c pass`. Targets:

    compat check ... --json       within +100 ms of `python -c pass`
    compat --help                 within +80 ms of `python -c pass`
    compat doctor --no-smoke      (warm) at least 10x faster than `python -m torch.utils.collect_env`

The doctor runs with `--python` set to this interpreter, so that it inspects the environment collect_env reports on
(by default it would inspect the python3 on PATH, maybe another environment behind a pyenv shim).

Before timing, every command runs once (the warm-up): bytecode is written, the matrix cache and the doctor's
import cache are filled, as on a machine where compat has run before. PYTHONDONTWRITEBYTECODE is removed from the
children's environment (an installed wheel has its bytecode; without it every run would compile compat).

Run: python bench/bench_startup.py [-n N] [--json] [--strict]   (--strict: exit 1 when a target is missed)
"""

from __future__ import annotations

import argparse
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
from typing import Any, NamedTuple, Optional

ROOT = Path(__file__).resolve().parent.parent
CHECK_ARGS = ["--driver", "550.54.15", "--torch", "2.5.1", "--gpu", "RTX 4090", "--python", "3.11", "--json"]


class Cmd(NamedTuple):
    name: str
    argv: list[str]
    ok: tuple[int, ...]
    """Exit codes that mean the command did its work (a failing command would time the wrong thing)."""
    runs: Optional[int] = None
    """Fewer runs for a slow reference command (None: N)."""


def commands(n: int) -> list[Cmd]:
    py = sys.executable
    out = [
        Cmd("python -c pass", [py, "-c", "pass"], (0,)),
        Cmd("import compat", [py, "-c", "import compat"], (0,)),
        Cmd("compat --help", [py, "-m", "compat", "--help"], (0,)),
        Cmd("compat check", [py, "-m", "compat", "check", *CHECK_ARGS], (0, 1)),
        # --python: the doctor inspects the environment collect_env reports on (this interpreter's), as it does by
        # default from an activated virtual environment; without it, it would inspect the python3 on PATH.
        Cmd(
            "compat doctor --no-smoke (warm)",
            [py, "-m", "compat", "doctor", "--no-smoke", "--json", "--python", py],
            (0, 1),
        ),
    ]
    if importlib.util.find_spec("torch") is not None:
        out.append(
            Cmd("torch.utils.collect_env", [py, "-m", "torch.utils.collect_env"], (0,), max(3, min(n, 5)))
        )
    return out


def child_env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COMPAT_CACHE_DIR"] = cache
    env["NO_COLOR"] = "1"
    return env


def run_once(cmd: Cmd, env: dict[str, str]) -> float:
    t = time.perf_counter()
    res = subprocess.run(
        cmd.argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=str(ROOT),
        timeout=300,
        check=False,
    )
    took = time.perf_counter() - t
    if res.returncode not in cmd.ok:
        tail = res.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise SystemExit(f"bench_startup: {cmd.name} exited {res.returncode}: {tail[0][:200]}")
    return took


def measure(n: int) -> dict[str, dict[str, Any]]:
    cache = tempfile.mkdtemp(prefix="compat-bench-cache-")
    try:
        env = child_env(cache)
        cmds = commands(n)
        for cmd in cmds:  # warm-up: bytecode, the matrix cache, the doctor's import cache
            run_once(cmd, env)
        times: dict[str, list[float]] = {c.name: [] for c in cmds}
        for i in range(n):
            for cmd in cmds:
                if i < (cmd.runs or n):
                    times[cmd.name].append(run_once(cmd, env))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        name: {"median_ms": statistics.median(ts) * 1000, "min_ms": min(ts) * 1000, "runs": len(ts)}
        for name, ts in times.items()
    }


def verdicts(res: dict[str, dict[str, Any]]) -> list[tuple[str, bool, str]]:
    floor = res["python -c pass"]["median_ms"]
    out = []
    check = res["compat check"]["median_ms"] - floor
    out.append(("compat check within +100 ms of python -c pass", check <= 100, f"+{check:.0f} ms"))
    helps = res["compat --help"]["median_ms"] - floor
    out.append(("compat --help within +80 ms of python -c pass", helps <= 80, f"+{helps:.0f} ms"))
    if "torch.utils.collect_env" in res:
        ratio = (
            res["torch.utils.collect_env"]["median_ms"] / res["compat doctor --no-smoke (warm)"]["median_ms"]
        )
        out.append(("doctor --no-smoke (warm) >= 10x faster than collect_env", ratio >= 10, f"{ratio:.1f}x"))
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=15, help="runs per command (default 15)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("-n must be at least 1")
    res = measure(args.n)
    checks = verdicts(res)
    floor = res["python -c pass"]["median_ms"]
    if args.json:
        print(
            json.dumps(
                {
                    "python": sys.version.split()[0],
                    "cpus": os.cpu_count(),
                    "results": res,
                    "targets": [{"target": t, "met": ok, "value": v} for t, ok, v in checks],
                },
                indent=2,
            )
        )
    else:
        print(f"compat start-up, median of N fresh interpreters (Python {sys.version.split()[0]})")
        print(f"{'command':<36} {'runs':>4} {'median':>10} {'vs pass':>10} {'ratio':>7}")
        for name, r in res.items():
            m = r["median_ms"]
            print(f"{name:<36} {r['runs']:>4} {m:>8.1f}ms {m - floor:>+8.1f}ms {m / floor:>6.1f}x")
        print()
        for target, ok, value in checks:
            print(f"[{'met' if ok else 'MISSED'}] {target}: {value}")
    return 1 if args.strict and not all(ok for _, ok, _ in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
