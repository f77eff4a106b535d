"""Distributed smoke child: DistributedDataParallel training across local ranks (NCCL on GPUs, gloo on the CPU).

Two roles, one entry script. The launcher (what compat runs, in its own session) picks the device, backend and
world size, starts one rank process per GPU (2 on the CPU) and watches them: when a rank dies it gives the others a
short grace to fail on their own, then kills them; at its deadline it kills whatever still runs. It writes one
JSON verdict (--out) with every rank's outcome. A rank (--rank R) joins the process group through a file store
(no TCP port to clash with another job), checks an explicit all-reduce, trains a tiny CNN under DDP for a few
steps and checks that the weights are identical on every rank afterwards; it writes its own JSON file. The
rank role lives in _child_ddp_rank.py, loaded by path: the launcher re-runs this script with --rank R.

Standard library plus torch only: no compat import (the environment under test need not have compat).

Test-only hooks (never set them outside compat's own tests):
  COMPAT_SMOKE_TEST_CRASH_RANK=R  rank R kills itself with SIGSEGV right after joining the process group.
  COMPAT_SMOKE_TEST_HANG_RANK=R   rank R sleeps forever right after joining the process group.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_rank() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_compat_smoke_ddp_rank", os.path.join(_HERE, "_child_ddp_rank.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The rank role (_child_ddp_rank.py) loads _child_common.py and takes compat/smoke off sys.path.
_rank = _load_rank()
common = _rank.common
Rank = _rank.Rank
_write = _rank._write
_err_text = _rank._err_text

MARKER = common.MARKER
SCHEMA_VERSION = _rank.SCHEMA_VERSION
CPU_RANKS = 2
POLL = 0.05
KILL_GRACE = 2.0
TAIL_LINES = 40


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="compat-smoke-ddp")
    p.add_argument("--out", required=True, help="the JSON result (launcher: the verdict; rank: its own file)")
    p.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32, help="samples per rank and step")
    p.add_argument(
        "--nproc", type=int, default=0, help="launcher: ranks to start (0: one per GPU, 2 on the CPU)"
    )
    p.add_argument("--workdir", default=None, help="launcher: where rank files and the store live")
    p.add_argument(
        "--deadline", type=float, default=120.0, help="launcher: seconds before every rank is killed"
    )
    p.add_argument("--pg-timeout", type=float, default=60.0, help="seconds a collective may wait")
    p.add_argument(
        "--grace",
        type=float,
        default=10.0,
        help="launcher: seconds the other ranks get to fail on their own after one died",
    )
    p.add_argument("--t0", type=float, default=0.0, help="the parent's time.time() just before the spawn")
    # rank role
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--world-size", type=int, default=0)
    p.add_argument("--backend", default="gloo", choices=("gloo", "nccl"))
    p.add_argument("--store", default=None, help="rank: the file store path shared by all ranks")
    return p.parse_args(argv)


# ------------------------------------------------------------------------------------------------ rank


def _die_with_parent() -> Any:
    """Linux: a preexec function giving the rank PR_SET_PDEATHSIG=SIGKILL, so that the ranks die with this
    launcher, which itself dies with compat (compat._proc gives it the same): a SIGKILLed compat leaves no rank."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG

    return preexec


# ------------------------------------------------------------------------------------------------ launcher


