"""Driver checks: the driver against the CUDA runtimes it must run, and against the GPUs it must drive."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from compat.checks.context import Ctx, GpuInfo, Result, Runtime, runtimes
from compat.checks.first_driver import FirstDriver, first_driver
from compat.checks.registry import check
from compat.checks.rules import driver_can_run, driver_requirement
from compat.findings import Finding, Fix, Repair, Skip

DRIVER_CUDA = "driver.cuda"
DRIVER_GPU = "driver.gpu-support"
DRIVER_GPU_NEW = "driver.gpu-too-new"
DRIVER_BRANCH = "driver.branch"
# GPUs the driver itself listed: it drives them, whatever a derived first driver says.
_LIVE_SOURCES = ("nvml", "nvidia-smi")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


@check(DRIVER_CUDA)
def check_driver_cuda(ctx: Ctx) -> Iterator[Result]:
    """1. NVIDIA driver vs the CUDA runtime each framework or application was built with."""
    rts = runtimes(ctx)
    if ctx.os == "macos":
        if rts:
            yield Skip(DRIVER_CUDA, "macOS has no NVIDIA CUDA driver")
        return
    if not rts:
        fws = [
            (w, fw.build)
            for w, fw in (
                (ctx.torch.label if ctx.torch else "", ctx.torch),
                (f"TensorFlow {ctx.tf.raw}" if ctx.tf else "", ctx.tf),
            )
            if fw is not None
        ]
        unknown = [w for w, b in fws if b in (None, "cuda")]
        if unknown:
            reason = f"the CUDA runtime of {' and '.join(unknown)} is not in the matrix (give --cuda)"
        elif fws:
            reason = (
                f"{' and '.join(w for w, _ in fws)}: not a CUDA build, no CUDA runtime to check (give --cuda)"
            )
        else:
            reason = "no CUDA runtime known (give --torch, --tensorflow or --cuda)"
        yield Skip(DRIVER_CUDA, reason)
        return
    if ctx.driver is None:
        dc = ctx.facts.get("driver_cuda")
        if dc is not None and dc.value:
            yield from _driver_cuda_only(ctx, rts, Version(dc.value), dc.raw or dc.value)
            return
        reason = ctx.facts.reason("driver") or "no NVIDIA driver version (give --driver)"
        yield Skip(DRIVER_CUDA, reason)
        return
    os_name = ctx.driver_os()
    for rt in rts:
        floor, own, rel = driver_requirement(ctx.m, rt.cuda, os_name)
        facts = {"driver": ctx.driver_raw, "cuda": rt.cuda_raw, "os": os_name}
        if floor is None and own is None:
            yield Skip(
                DRIVER_CUDA,
                f"the matrix has no {ctx.os_label()} driver requirement for CUDA {rt.cuda_raw} "
                f"({rt.who}; matrix updated {ctx.m.updated_for('cuda.yaml')})",
            )
            continue
        state = driver_can_run(ctx.m, ctx.driver, rt.cuda, os_name)
        need = own or floor
        axes = (rt.subject, "driver")
        if state == "no":
            major = rt.cuda.release[0]
            floor_txt = (
                f"; CUDA {major}.x needs at least {floor} even under minor-version compatibility"
                if ctx.m.minor_compat.get(major) and floor and (own is None or Version(floor) < Version(own))
                else ""
            )
            others = [o.who for o in rts if o is not rt]
            if bool(ctx.facts.probes) and others and rt.who == f"CUDA {rt.cuda_raw}":
                # Issue 18: a local toolkit nothing else runs on (the frameworks bring their own CUDA runtime) only
                # breaks what is built with it; a what-if check (--cuda, no live probes) keeps the error.
                warn = Finding(
                    DRIVER_CUDA,
                    "warning",
                    f"{_cap(ctx.driver_text())} cannot run programs built with the local CUDA {rt.cuda_raw} toolkit",
                    f"The CUDA {rt.cuda_raw} toolkit ({rt.how}) needs driver ≥ {need}{floor_txt}; this driver is "
                    f"{ctx.driver_raw}. Nothing found here runs on it ({', '.join(others)} bring their own CUDA "
                    "runtime), but CUDA extensions, nvcc-built programs and JIT kernels built with it will fail at "
                    "launch with 'CUDA driver version is insufficient for CUDA runtime version'.",
                    # After the solver's re-checked changes: the manual way round.
                    (
                        Fix(
                            "Or build with a toolkit this driver runs (point CUDA_HOME and PATH at it)",
                            kind="manual",
                        ),
                    ),
                    facts,
                    group="driver",
                    subject=rt.subject,
                    repair=Repair(axes),
                )
                yield warn
                continue
            finding = Finding(
                DRIVER_CUDA,
                "error",
                f"{_cap(ctx.driver_text())} is too old for CUDA {rt.cuda_raw} ({rt.who})",
                f"{rt.who} uses the CUDA {rt.cuda_raw} runtime ({rt.how}). NVIDIA {ctx.driver_text()} on "
                f"{ctx.os_label()} cannot run it: {rel.name if rel else 'CUDA ' + rt.cuda_raw} needs driver ≥ {need}"
                f"{floor_txt}. Expect 'CUDA driver version is insufficient for CUDA runtime version' or "
                "'The NVIDIA driver on your system is too old'.",
                (),
                facts,
                group="driver",
                subject=rt.subject,
                repair=Repair(axes),
            )
            yield finding
        elif state == "minor":
            finding = Finding(
                DRIVER_CUDA,
                "warning",
                f"{_cap(ctx.driver_text())} runs CUDA {rt.cuda_raw} ({rt.who}) only under minor-version compatibility",
                f"{rel.name if rel else 'CUDA ' + rt.cuda_raw} ships with driver ≥ {own}; {ctx.driver_text()} is above "
                f"the CUDA {rt.cuda.release[0]}.x floor ({floor}), so it runs with limits: PTX compiled by this "
                "toolkit cannot be JIT-compiled (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) and some newer APIs "
                "return cudaErrorCallRequiresNewerDriver.",
                (),
                facts,
                group="driver",
                subject=rt.subject,
                repair=Repair(axes),
            )
            yield finding


def _driver_cuda_only(ctx: Ctx, rts: list[Runtime], driver_cuda: Version, raw: str) -> Iterator[Result]:
    """Only the driver's own CUDA version is known (nvidia-smi's "CUDA Version", a log's "found version 11040")."""
    for rt in rts:
        facts = {"driver_cuda": raw, "cuda": rt.cuda_raw}
        if rt.cuda.release[0] > driver_cuda.release[0]:
            floor_row = ctx.m.minor_compat.get(rt.cuda.release[0])
            floor = floor_row.floor.get(ctx.driver_os()) if floor_row else None
            yield Finding(
                DRIVER_CUDA,
                "error",
                f"The driver supports CUDA {raw}, too old for CUDA {rt.cuda_raw} ({rt.who})",
                f"{rt.who} uses the CUDA {rt.cuda_raw} runtime ({rt.how}); the installed driver supports CUDA {raw} at "
                f"most, and a CUDA {rt.cuda.release[0]}.x runtime needs a CUDA {rt.cuda.release[0]} driver"
                + (f" (≥ {floor})" if floor else "")
                + ".",
                (
                    Fix(
                        f"Install an NVIDIA driver for CUDA {rt.cuda.release[0]}.x"
                        + (f" (≥ {floor})" if floor else "")
                    ),
                ),
                facts,
                group="driver",
                subject=rt.subject,
                repair=Repair((rt.subject,), static="before"),
            )
        elif rt.cuda.release[:2] > driver_cuda.release[:2]:
            yield Finding(
                DRIVER_CUDA,
                "warning",
                f"The driver supports CUDA {raw}; CUDA {rt.cuda_raw} ({rt.who}) needs "
                "minor-version compatibility",
                f"{rt.who} uses CUDA {rt.cuda_raw}, newer than the driver's CUDA {raw}. It runs only under "
                "minor-version compatibility (no PTX JIT of newer code, some APIs unavailable). The driver version "
                "itself is unknown, so compat cannot say more.",
                (
                    Fix(
                        "Give the driver version for a precise answer",
                        "compat check --driver $(nvidia-smi "
                        "--query-gpu=driver_version --format=csv,noheader | head -1)",
                    ),
                ),
                facts,
                group="driver",
                subject=rt.subject,
            )


