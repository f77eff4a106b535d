"""cuDNN checks: a cuDNN release against the CUDA version, the GPU's architecture and the driver."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from packaging.version import Version

from compat.checks.context import Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Fix, Repair, Skip
from compat.matrix import CudnnPackage
from compat.versions import major_minor

CUDNN_CUDA = "cudnn.cuda"
CUDNN_ARCH = "cudnn.arch"
CUDNN_DRIVER = "cudnn.driver"


def _fixed(axes: tuple[str, ...], finding: Finding) -> Finding:
    """The solver's re-checked changes replace the generic advice when it finds one."""
    return replace(finding, repair=Repair(axes, static="fallback"))


def _best_package(
    pkgs: list[CudnnPackage], cuda: Version, fits: Callable[[CudnnPackage], bool] | None = None
) -> CudnnPackage:
    """The package whose CUDA range holds `cuda` (one that `fits` this machine, else the most specific one), else
    the nearest below it. cuDNN 9.10.2 lists two CUDA 12.x rows that both hold 12.8: CUDA 12.8-12.9 with driver
    >= 570.26 up to SM 12.0, and CUDA 12.0-12.9 with driver >= 525.60.13 up to SM 9.0; a machine that meets either
    row is supported (https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html)."""
    mm = cuda.release[:2]

    def lo(p: CudnnPackage) -> tuple[int, ...]:
        return tuple(p.cuda_min.release[:2]) if p.cuda_min else (0,)

    def hi(p: CudnnPackage) -> tuple[int, ...]:
        return tuple(p.cuda_max.release[:2]) if p.cuda_max else (999,)

    inside = [p for p in pkgs if lo(p) <= mm <= hi(p)]
    if inside:
        good = [p for p in inside if fits(p)] if fits is not None else []
        return max(good or inside, key=lo)
    below = [p for p in pkgs if lo(p) <= mm]
    return max(below, key=hi) if below else min(pkgs, key=lo)


