"""GPU checks: a GPU the matrix does not know, and a GPU that is required but absent."""

from __future__ import annotations

from collections.abc import Iterator

from compat.checks.context import UNKNOWN_GPU, Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Fix, Skip

GPU_REQUIRED = "gpu.required"


@check(UNKNOWN_GPU)
def check_unknown_gpu(ctx: Ctx) -> Iterator[Result]:
    """A GPU name the matrix does not know (its compute capability is then unknown)."""
    yield from (n for n in ctx.notes if n.id == UNKNOWN_GPU)


@check(GPU_REQUIRED)
def check_required_gpu(ctx: Ctx) -> Iterator[Result]:
    """A GPU was required (--require-gpu) and none is visible."""
    if not ctx.require_gpu:
        return
    if ctx.gpus is None:
        if not ctx.facts.probes:  # with probe data the doctor's own checks say why no GPU could be listed
            yield Skip(GPU_REQUIRED, "unknown whether this machine has a GPU (give --gpu or --cc)")
    elif not ctx.gpus:
        reason = ctx.facts.gpus_source or "no GPU found"
        yield Finding(
            GPU_REQUIRED,
            "error",
            "No NVIDIA GPU, but one is required",
            f"A GPU was required (--require-gpu) and none is visible ({reason}).",
            (Fix("Run `compat doctor` on the machine to see why no GPU is visible", "compat doctor"),),
            group="driver",
        )
