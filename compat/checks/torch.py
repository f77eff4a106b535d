"""PyTorch check: a version names a wheel variant (its CUDA runtime, bundled cuDNN and compiled archs)."""

from __future__ import annotations

from collections.abc import Iterator

from compat.checks.context import Ctx, Result, tag_build
from compat.checks.registry import check
from compat.checks.rules import archs_text
from compat.findings import Finding, Fix, Repair, Skip
from compat.installcmd import installer

TORCH_VARIANT = "torch.variant"


@check(TORCH_VARIANT)
def check_torch_variant(ctx: Ctx) -> Iterator[Result]:
    """6. A PyTorch version → the wheel variant it means, its CUDA runtime and bundled cuDNN."""
    t = ctx.torch
    if t is None:
        yield Skip(TORCH_VARIANT, "no PyTorch version given (--torch)")
        return
    if t.release is None:
        if ctx.facts.get("torch_cuda") is None:
            yield Skip(TORCH_VARIANT, f"torch {t.raw} is not in the matrix")
        return
    if ctx.os == "macos" and t.tag and t.tag.startswith("cu"):
        yield Finding(
            TORCH_VARIANT,
            "error",
            f"torch {t.raw}: there are no CUDA wheels for macOS",
            f"PyTorch publishes only CPU/MPS wheels for macOS; a '+{t.tag}' build cannot be installed there.",
            (
                Fix(
                    "Install the macOS wheel (CPU and Apple MPS)",
                    installer(ctx.facts).install(f"torch=={t.release.raw}"),
                    changes=(("torch", t.release.raw),),
                ),
            ),
            {"torch": t.raw, "os": "macos"},
            group="frameworks",
        )
        return
    if t.variant is None:
        tags = ", ".join(v.tag for v in t.release.variants) or "none known"
        if t.version.local and t.tag and tag_build(t.tag) not in ("cuda", "cpu"):
            # The matrix lists CUDA and CPU wheels only; ROCm/XPU wheels and local builds are not "missing".
            what = (
                "PyTorch's ROCm and XPU wheels are not in the matrix"
                if tag_build(t.tag)
                else f"'+{t.version.local}' is not a PyTorch wheel label (a local or vendor build)"
            )
            yield Skip(TORCH_VARIANT, f"torch {t.raw}: {what}")
        elif t.version.local:
            finding = Finding(
                TORCH_VARIANT,
                "error",
                f"torch {t.release.raw} has no {t.tag} build",
                f"PyTorch publishes torch {t.release.raw} as: {tags}. There is no '+{t.tag}' wheel, so "
                f"'pip install torch=={t.raw}' fails (or an index URL for {t.tag} is silently ignored).",
                (),
                {"torch": t.raw},
                group="frameworks",
                repair=Repair(("torch",)),
            )
            yield finding
        return
    if t.version.local is None and t.build != "cpu":
        where = {"windows": "Windows", "macos": "macOS"}.get(ctx.os or "linux", "Linux x86_64")
        yield Finding(
            TORCH_VARIANT,
            "info",
            f"torch {t.raw} from PyPI is the {t.tag} build",
            f"'pip install torch=={t.raw}' on {where} installs the {t.tag} build: CUDA {t.cuda or 'none'}, "
            f"cuDNN {t.cudnn or 'unknown'}, compiled for {archs_text(t.archs) if t.archs is not None else 'unknown architectures'}.",
            (),
            {"torch": t.raw, "variant": t.tag},
            group="frameworks",
        )
