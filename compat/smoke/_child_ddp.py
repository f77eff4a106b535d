"""Distributed smoke child: DistributedDataParallel training across local ranks (NCCL on GPUs, gloo on the CPU).

Two roles, one file. The launcher (what compat runs, in its own session) picks the device, backend and world
size, starts one rank process per GPU (2 on the CPU) and watches them: when a rank dies it gives the others a
short grace to fail on their own, then kills them; at its deadline it kills whatever still runs. It writes one
JSON verdict (--out) with every rank's outcome. A rank (--rank R) joins the process group through a file store
(no TCP port to clash with another job), checks an explicit all-reduce, trains a tiny CNN under DDP for a few
steps and checks that the weights are identical on every rank afterwards; it writes its own JSON file.

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
import traceback
from typing import Any, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_common() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_compat_smoke_common", os.path.join(_HERE, "_child_common.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


common = _load_common()
common.drop_own_folder(__file__)

MARKER = common.MARKER
# = compat.output.SCHEMA_VERSION: this script never imports compat (a test keeps them equal)
SCHEMA_VERSION = 1
N_CLASSES = 10
IMAGE = 16
CPU_RANKS = 2
POLL = 0.05
KILL_GRACE = 2.0
TAIL_LINES = 40
CRASH_HOOK = "COMPAT_SMOKE_TEST_CRASH_RANK"
HANG_HOOK = "COMPAT_SMOKE_TEST_HANG_RANK"


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


def _write(path: str, doc: dict[str, Any]) -> None:
    """Atomic: a reader never sees half a file, even if this process dies right here."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, sort_keys=True, allow_nan=False, default=str)
    os.replace(tmp, path)


def _err_text(exc: BaseException) -> dict[str, str]:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return {
        "type": f"{type(exc).__module__}.{type(exc).__name__}",
        "text": text[-20000:],
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-20000:],
    }


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


