"""Benchmark: the fleet report for large clusters, and `compat fleet merge` over 64 report files.

Prints the median in-process time of build_fleet() for N nodes (recorded doctor reports from tests/data/fleet,
renamed), and the median wall time of the real `compat fleet merge --json` over 64 files (interpreter start
included). Run: python bench/bench_fleet.py [RUNS]
"""

from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat.fleet.report import NodeInput, build_fleet  # noqa: E402

REPORTS = sorted((ROOT / "tests" / "data" / "fleet" / "cluster-a").glob("*.json"))


def nodes(n: int) -> list[NodeInput]:
    docs = [json.loads(p.read_text()) for p in REPORTS]
    out = []
    for i in range(n):
        doc = copy.deepcopy(docs[i % len(docs)])
        doc["host"] = f"node-{i:05d}"
        out.append(NodeInput(doc["host"], f"{doc['host']}.json", "reported", doc))
    return out


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for n in (64, 512, 4096):
        inputs = nodes(n)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            build_fleet(inputs, source="bench")
            times.append(time.perf_counter() - t0)
        print(f"build_fleet, {n:5d} nodes: {statistics.median(times) * 1000:8.1f} ms (median of {runs})")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for node in nodes(64):
            p = Path(tmp) / f"{node.name}.json"
            p.write_text(json.dumps(node.doc))
            files.append(str(p))
        walls = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "compat", "fleet", "merge", "--json", *files],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                timeout=300,
                check=False,
            )
            walls.append(time.perf_counter() - t0)
        print(
            f"compat fleet merge --json, 64 files: {statistics.median(walls) * 1000:8.1f} ms wall (median of {runs})"
        )


if __name__ == "__main__":
    main()
