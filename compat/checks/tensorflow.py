"""TensorFlow checks: its tested CUDA and cuDNN against the system's, and GPU support on native Windows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from packaging.version import Version

from compat.checks.context import Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Fix, Repair, Skip
from compat.installcmd import installer, tf_command
from compat.versions import major_minor

TF_CUDA = "tensorflow.cuda"
TF_CUDNN = "tensorflow.cudnn"
TF_WINDOWS = "tensorflow.windows-gpu"


def _fixed(axes: tuple[str, ...], finding: Finding) -> Finding:
    """The static fix first, then the solver's re-checked stack changes."""
    return replace(finding, repair=Repair(axes, static="before"))


def _wheels_fixed(axis: str, finding: Finding) -> Finding:
    """The solver's re-checked changes, TensorFlow's pip CUDA libraries first (a holistic change of CUDA and
    cuDNN: solver axis "tf_and_cuda"), then `axis`; the static advice only where the solver finds none."""
    return replace(finding, repair=Repair(("tf_and_cuda", axis), static="fallback"))


def _wsl2_fix(ctx: Ctx) -> Fix:
    """WSL2 runs the Linux GPU build: this release pinned with its [and-cuda] extra, else (no extra before 2.14)
    the CUDA and cuDNN it loads from the system, named; never an unpinned install."""
    r = ctx.tf.release if ctx.tf is not None else None
    text = "Run TensorFlow in WSL2, where the Linux GPU build works"
    if r is not None and r.and_cuda:
        return Fix(text, tf_command(r, True, "linux", installer(ctx.facts)))
    if r is not None and r.cuda and r.cudnn:
        return Fix(f"{text} (TensorFlow {r.raw} there needs CUDA {r.cuda} and cuDNN {r.cudnn} installed)")
    return Fix(text)


def _tf_windows(ctx: Ctx) -> Iterator[Result]:
    tf = ctx.tf
    assert tf is not None
    if ctx.os is None:
        yield Skip(TF_WINDOWS, "operating system unknown (give --os)")
        return
    if ctx.os != "windows":
        return
    if tf.release is None:
        # "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows":
        # https://www.tensorflow.org/install/pip#windows-native. A release newer than the matrix has none either.
        if Version(tf.version.public) < Version("2.11"):
            yield Skip(TF_WINDOWS, f"TensorFlow {tf.raw} is not in the matrix")
            return
    elif tf.release.windows_gpu is None or tf.release.windows_gpu:
        return
    sev = "error" if (ctx.require_gpu or ctx.gpu_present) else "info"
    finding = Finding(
        TF_WINDOWS,
        sev,
        f"TensorFlow {tf.raw} has no GPU support on native Windows",
        "TensorFlow 2.10 was the last release that supported the GPU on native Windows; "
        f"TensorFlow {tf.raw} there runs on the CPU only.",
        (_wsl2_fix(ctx),),
        {"tensorflow": tf.raw, "os": "windows"},
        group="frameworks",
    )
    # Or stay on a native-Windows GPU release (2.10 and older), re-checked by the solver.
    yield _fixed(("tensorflow",), finding)


@check(TF_CUDA, ids=(TF_CUDA, TF_CUDNN, TF_WINDOWS))
def check_tensorflow(ctx: Ctx) -> Iterator[Result]:
    """5. TensorFlow vs CUDA and cuDNN (its tested build configuration), and native-Windows GPU."""
    tf = ctx.tf
    if tf is None:
        yield Skip(TF_CUDA, "no TensorFlow version given (--tensorflow)")
        yield Skip(TF_CUDNN, "no TensorFlow version given (--tensorflow)")
        return
    yield from _tf_windows(ctx)
    if tf.build == "cpu":  # a CPU-only build loads no CUDA library: the system CUDA/cuDNN do not matter to it
        yield Skip(TF_CUDA, f"TensorFlow {tf.raw} is a CPU-only build")
        yield Skip(TF_CUDNN, f"TensorFlow {tf.raw} is a CPU-only build")
        return
    if tf.cuda is None:
        yield Skip(TF_CUDA, f"the CUDA version TensorFlow {tf.raw} was built with is not in the matrix")
    elif ctx.cuda is None:
        yield Skip(TF_CUDA, "no system CUDA version (give --cuda)")
    else:
        built = Version(tf.cuda)
        fix = Fix(f"Use CUDA {tf.cuda}, or install the pip CUDA libraries TensorFlow pins")
        if built.release[0] != ctx.cuda.release[0]:
            yield _wheels_fixed(
                "cuda",
                Finding(
                    TF_CUDA,
                    "error",
                    f"TensorFlow {tf.raw} needs CUDA {built.release[0]}.x, found CUDA {ctx.cuda}",
                    f"TensorFlow {tf.raw} was built and tested with CUDA {tf.cuda}; it loads the CUDA {built.release[0]} "
                    f"libraries by soname, so CUDA {ctx.cuda} is not found ('Could not load dynamic library "
                    f"libcudart.so.{built.release[0]}…') and TensorFlow falls back to the CPU.",
                    (fix,),
                    {"tensorflow": tf.raw, "cuda": str(ctx.cuda)},
                    group="frameworks",
                ),
            )
        elif ctx.cuda.release[:2] < built.release[:2]:
            yield _wheels_fixed(
                "cuda",
                Finding(
                    TF_CUDA,
                    "warning",
                    f"CUDA {ctx.cuda} is older than the CUDA {tf.cuda} TensorFlow {tf.raw} was built with",
                    f"TensorFlow {tf.raw}'s tested configuration is CUDA {tf.cuda}; an older minor release may lack "
                    "symbols or kernels it uses (PTX JIT errors, missing cuBLAS functions).",
                    (fix,),
                    {"tensorflow": tf.raw, "cuda": str(ctx.cuda)},
                    group="frameworks",
                ),
            )
    if tf.cudnn is None:
        yield Skip(TF_CUDNN, f"the cuDNN version TensorFlow {tf.raw} was built with is not in the matrix")
    elif ctx.cudnn is None:
        yield Skip(TF_CUDNN, "no system cuDNN version (give --cudnn)")
    else:
        built = Version(tf.cudnn)
        run = ctx.cudnn
        if built.release[0] != run.release[0] or run.release[:2] < built.release[:2]:
            yield _wheels_fixed(
                "cudnn",
                Finding(
                    TF_CUDNN,
                    "error",
                    f"cuDNN {run} cannot serve TensorFlow {tf.raw} (built with cuDNN {tf.cudnn})",
                    f"TensorFlow {tf.raw} was built with cuDNN {tf.cudnn}. The runtime cuDNN must have the same major "
                    "version and an equal or newer minor: 'Loaded runtime CuDNN library: "
                    f"{run} but source was compiled with: {tf.cudnn}. CuDNN library needs to have matching major "
                    "version and equal or higher minor version.'",
                    (Fix(f"Install cuDNN {built.release[0]}.x ≥ {major_minor(built)}"),),
                    {"tensorflow": tf.raw, "cudnn": str(run)},
                    group="frameworks",
                ),
            )