class Rank:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.t_start = time.time()
        self.timings: dict[str, float] = {}
        self.r: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "status": "running",
            "rank": args.rank,
            "world_size": args.world_size,
            "backend": args.backend,
            "device": None,
            "device_name": None,
            "stage": "start",
            "losses": [],
            "steps": 0,
            "allreduce": None,
            "weights_in_sync": None,
            "error": None,
            "message": None,
            "peak_memory_bytes": None,
            "peak_memory_kind": None,
            "cudnn_used": False,
            "timings": self.timings,
            "pid": os.getpid(),
        }

    def stage(self, name: str) -> None:
        self.r["stage"] = name
        sys.stderr.write(f"{MARKER} stage {name} {time.time() - self.t_start:.3f}\n")
        sys.stderr.flush()
        _write(self.args.out, self.r)

    def hooks(self) -> None:
        rank = str(self.args.rank)
        if os.environ.get(CRASH_HOOK) == rank:
            sys.stderr.write(f"{CRASH_HOOK}={rank}: crashing on purpose (test hook)\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        if os.environ.get(HANG_HOOK) == rank:
            sys.stderr.write(f"{HANG_HOOK}={rank}: hanging on purpose (test hook)\n")
            sys.stderr.flush()
            while True:
                time.sleep(3600)

    def body(self) -> None:
        args = self.args
        self.stage("import")
        t = time.perf_counter()
        import datetime

        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        self.timings["import"] = time.perf_counter() - t
        self.r["framework_version"] = str(torch.__version__)
        if args.backend == "nccl":
            device = torch.device("cuda", args.rank)
            torch.cuda.set_device(device)
            self.r["device_name"] = torch.cuda.get_device_name(device)
            with contextlib.suppress(Exception):  # informational only
                self.r["nccl_version"] = ".".join(str(v) for v in torch.cuda.nccl.version())  # type: ignore[no-untyped-call]
        else:
            device = torch.device("cpu")
            self.r["device_name"] = common.host_cpu_name()
        self.r["device"] = device.type

        self.stage("init")
        t = time.perf_counter()
        dist.init_process_group(
            args.backend,
            init_method="file://" + args.store,
            rank=args.rank,
            world_size=args.world_size,
            timeout=datetime.timedelta(seconds=args.pg_timeout),
        )
        self.timings["init"] = time.perf_counter() - t
        self.hooks()

        self.stage("allreduce")
        t = time.perf_counter()
        x = torch.tensor([float(args.rank + 1)], device=device)
        dist.all_reduce(x)
        got = float(x.item())
        want = args.world_size * (args.world_size + 1) / 2.0
        self.r["allreduce"] = {"got": got, "expected": want}
        self.timings["allreduce"] = time.perf_counter() - t
        if got != want:
            raise RuntimeError(f"all-reduce returned {got}, expected {want}: the collective corrupted data")

        self.stage("setup")
        t = time.perf_counter()
        torch.manual_seed(0)  # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
        nn = torch.nn
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(16, N_CLASSES),
        ).to(device)
        ddp = DDP(model, device_ids=[args.rank] if device.type == "cuda" else None)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        # Each rank its own shard of a learnable task: fixed class prototypes plus noise, seeded by rank.
        g = torch.Generator().manual_seed(1234)
        protos = torch.randn(N_CLASSES, 3, IMAGE, IMAGE, generator=g)
        g.manual_seed(1000 + args.rank)
        batch = args.batch_size
        y = torch.randint(0, N_CLASSES, (batch,), generator=g)
        xb = (protos[y] + 0.3 * torch.randn(batch, 3, IMAGE, IMAGE, generator=g)).to(device)
        y = y.to(device)
        loss_fn = nn.CrossEntropyLoss()
        self.timings["setup"] = time.perf_counter() - t

        self.stage("train")
        t = time.perf_counter()
        losses: list[float] = []
        t_first = 0.0
        for step in range(args.steps):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(ddp(xb), y)
            loss.backward()  # DDP all-reduces the gradients here
            opt.step()
            losses.append(float(loss.item()))
            if step == 0:
                t_first = time.perf_counter() - t
            self.r["losses"] = [common.clean_float(v) for v in losses]
            self.r["steps"] = len(losses)
        train = time.perf_counter() - t
        self.timings["first_step"] = t_first
        self.timings["steady_steps"] = max(0.0, train - t_first)
        if args.steps > 1 and train - t_first > 0:
            self.r["samples_per_second"] = (args.steps - 1) * args.batch_size / (train - t_first)
        if device.type == "cuda":
            cudnn_ok = torch.backends.cudnn.is_available()  # type: ignore[no-untyped-call]
            self.r["cudnn_used"] = bool(cudnn_ok and torch.backends.cudnn.enabled)
            self.r["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated(device))
            self.r["peak_memory_kind"] = "gpu_max_allocated"
        else:
            self.r["peak_memory_bytes"] = common.peak_rss_bytes()
            self.r["peak_memory_kind"] = "host_peak_rss"

        self.stage("verify")
        t = time.perf_counter()
        flat = torch.cat([p.detach().double().reshape(-1) for p in model.parameters()])
        local = float(flat.sum().item())
        both = torch.tensor([local, -local], dtype=torch.float64, device=device)
        dist.all_reduce(both, op=dist.ReduceOp.MAX)
        spread = float(both[0].item() + both[1].item())  # max - min of the weight sums over the ranks
        self.r["weights_in_sync"] = {"checksum": local, "spread": spread}
        if abs(spread) > 1e-9 * max(1.0, abs(local)):
            raise RuntimeError(
                f"after {args.steps} DDP steps the weights differ between ranks (checksum spread "
                f"{spread:.3g}): gradients were not averaged consistently"
            )
        dist.barrier()
        dist.destroy_process_group()
        self.timings["verify"] = time.perf_counter() - t
        ok, why = common.losses_decreased(losses)
        if not ok:
            self.r["status"] = "failed"
            self.r["message"] = why

    def run(self) -> None:
        common.no_core_dumps()
        try:
            self.body()
            if self.r["status"] == "running":
                self.r["status"] = "passed"
        except BaseException as exc:
            err = _err_text(exc)
            self.r["status"] = "failed"
            self.r["error"] = err
            last = err["text"].splitlines()[-1] if err["text"] else type(exc).__name__
            self.r["message"] = f"{last[:500]} (during {self.r['stage']})"
            sys.stderr.write(err["traceback"])
        self.timings["total"] = time.time() - self.t_start
        if self.r["status"] == "passed":
            self.stage("done")
        else:
            _write(self.args.out, self.r)
        sys.stdout.flush()
        sys.stderr.flush()
        # Not sys.exit: the verdict is on disk, and tearing a framework down can take seconds or crash.
        os._exit(0 if self.r["status"] == "passed" else 1)


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
