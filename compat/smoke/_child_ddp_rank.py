"""Distributed smoke child, the rank role: one rank of the DistributedDataParallel run that _child_ddp.py (the
launcher) starts. It joins the process group through a file store, checks an explicit all-reduce, trains a tiny
CNN under DDP for a few steps, checks that the weights are identical on every rank afterwards and writes its own
JSON file. Loaded by _child_ddp.py by path (the launcher re-runs that script with --rank R for each rank).

Standard library plus torch only: no compat import (the environment under test need not have compat).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import sys
import time
import traceback
from typing import Any

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
# = compat.schema_version.SCHEMA_VERSION: this script never imports compat (a test keeps them equal)
SCHEMA_VERSION = 1
N_CLASSES = 10
IMAGE = 16
CRASH_HOOK = "COMPAT_SMOKE_TEST_CRASH_RANK"
HANG_HOOK = "COMPAT_SMOKE_TEST_HANG_RANK"


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
