"""Benchmark: what the run recorder costs (target: at most 1% of one core at 1 Hz, no change to throughput).

Prints, side by side in one run:
  recorder CPU      CPU seconds of the sampling loop (this process) plus the GPU sampler child (pynvml, where a
                    GPU is present), as a percentage of one core, while it records a sleeping process at --interval
  throughput        iterations/s of a CPU-bound child run directly versus under `compat run` (run_command, with
                    output passed through), alternating, median of R rounds; the ratio should be ~1.00
  one-off costs     CPU seconds of the start (sampler child start) and of the end (final readings, explain,
                    verdict, record) of one `compat run`
Run: python bench/bench_record.py [SECONDS] [ROUNDS] [INTERVAL]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORK = """
import sys, time
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    for _ in range(10000):
        n += 1
    if n % 2000000 == 0:
        print('step', n, flush=True)
print('RESULT', n / float(sys.argv[1]), time.process_time(), flush=True)
"""


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def recorder_cpu(seconds: float, interval: float) -> tuple[float, float, int, str]:
    """(% of one core for this process, % for the sampler child, samples taken, GPU status) over a sleeping child."""
    from compat.record.document import RunRecord
    from compat.record.recorder import Recorder

    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds + 30})"])
    rec = RunRecord("run", child.pid)
    r = Recorder(rec, child.pid, interval=interval)
    r.start()
    time.sleep(3.0)  # let the sampler child start (its interpreter start is a one-off, not per sample)
    c0, t0 = time.process_time(), time.monotonic()
    sampler = r.gpu.proc.pid if r.gpu is not None and r.gpu.proc is not None else None
    s0 = _proc_cpu(sampler)
    n0 = len(r.timeline.samples)
    time.sleep(seconds)
    c1, t1 = time.process_time(), time.monotonic()
    s1 = _proc_cpu(sampler)
    n1 = len(r.timeline.samples)
    r.stop()
    child.kill()
    child.wait()
    gpu = "GPU sampled" if rec.gpu.get("available") else f"no GPU ({rec.gpu.get('reason')})"
    wall = t1 - t0
    return 100 * (c1 - c0) / wall, 100 * (s1 - s0) / wall, n1 - n0, gpu


def _proc_cpu(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def throughput(seconds: float, rounds: int, interval: float) -> tuple[float, float, float, float]:
    from compat.record.run import run_command

    direct, recorded, start_end = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "work.py"
        script.write_text(WORK)
        os.environ["COMPAT_CACHE_DIR"] = tmp
        for _ in range(rounds):
            out = subprocess.run(
                [sys.executable, str(script), str(seconds)], capture_output=True, text=True
            ).stdout
            direct.append(float(out.strip().splitlines()[-1].split()[1]))
            log = Path(tmp) / "out.txt"
            saved = os.dup(1)
            with open(log, "wb") as fh:
                os.dup2(fh.fileno(), 1)
                try:
                    cpu0, ch0 = time.process_time(), children_cpu()
                    run_command(
                        [sys.executable, str(script), str(seconds)],
                        interval=interval,
                        summary=False,
                        keep=False,
                    )
                    cpu1, ch1 = time.process_time(), children_cpu()
                finally:
                    os.dup2(saved, 1)
                    os.close(saved)
            last = log.read_text().strip().splitlines()[-1].split()
            recorded.append(float(last[1]))
            child_cpu = float(last[2])
            # everything compat spent for this run: its own threads and its sampler child (not the workload)
            start_end.append((cpu1 - cpu0) + (ch1 - ch0 - child_cpu))
    print(f"  rounds direct   {', '.join(f'{x:,.0f}' for x in direct)}")
    print(f"  rounds recorded {', '.join(f'{x:,.0f}' for x in recorded)}")
    return statistics.median(direct), statistics.median(recorded), statistics.median(start_end), seconds


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    own, sampler, n, gpu = recorder_cpu(seconds, interval)
    print(f"recorder at {1 / interval:.1f} Hz over {seconds:.0f} s ({n} samples, {gpu}):")
    print(f"  sampling loop (compat process)   {own:6.3f} % of one core")
    print(f"  GPU sampler child                {sampler:6.3f} % of one core")
    print(f"  total                            {own + sampler:6.3f} % of one core (target <= 1 %)")
    print(f"throughput of a CPU-bound child, median of {rounds} alternating rounds of {seconds / 2:.0f} s:")
    d, r, total_cpu, _ = throughput(seconds / 2, rounds, interval)
    print(f"  direct                           {d:,.0f} it/s")
    print(f"  under compat run                 {r:,.0f} it/s   ratio {r / d:.3f}")
    print(f"  compat's whole CPU for one run   {total_cpu:.2f} s (start, sampling, tee, final verdict)")
    print(f"cores on this machine: {os.cpu_count()}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
