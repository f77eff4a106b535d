"""Smoke-training child for PyTorch: a tiny CNN trained for a few steps, run by compat in its own process.

Usage: python _child_torch.py --out RESULT.json [--device auto|cuda|cpu] [--steps N] [--batch-size N] [--amp]
[--find-max-batch] ... The JSON result goes to --out (never stdout), progress markers to stderr. Standard
library plus torch only: no compat import (the interpreter under test may not have compat installed).
"""

from __future__ import annotations

import copy
import gc
import importlib
import importlib.util
import os
import sys
import time
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

N_CLASSES = 10
IMAGE = 32


def build_model(torch: Any) -> Any:
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, bias=False),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(32, N_CLASSES),
    )


def make_data(torch: Any, batch: int, seed: int) -> tuple[Any, Any]:
    """A learnable synthetic task: each class is a fixed random image, each sample that image plus noise."""
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(N_CLASSES, 3, IMAGE, IMAGE, generator=g)
    y = torch.randint(0, N_CLASSES, (batch,), generator=g)
    x = protos[y] + 0.5 * torch.randn(batch, 3, IMAGE, IMAGE, generator=g)
    return x, y


def amp_setup(torch: Any, device: Any) -> tuple[Optional[Any], Optional[str], Optional[Any]]:
    """(autocast dtype, its name, grad scaler): bf16 where the device supports it, else fp16 with a scaler."""
    if device.type == "cuda":
        # Native bf16 from Ampere (8.0) on; newer PyTorch also calls emulated bf16 "supported" on older GPUs.
        if torch.cuda.get_device_capability(device)[0] >= 8 and torch.cuda.is_bf16_supported():
            return torch.bfloat16, "bf16", None
        try:
            scaler = torch.amp.GradScaler("cuda")
        except (AttributeError, TypeError):  # torch < 2.3
            scaler = torch.cuda.amp.GradScaler()
        return torch.float16, "fp16", scaler
    return torch.bfloat16, "bf16", None  # CPU autocast supports bf16 only


class Trainer:
    def __init__(self, torch: Any, device: Any, seed: int, amp: bool) -> None:
        self.torch = torch
        self.device = device
        torch.manual_seed(seed)
        self.model = build_model(torch).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.dtype, self.amp_name, self.scaler = amp_setup(torch, device) if amp else (None, None, None)

    def step(self, x: Any, y: Any) -> Any:
        """Forward, backward, optimizer step; returns the loss tensor (not synchronised)."""
        torch = self.torch
        self.opt.zero_grad(set_to_none=True)
        if self.dtype is not None:
            with torch.autocast(device_type=self.device.type, dtype=self.dtype):
                loss = self.loss_fn(self.model(x), y)
        else:
            loss = self.loss_fn(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        return loss.detach()

    def sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()


def pick_device(torch: Any, want: str) -> Any:
    if want == "cpu":
        return torch.device("cpu")
    available = torch.cuda.is_available()
    if want == "cuda" and not available:
        # Let PyTorch say why in its own words ("Torch not compiled with CUDA enabled", "The NVIDIA driver on
        # your system is too old", "no CUDA-capable device is detected"): those are what explain recognises.
        torch.zeros(1, device="cuda")
        if torch.version.cuda is None:
            raise RuntimeError(
                f"--device cuda: this PyTorch ({torch.__version__}) is a CPU-only build (torch.version.cuda is None)"
            )
        raise RuntimeError(
            f"--device cuda: torch.cuda.is_available() is False (PyTorch {torch.__version__} built for CUDA "
            f"{torch.version.cuda}; torch.cuda.device_count() = {torch.cuda.device_count()}): "
            "no CUDA-capable device is visible"
        )
    return torch.device("cuda" if available else "cpu")


def compare_with_cpu(c: Any, torch: Any, trainer: Trainer, x: Any) -> dict[str, Any]:
    """One forward pass on the device and on the CPU, same weights and input, TF32 off, eval mode."""
    model = trainer.model
    model.eval()
    tf32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        cpu_model = copy.deepcopy(model).to("cpu").float()
        sample = x[: min(16, x.shape[0])]
        with torch.no_grad():
            got = model(sample.to(trainer.device)).float().cpu()
            ref = cpu_model(sample.cpu().float())
        diff = float((got - ref).abs().max().item())
        scale = float(ref.abs().max().item())
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32
        model.train()
    ok = common.forward_matches(diff, scale)
    return {
        "max_abs_diff": common.clean_float(diff),
        "ref_max_abs": common.clean_float(scale),
        "match": ok,
        "rtol": common.RTOL,
        "atol": common.ATOL,
        "samples": int(sample.shape[0]),
    }


def is_oom(torch: Any, exc: BaseException) -> bool:
    cls = getattr(torch.cuda, "OutOfMemoryError", None) or getattr(torch, "OutOfMemoryError", None)
    if cls is not None and isinstance(exc, cls):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc)  # torch < 1.13