def _read_json(path: str) -> Optional[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _tail(path: str, lines: int = TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    kept = [ln for ln in text.splitlines() if not ln.startswith(MARKER)]
    return "\n".join(kept[-lines:])


def _last_stage(path: str) -> Optional[str]:
    stage = None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(MARKER + " stage "):
                    parts = line.split()
                    if len(parts) >= 3:
                        stage = parts[2]
    except OSError:
        return None
    return stage


class Launcher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.t_start = time.time()
        self.workdir = args.workdir or os.path.dirname(os.path.abspath(args.out))
        self.terminated = False
        self.r: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "status": "running",
            "role": "launcher",
            "stage": "start",
            "device": None,
            "backend": None,
            "world_size": None,
            "framework_version": None,
            "ranks": [],
            "first_failed_rank": None,
            "message": None,
            "error": None,
            "timings": {},
            "launcher_pid": os.getpid(),
        }

    def write(self) -> None:
        _write(self.args.out, self.r)

    def stage(self, name: str) -> None:
        self.r["stage"] = name
        sys.stderr.write(f"{MARKER} stage {name} {time.time() - self.t_start:.3f}\n")
        sys.stderr.flush()
        self.write()

    def fail(self, message: str, problem: str) -> None:
        self.r["status"] = "failed"
        self.r["message"] = message
        self.r["plan_problem"] = problem

    def plan(self) -> Optional[tuple[str, str, int]]:
        """(device, backend, world size), or None after fail()."""
        args = self.args
        want = args.nproc
        if args.device == "cpu":
            return "cpu", "gloo", want or CPU_RANKS
        t = time.perf_counter()
        import torch
        import torch.distributed as dist

        self.r["timings"]["import"] = time.perf_counter() - t
        self.r["framework_version"] = str(torch.__version__)
        if not dist.is_available():
            self.fail("this PyTorch build has no torch.distributed support", "no_distributed")
            return None
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        self.r["gpus_visible"] = n
        if n == 0:
            if args.device == "cuda":
                self.fail(
                    "no CUDA-capable device is visible to torch (torch.cuda.is_available() is False): "
                    "NCCL needs GPUs",
                    "no_gpu",
                )
                return None
            return "cpu", "gloo", want or CPU_RANKS
        if want > n:
            self.fail(
                f"{want} ranks were asked for but only {n} GPU(s) are visible (one rank per GPU)",
                "too_many_ranks",
            )
            return None
        if not dist.is_nccl_available():
            self.fail(
                "this PyTorch build has no NCCL backend (torch.distributed.is_nccl_available() is False)",
                "no_nccl",
            )
            return None
        return "cuda", "nccl", want or n

    def spawn(self, device: str, backend: str, world: int) -> list[dict[str, Any]]:
        args = self.args
        store = os.path.join(self.workdir, "store")
        env = dict(os.environ)
        if device == "cpu":
            env.setdefault("OMP_NUM_THREADS", "1")  # two ranks on a two-core machine must not oversubscribe
        ranks: list[dict[str, Any]] = []
        for r in range(world):
            out = os.path.join(self.workdir, f"rank-{r}.json")
            err = os.path.join(self.workdir, f"rank-{r}.err")
            argv = [
                sys.executable,
                "-X",
                "faulthandler",
                os.path.abspath(__file__),
                "--rank",
                str(r),
                "--world-size",
                str(world),
                "--backend",
                backend,
                "--store",
                store,
                "--out",
                out,
                "--steps",
                str(args.steps),
                "--batch-size",
                str(args.batch_size),
                "--pg-timeout",
                repr(args.pg_timeout),
                "--device",
                device,
            ]
            with open(err, "wb") as ef:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=ef,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=self.workdir,
                    preexec_fn=_die_with_parent(),  # noqa: PLW1509 - a prctl call only
                )
            ranks.append(
                {
                    "rank": r,
                    "proc": proc,
                    "out": out,
                    "err": err,
                    "ended": None,
                    "killed": False,
                    "t_start": time.time(),
                }
            )
        return ranks

    def _kill(self, ranks: list[dict[str, Any]], why: str) -> None:
        alive = [x for x in ranks if x["proc"].poll() is None]
        for x in alive:
            x["killed"] = why
            with contextlib.suppress(OSError):
                x["proc"].terminate()
        end = time.monotonic() + KILL_GRACE
        while time.monotonic() < end and any(x["proc"].poll() is None for x in alive):
            time.sleep(POLL)
        for x in alive:
            if x["proc"].poll() is None:
                with contextlib.suppress(OSError):
                    x["proc"].kill()
        for x in alive:
            x["proc"].wait()
            x["ended"] = x["ended"] or time.time()

    def watch(self, ranks: list[dict[str, Any]]) -> None:
        deadline = time.monotonic() + max(1.0, self.args.deadline - (time.time() - self.t_start))
        first_fail: Optional[float] = None
        order: list[int] = []
        while True:
            batch = []
            for x in ranks:
                if x["ended"] is None and x["proc"].poll() is not None:
                    x["ended"] = time.time()
                    if x["proc"].returncode != 0:
                        batch.append(x)
            # Ranks seen ending in the same poll: one killed by a signal died first; the others noticed.
            batch.sort(key=lambda x: (x["proc"].returncode >= 0, x["rank"]))
            order.extend(x["rank"] for x in batch)
            if batch and first_fail is None:
                first_fail = time.monotonic()
            if all(x["ended"] is not None for x in ranks):
                break
            if self.terminated:
                self._kill(ranks, "terminated")
                break
            if first_fail is not None and time.monotonic() - first_fail > self.args.grace:
                self._kill(ranks, "after_failure")
                break
            if time.monotonic() > deadline:
                self._kill(ranks, "deadline")
                break
            time.sleep(POLL)
        self.r["failure_order"] = order
        self.r["first_failed_rank"] = order[0] if order else None

    def collect(self, ranks: list[dict[str, Any]]) -> None:
        out = []
        for x in ranks:
            doc = _read_json(x["out"]) or {}
            rc = x["proc"].returncode
            entry: dict[str, Any] = {
                "rank": x["rank"],
                "pid": x["proc"].pid,
                "exit_code": rc,
                "signal": -rc if isinstance(rc, int) and rc < 0 else None,
                "killed": x["killed"] or None,
                "seconds": round((x["ended"] or time.time()) - x["t_start"], 3),
                "stage": doc.get("stage") or _last_stage(x["err"]),
                "result": doc or None,
            }
            if rc != 0 or doc.get("status") != "passed":
                entry["output_tail"] = _tail(x["err"])
            out.append(entry)
        self.r["ranks"] = out
        bad = [e for e in out if e["exit_code"] != 0 or (e["result"] or {}).get("status") != "passed"]
        if not bad:
            self.r["status"] = "passed"
        elif any(e["killed"] == "deadline" for e in out):
            self.r["status"] = "timed_out"
            self.r["message"] = (
                f"no verdict within {self.args.deadline:g} s: rank(s) still running were killed"
            )
        else:
            self.r["status"] = "failed"

    def _on_term(self, signum: int, frame: Any) -> None:
        self.terminated = True

    def run(self) -> None:
        common.no_core_dumps()
        signal.signal(signal.SIGTERM, self._on_term)
        if self.args.t0:
            self.r["timings"]["child_start"] = max(0.0, self.t_start - self.args.t0)
        ranks: list[dict[str, Any]] = []
        try:
            self.stage("plan")
            planned = self.plan()
            if planned is not None:
                device, backend, world = planned
                self.r.update({"device": device, "backend": backend, "world_size": world})
                self.stage("ranks")
                t = time.perf_counter()
                ranks = self.spawn(device, backend, world)
                self.r["rank_pids"] = [x["proc"].pid for x in ranks]
                self.write()
                self.watch(ranks)
                self.r["timings"]["ranks"] = time.perf_counter() - t
                self.collect(ranks)
        except BaseException as exc:
            self.r["status"] = "failed"
            self.r["error"] = _err_text(exc)
            self.r["message"] = (self.r["error"]["text"].splitlines() or [type(exc).__name__])[-1][:500]
            if ranks:
                self._kill(ranks, "launcher_error")
                self.collect(ranks)
                self.r["status"] = "failed"
            sys.stderr.write(self.r["error"]["traceback"])
        self.r["timings"]["launcher_total"] = time.time() - self.t_start
        self.r["child_end_time"] = time.time()
        self.r["stage"] = "done"
        self.write()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if self.r["status"] == "passed" else 1)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.rank is not None:
        Rank(args).run()
    else:
        Launcher(args).run()


if __name__ == "__main__":
    main(sys.argv[1:])
