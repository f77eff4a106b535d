"""Architecture checks: the GPU's compute capability against the toolkit's nvcc and the framework builds."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from packaging.version import Version

from compat._text import upper_first
from compat.checks.context import Ctx, GpuInfo, Result
from compat.checks.registry import check
from compat.checks.rules import arch_support, archs_text, driver_can_run
from compat.findings import Finding, Repair, Skip
from compat.versions import Arch

TOOLKIT_ARCH = "toolkit.arch"
WHEEL_ARCH = "wheel.arch"


def _fixed(axes: tuple[str, ...], finding: Finding) -> Finding:
    return replace(finding, repair=Repair(axes))


@check(TOOLKIT_ARCH)
def check_toolkit_arch(ctx: Ctx) -> Iterator[Result]:
    """2. GPU compute capability vs what the CUDA toolkit's nvcc can compile for."""
    if ctx.cuda is None:
        yield Skip(TOOLKIT_ARCH, "no CUDA toolkit version (give --cuda)")
        return
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    if not ccs:
        yield Skip(TOOLKIT_ARCH, "no GPU compute capability known (give --gpu or --cc)")
        return
    for g in ccs:
        assert g.cc is not None
        ok = ctx.m.cuda_can_compile(ctx.cuda, g.cc)
        if ok is None:
            yield Skip(TOOLKIT_ARCH, f"compute capability {g.cc} is not in the matrix")
            continue
        if ok:
            continue
        row = ctx.m.cc_row(g.cc)
        assert row is not None
        if row.removed is not None and ctx.cuda >= row.removed:
            why = f"support for {g.cc.sm} was removed in CUDA {row.removed}"
        else:
            why = f"{g.cc.sm} needs CUDA ≥ {row.added}"
        finding = Finding(
            TOOLKIT_ARCH,
            "error",
            f"CUDA {ctx.cuda} cannot compile for {g.label} ({g.cc.sm})",
            f"nvcc from CUDA {ctx.cuda} cannot generate code for compute capability {g.cc}: {why}. Building CUDA "
            "extensions (pip install of packages with CUDA code, TORCH_CUDA_ARCH_LIST) fails with "
            f"\"nvcc fatal : Unsupported gpu architecture 'compute_{g.cc.major}{g.cc.minor}'\".",
            (),
            {"cuda": str(ctx.cuda), "cc": str(g.cc)},
            group="cuda",
            subject="cuda",
            # The oldest toolkit that targets the GPU, runs on the driver and matches the framework's CUDA major.
            repair=Repair(("cuda",)),
        )
        yield finding


def _wheel_arch_one(
    ctx: Ctx,
    who: str,
    cuda: str | None,
    archs: tuple[Arch, ...],
    g: GpuInfo,
    axes: tuple[str, ...],
) -> Iterator[Result]:
    assert g.cc is not None
    how, arch = arch_support(archs, g.cc)
    facts = {
        "cc": str(g.cc),
        "archs": [str(a) for a in archs],
        ("torch" if who.startswith("torch") else "tensorflow"): who.split(" ", 1)[1].split(" ")[0],
    }
    if how == "sass":
        return
    if how == "ptx":
        assert arch is not None
        if ctx.driver is not None and cuda is not None:
            state = driver_can_run(ctx.m, ctx.driver, Version(cuda), ctx.driver_os())
            # "no": driver.cuda already reports this driver as too old for the runtime (one cause, one error);
            # with the driver it asks for, the PTX JIT below works.
            if state == "minor":
                yield _fixed(
                    axes,
                    Finding(
                        WHEEL_ARCH,
                        "error",
                        f"{who} has no kernels for {g.label} ({g.cc.sm}) and the driver cannot JIT its PTX",
                        f"{who} ships SASS for {archs_text(archs)}; {g.with_cc()} can only run "
                        f"its {arch} PTX, which the driver must JIT-compile. PTX from CUDA {cuda} needs a driver at "
                        f"least as new as that toolkit's; driver {ctx.driver_raw} is older, so kernels fail with "
                        "'the provided PTX was compiled with an unsupported toolchain'.",
                        (),
                        facts,
                        group="frameworks",
                    ),
                )
                return
        yield _fixed(
            axes,
            Finding(
                WHEEL_ARCH,
                "warning",
                f"{who} runs on {g.label} ({g.cc.sm}) only through PTX JIT compilation",
                f"{who} ships SASS for {archs_text(archs)}; none runs on compute capability {g.cc}, so the driver "
                f"JIT-compiles its {arch} PTX at start-up (slow first run, cached in ~/.nv/ComputeCache; kernels may be "
                "slower than native ones).",
                (),
                facts,
                group="frameworks",
            ),
        )
        return
    lowest = min((a.cc for a in archs if a.kind == "sm"), default=None)
    too_old = lowest is not None and g.cc < lowest
    msg = (
        f"{who} was compiled for {archs_text(archs)}. {upper_first(g.has_cc())}: "
        + (
            "older than every architecture in this build"
            if too_old
            else "no SASS in the build runs on it and there is no PTX that could be JIT-compiled for it"
        )
        + ". Every CUDA kernel fails with 'CUDA error: no kernel image is available for execution on the device'"
        + (
            f" (PyTorch warns: '{g.label if g.named else '...'} with CUDA capability {g.cc.sm} is not compatible "
            "with the current PyTorch installation')"
            if who.startswith("torch")
            else ""
        )
        + "."
    )
    yield _fixed(
        axes,
        Finding(
            WHEEL_ARCH,
            "error",
            f"{who} has no kernels for {g.label} ({g.cc.sm})",
            msg,
            (),
            facts,
            group="frameworks",
        ),
    )


@check(WHEEL_ARCH)
def check_wheel_arch(ctx: Ctx) -> Iterator[Result]:
    """3. GPU compute capability vs the architectures compiled into a framework build."""
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    frameworks = []
    if ctx.torch is not None and ctx.torch.build not in ("cpu", "rocm", "xpu"):
        frameworks.append("torch")
    if ctx.tf is not None and ctx.tf.build != "cpu":
        frameworks.append("tf")
    if not frameworks:
        yield Skip(WHEEL_ARCH, "no CUDA framework build known (give --torch or --tensorflow)")
        return
    if not ccs:
        yield Skip(WHEEL_ARCH, "no GPU compute capability known (give --gpu or --cc)")
        return
    if "torch" in frameworks:
        t = ctx.torch
        assert t is not None
        if t.archs is None:
            yield Skip(WHEEL_ARCH, f"the compiled architectures of {t.label} are not in the matrix")
        else:
            archs = t.archs

            for g in ccs:
                yield from _wheel_arch_one(ctx, t.label, t.cuda, archs, g, ("torch", "driver"))
    if "tf" in frameworks:
        tf = ctx.tf
        assert tf is not None
        if tf.archs is None:
            yield Skip(
                WHEEL_ARCH,
                f"the compiled architectures of TensorFlow {tf.raw} are not published in the matrix",
            )
        else:
            for g in ccs:
                yield from _wheel_arch_one(ctx, f"TensorFlow {tf.raw}", tf.cuda, tf.archs, g, ("tensorflow",))