def search_max_batch(c: Any, torch: Any, device: Any, args: Any) -> dict[str, Any]:
    def try_batch(n: int) -> Optional[int]:
        trainer = x = y = None
        try:
            if device.type == "cuda":
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(device)
            trainer = Trainer(torch, device, args.seed, args.amp)
            # Made on the device: a host copy of a batch this large would cost seconds and host memory.
            x = torch.randn(n, 3, IMAGE, IMAGE, device=device)
            y = torch.randint(0, N_CLASSES, (n,), device=device)
            trainer.step(x, y)
            trainer.sync()
            if device.type == "cuda":
                return int(torch.cuda.max_memory_allocated(device))
            return common.peak_rss_bytes()  # type: ignore[no-any-return]
        except Exception as exc:
            if is_oom(torch, exc):
                raise common.OutOfMemory(str(exc)) from None
            raise
        finally:
            del trainer, x, y
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()

    return common.find_max_batch(try_batch, args.batch_size, cap=args.max_batch_cap)  # type: ignore[no-any-return]


def train(c: Any) -> None:
    args = c.args
    c.stage("import")
    with c.timer("import"):
        torch = importlib.import_module("torch")
    r = c.result
    r["framework_version"] = str(torch.__version__)
    r["cuda_build"] = torch.version.cuda

    c.stage("device")
    with c.timer("device"):
        device = pick_device(torch, args.device)
        r["device"] = device.type
        if device.type == "cuda":
            r["device_name"] = torch.cuda.get_device_name(device)
            r["compute_capability"] = "{}.{}".format(*torch.cuda.get_device_capability(device))
            r["cudnn_version"] = (
                torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
            )
            r["cudnn_used"] = bool(torch.backends.cudnn.enabled and torch.backends.cudnn.is_available())
        else:
            r["device_name"] = common.host_cpu_name()
            r["cudnn_used"] = False

    c.stage("setup")
    with c.timer("setup"):
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        trainer = Trainer(torch, device, args.seed, args.amp)
        r["amp"] = trainer.amp_name
        x, y = make_data(torch, args.batch_size, args.seed)
        x, y = x.to(device), y.to(device)
        trainer.sync()

    losses = []
    c.stage("first_step")
    with c.timer("first_step"):
        losses.append(float(trainer.step(x, y).float().item()))
    c.set_losses(losses)

    c.stage("steady_steps")
    t = time.perf_counter()
    pending = [trainer.step(x, y) for _ in range(args.steps - 1)]
    trainer.sync()
    steady = time.perf_counter() - t
    c.timings["steady_steps"] = steady
    losses.extend(float(v.float().item()) for v in pending)
    c.set_losses(losses)
    if args.steps > 1 and steady > 0:
        r["samples_per_second"] = (args.steps - 1) * args.batch_size / steady
    if device.type == "cuda":
        r["peak_memory_bytes"] = int(torch.cuda.max_memory_allocated(device))
        r["peak_memory_kind"] = "gpu_max_allocated"
    else:
        r["peak_memory_bytes"] = common.peak_rss_bytes()
        r["peak_memory_kind"] = "host_peak_rss"
    ok, why = common.losses_decreased(losses)
    if not ok:
        c.fail(why)

    if args.compare == "always" or (args.compare == "auto" and device.type == "cuda"):
        c.stage("compare")
        with c.timer("compare"):
            r["compare"] = compare_with_cpu(c, torch, trainer, x)
        if not r["compare"]["match"] and r["status"] == "running":
            c.fail(
                f"the {device.type} forward pass differs from the CPU one by {r['compare']['max_abs_diff']:.3g} "
                f"(outputs up to {r['compare']['ref_max_abs']:.3g}): silent corruption"
            )

    if args.find_max_batch and (device.type == "cuda" or args.max_batch_cap > 0):
        del trainer, x, y, pending
        gc.collect()
        c.stage("find_max_batch")
        with c.timer("find_max_batch"):
            r["max_batch"] = search_max_batch(c, torch, device, args)


if __name__ == "__main__":
    common.Child("torch", sys.argv[1:]).run(train)