@check(DRIVER_GPU)
def check_driver_gpu(ctx: Ctx) -> Iterator[Result]:
    """A driver branch newer than the last one that supports the GPU's architecture (Kepler after R470, …)."""
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    if ctx.driver is None or not ccs or ctx.os == "macos":
        return
    branch = ctx.driver.release[0]
    for g in ccs:
        assert g.cc is not None
        row = ctx.m.cc_row(g.cc)
        if row is None or row.last_driver is None or branch <= row.last_driver:
            continue
        newest = [
            r
            for r in ctx.m.cuda_releases
            if any(d is not None and Version(d).release[0] <= row.last_driver for d in r.min_driver.values())
        ]
        cuda_max = max(newest, key=lambda r: r.version).raw if newest else None
        yield Finding(
            DRIVER_GPU,
            "error",
            f"{_cap(ctx.driver_text())} does not support {g.label} ({g.cc.sm})",
            f"NVIDIA's last driver branch for compute capability {g.cc} is R{row.last_driver}; "
            f"{ctx.driver_text()} (R{branch}) does not drive {g.label}, so nvidia-smi and every framework see no GPU "
            f"(source: {row.last_driver_source}).",
            (
                Fix(
                    f"Install the R{row.last_driver} driver branch"
                    + (f" (it runs CUDA up to {cuda_max})" if cuda_max else "")
                ),
                Fix("Or move to a GPU that current drivers support"),
            ),
            {"driver": ctx.driver_raw, "cc": str(g.cc)},
            group="driver",
        )