@check(CUDNN_CUDA, ids=(CUDNN_CUDA, CUDNN_ARCH, CUDNN_DRIVER))
def check_cudnn(ctx: Ctx) -> Iterator[Result]:
    """7. cuDNN release vs CUDA version, driver and GPU architecture."""
    if ctx.cudnn is None:
        yield Skip(CUDNN_CUDA, "no cuDNN version given (--cudnn)")
        return
    rel = ctx.m.cudnn_release(ctx.cudnn)
    if rel is None:
        for check_id in (CUDNN_CUDA, CUDNN_ARCH, CUDNN_DRIVER):
            yield Skip(check_id, f"cuDNN {ctx.cudnn} is not in the matrix")
        return
    pkgs = list(rel.packages)
    pkg = None
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]

    def fits(p: CudnnPackage) -> bool:
        need = p.min_driver.get(ctx.driver_os())
        return all(
            (p.cc_min is None or c >= p.cc_min) and (p.cc_max is None or c <= p.cc_max)
            for c in (g.cc for g in ccs)
            if c is not None
        ) and (ctx.driver is None or need is None or ctx.driver >= Version(need))

    if ctx.cuda is None:
        yield Skip(CUDNN_CUDA, "no CUDA version given (--cuda)")
        if len(pkgs) == 1:
            pkg = pkgs[0]
        else:
            flavours = ", ".join(sorted({f"CUDA {p.cuda_major}.x" for p in pkgs}))
            for check_id in (CUDNN_ARCH, CUDNN_DRIVER):
                yield Skip(
                    check_id,
                    f"cuDNN {rel.raw} has several packages ({flavours}); which one is unknown (give --cuda)",
                )
    else:
        major = ctx.cuda.release[0]
        match = [p for p in pkgs if p.cuda_major == major]
        if not match:
            for check_id in (CUDNN_ARCH, CUDNN_DRIVER):
                yield Skip(check_id, f"cuDNN {rel.raw} has no build for CUDA {major}.x (see {CUDNN_CUDA})")
            majors = ", ".join(f"CUDA {p.cuda_major}.x" for p in pkgs)
            yield _fixed(
                ("cudnn", "cuda"),
                Finding(
                    CUDNN_CUDA,
                    "error",
                    f"cuDNN {rel.raw} has no build for CUDA {major}.x",
                    f"cuDNN {rel.raw} is published for {majors}; with CUDA {ctx.cuda} it fails to load "
                    "(missing libcudart/libcublasLt of the expected major).",
                    (Fix(f"Install a cuDNN built for CUDA {major}.x"),),
                    {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                    group="cuda",
                ),
            )
        else:
            pkg = _best_package(match, ctx.cuda, fits)
            if pkg.cuda_min is not None and ctx.cuda < pkg.cuda_min:
                yield _fixed(
                    ("cudnn", "cuda"),
                    Finding(
                        CUDNN_CUDA,
                        "error",
                        f"cuDNN {rel.raw} needs CUDA ≥ {pkg.cuda_min}, found {ctx.cuda}",
                        f"The cuDNN support matrix lists cuDNN {rel.raw} for CUDA {pkg.cuda_min}–{pkg.cuda_max or '?'}.",
                        (Fix(f"Upgrade CUDA to ≥ {pkg.cuda_min} or use an older cuDNN"),),
                        {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                        group="cuda",
                    ),
                )
            elif pkg.cuda_max is not None and ctx.cuda.release[:2] > pkg.cuda_max.release[:2]:
                yield _fixed(
                    ("cudnn", "cuda"),
                    Finding(
                        CUDNN_CUDA,
                        "warning",
                        f"cuDNN {rel.raw} is not listed for CUDA {ctx.cuda}",
                        f"The cuDNN support matrix lists cuDNN {rel.raw} for CUDA {pkg.cuda_min or '?'}–{pkg.cuda_max}; "
                        f"CUDA {ctx.cuda} is newer. It usually works under CUDA's minor-version compatibility but is "
                        "untested by NVIDIA.",
                        (Fix(f"Use a cuDNN release that lists CUDA {major_minor(ctx.cuda)}"),),
                        {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                        group="cuda",
                    ),
                )
    if pkg is None:
        return
    if not ccs:
        yield Skip(CUDNN_ARCH, "no GPU compute capability known (give --gpu or --cc)")
    elif pkg.cc_min is None and pkg.cc_max is None:
        yield Skip(
            CUDNN_ARCH,
            f"the matrix has no compute capability range for cuDNN {rel.raw} "
            f"(CUDA {pkg.cuda_major}.x; matrix updated {ctx.m.updated_for('cudnn.yaml')})",
        )
    for g in ccs:
        assert g.cc is not None
        if pkg.cc_min is not None and g.cc < pkg.cc_min:
            yield _fixed(
                ("cudnn",),
                Finding(
                    CUDNN_ARCH,
                    "error",
                    f"cuDNN {rel.raw} does not support {g.label} ({g.cc.sm})",
                    f"cuDNN {rel.raw} for CUDA {pkg.cuda_major}.x supports compute capability {pkg.cc_min} and newer; "
                    f"{g.has_cc()}. Convolutions fail with CUDNN_STATUS_ARCH_MISMATCH.",
                    (Fix("Use an older cuDNN that still supports this GPU"),),
                    {"cudnn": rel.raw, "cc": str(g.cc)},
                    group="cuda",
                ),
            )
        elif pkg.cc_max is not None and g.cc > pkg.cc_max:
            yield _fixed(
                ("cudnn",),
                Finding(
                    CUDNN_ARCH,
                    "warning",
                    f"cuDNN {rel.raw} predates {g.label} ({g.cc.sm})",
                    f"cuDNN {rel.raw} for CUDA {pkg.cuda_major}.x lists compute capability up to {pkg.cc_max}; "
                    f"{g.has_cc()}. Expect CUDNN_STATUS_ARCH_MISMATCH or slow fallback kernels.",
                    (Fix("Upgrade cuDNN to a release that lists this GPU"),),
                    {"cudnn": rel.raw, "cc": str(g.cc)},
                    group="cuda",
                ),
            )
    if ctx.driver is None:
        yield Skip(CUDNN_DRIVER, ctx.facts.reason("driver") or "no NVIDIA driver version (give --driver)")
    elif ctx.os == "macos":
        yield Skip(CUDNN_DRIVER, "macOS has no NVIDIA CUDA driver")
    else:
        need = pkg.min_driver.get(ctx.driver_os())
        if need is None:
            yield Skip(
                CUDNN_DRIVER,
                f"the matrix has no {ctx.os_label()} driver requirement for cuDNN {rel.raw} "
                f"(CUDA {pkg.cuda_major}.x; matrix updated {ctx.m.updated_for('cudnn.yaml')})",
            )
        elif ctx.driver < Version(need):
            yield _fixed(
                ("driver", "cudnn"),
                Finding(
                    CUDNN_DRIVER,
                    "error",
                    f"cuDNN {rel.raw} needs driver ≥ {need}, found {ctx.driver_raw}",
                    f"The cuDNN support matrix lists driver ≥ {need} on {ctx.os_label()} for cuDNN {rel.raw} "
                    f"(CUDA {pkg.cuda_major}.x).",
                    (Fix(f"Install NVIDIA driver ≥ {need}"),),
                    {"cudnn": rel.raw, "driver": ctx.driver_raw},
                    group="driver",
                ),
            )
