"""Framework build check: a CPU-only (or ROCm/XPU) build where an NVIDIA GPU is present or required."""

from __future__ import annotations

from collections.abc import Iterator

from compat.checks.context import Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Repair, Skip

CPU_BUILD = "framework.cpu-build"


@check(CPU_BUILD)
def check_cpu_build(ctx: Ctx) -> Iterator[Result]:
    """8. A CPU-only framework build where a GPU is present or required."""
    builds = []
    kind = {"cpu": "a CPU-only", "rocm": "a ROCm (AMD GPU)", "xpu": "an XPU (Intel GPU)"}
    if ctx.torch is not None and ctx.torch.build in kind:
        how = (
            f"the '+{ctx.torch.version.local}' label"
            if ctx.torch.version.local
            else f"PyPI's default torch wheel for {ctx.os_label()} is CPU-only"
            if ctx.os in ("windows", "macos")
            else "its build reports no CUDA"
        )
        builds.append(("PyTorch", ctx.torch.label, how, kind[ctx.torch.build]))
    if ctx.tf is not None and ctx.tf.build == "cpu":
        builds.append(("TensorFlow", f"TensorFlow {ctx.tf.raw}", "its build reports no CUDA", "a CPU-only"))
    if not builds:
        if ctx.torch is None and ctx.tf is None:
            yield Skip(
                CPU_BUILD,
                "no PyTorch or TensorFlow given (JAX's build is checked by jax.cpu-build)"
                if ctx.facts.get("jax") is not None
                else "no framework given (--torch, --tensorflow)",
            )
        return
    want = ctx.require_gpu or ctx.gpu_present
    if not want:
        if ctx.gpu_present is None:
            yield Skip(CPU_BUILD, "unknown whether this machine has a GPU (give --gpu or --cc)")
        return
    for name, label, how, what in builds:
        finding = Finding(
            CPU_BUILD,
            "error" if (ctx.require_gpu or ctx.gpu_present) else "warning",
            f"{label} is {what} build but a GPU is {'required' if ctx.require_gpu else 'present'}",
            f"{label} cannot use the NVIDIA GPU ({how}): torch.cuda.is_available() / "
            "tf.config.list_physical_devices('GPU') report nothing and training silently runs on the CPU.",
            (),
            {"framework": label},
            group="frameworks",
            subject="torch" if name == "PyTorch" else "tensorflow",
            repair=Repair(("torch",) if name == "PyTorch" else ("tensorflow",)),
        )
        yield finding