def _live_gpus(ctx: Ctx) -> set[str]:
    """The GPUs this very driver listed (not when the driver is overridden or given: that one listed nothing)."""
    drv = ctx.facts.get("driver")
    if drv is None or drv.source not in _LIVE_SOURCES:
        return set()
    return {g.name for g in ctx.facts.gpus or () if g.source in _LIVE_SOURCES and g.name}


def undriven_gpus(ctx: Ctx) -> list[tuple[GpuInfo, FirstDriver]]:
    """The GPUs (with their first driver) that the driver is too old to drive; the driver's own GPU list wins."""
    if ctx.driver is None or not ctx.gpus or ctx.os == "macos":
        return []
    live = _live_gpus(ctx)
    out = []
    for g in ctx.gpus:
        need = first_driver(ctx.m, g.cc, ctx.driver_os()) if g.cc is not None else None
        if need is not None and not need.drives(ctx.driver) and g.label not in live:
            out.append((g, need))
    return out


@check(DRIVER_GPU_NEW)
def check_driver_gpu_too_new(ctx: Ctx) -> Iterator[Result]:
    """A driver older than the first one that drives the GPU's architecture (R470 under an H100, R560 under an
    RTX 5090): the driver does not load for it, so nothing can use the GPU."""
    if ctx.driver is None or not ctx.gpus or ctx.os == "macos":
        return
    live = _live_gpus(ctx)
    named = [g for g in ctx.gpus if g.label not in live]
    if not named:
        return  # the driver listed every GPU: it drives them
    if not any(g.cc is not None and first_driver(ctx.m, g.cc, ctx.driver_os()) is not None for g in named):
        ccs = ", ".join(sorted({str(g.cc) for g in named if g.cc is not None})) or "unknown"
        yield Skip(
            DRIVER_GPU_NEW,
            f"the first driver for compute capability {ccs} is not in the matrix "
            f"(matrix/gpu_drivers.yaml; the GPU's compute capability must be known)",
        )
        return
    for g, need in undriven_gpus(ctx):
        assert g.cc is not None
        yield Finding(
            DRIVER_GPU_NEW,
            "error",
            f"{_cap(ctx.driver_text())} cannot drive {g.label} ({need.architecture}, {g.cc.sm})",
            f"{need.architecture} GPUs (compute capability {g.cc}) need NVIDIA driver ≥ {need.need} on "
            f"{ctx.os_label()}; {ctx.driver_text()} predates them, so it does not load for {g.label}: nvidia-smi "
            "says 'No devices were found' and every framework sees no GPU (torch.cuda.is_available() is False), "
            f"whatever is installed. First driver: {need.basis(ctx.os_label())}.",
            (
                Fix(
                    f"Install an NVIDIA driver from branch R{need.branch} or newer ({need.architecture} needs it "
                    "before any framework can use the GPU)",
                    kind="manual",
                ),
            ),
            {"driver": ctx.driver_raw, "cc": str(g.cc), "first_driver": need.raw},
            group="driver",
            repair=Repair(("driver",), static="fallback"),
        )


@check(DRIVER_BRANCH)
def check_driver_branch(ctx: Ctx) -> Iterator[Result]:
    """A driver given as a branch (`--driver 535`): say which release the checks compared."""
    if ctx.driver_branch is None:
        return
    b = ctx.driver_branch
    listed = ctx.driver_raw is not None and not ctx.driver_raw.endswith(".0")
    yield Finding(
        DRIVER_BRANCH,
        "info",
        f"Driver given as branch R{b}: compared as {'its first release ' if listed else ''}{ctx.driver_raw}",
        (
            f"Only the branch was given, so every check compares its first release, {ctx.driver_raw} (the "
            f"earliest R{b} release NVIDIA's CUDA Toolkit release notes list in Table 3, matrix/cuda.yaml). "
            if listed
            else f"Only the branch was given and the matrix lists no R{b} release, so checks compare "
            f"{ctx.driver_raw}. "
        )
        + f"A later R{b} release may run newer CUDA releases: give the full version (nvidia-smi) to be exact.",
        (),
        {"driver": ctx.driver_raw, "branch": str(b)},
        group="driver",
    )
