"""Frameworks (imports, CUDA availability, pins), the interpreter, environment settings and probes that failed."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from compat.checks.context import Ctx, Result
from compat.checks.doctor_common import environment
from compat.checks.registry import check
from compat.checks.rules import driver_can_run
from compat.findings import Finding, Fix, Skip
from compat.installcmd import requirement_command, tf_and_cuda, venv_command
from compat.probes.model import ChildResult, ProbeFailed
from compat.probes.outcome import describe_child
from compat.probes.probeset import SUBJECTS

# Stable check ids. Never renumber or rename.
FRAMEWORK_IMPORT = "framework.import-failed"
FRAMEWORK_NO_CUDA = "framework.cuda-unavailable"
FRAMEWORK_PINS = "framework.pins-conflict"
PYTHON_INTERPRETER = "python.interpreter"
ENV_LAUNCH_BLOCKING = "env.launch-blocking"
ENV_SETTINGS = "env.settings"
PROBE_FAILED = "probe.failed"


def _driver_explains(ctx: Ctx, cuda: str | None) -> bool:
    """The resolver's driver.cuda error already explains a framework not seeing CUDA (no cascade)."""
    if ctx.driver is None or not cuda:
        return False
    try:
        return driver_can_run(ctx.m, ctx.driver, Version(cuda), ctx.driver_os()) == "no"
    except InvalidVersion:
        return False


@check(
    "doctor.frameworks",
    ids=(FRAMEWORK_IMPORT, FRAMEWORK_NO_CUDA, FRAMEWORK_PINS, PYTHON_INTERPRETER),
    entry_points=("doctor", "check", "explain"),
)
def check_frameworks(ctx: Ctx) -> Iterator[Result]:
    fw = ctx.probes.frameworks
    if fw is None:
        yield Skip(FRAMEWORK_IMPORT, "no frameworks probe data")
        return
    if isinstance(fw, ProbeFailed):
        # Timed out, or raised: nothing is known about the frameworks (an interpreter that is known to be broken is
        # a Frameworks record with status "error", below; before the model a raised probe read as "interpreter None").
        yield Skip(FRAMEWORK_IMPORT, f"frameworks probe: {fw.reason}")
        return
    if fw.status == "error":
        out = str(fw.meta.output or "").strip()
        yield Finding(
            PYTHON_INTERPRETER,
            "error",
            f"The Python interpreter {fw.python_executable} is broken",
            f"{fw.error}." + (f" Its output: {out[-600:]!r}" if out else ""),
            (
                Fix(
                    "Run it by hand",
                    f"{shlex.quote(str(fw.python_executable))} -c 'import sys; print(sys.version)'",
                ),
            ),
            {"python": fw.python_executable},
            group="frameworks",
        )
        return
    for c in fw.conflicts:
        yield Finding(
            FRAMEWORK_PINS,
            "error",
            f"{c.framework} {c.framework_version or ''} needs {c.dist}{c.requires}, "
            f"{c.installed} is installed".replace("  ", " "),
            f"{c.framework} {c.framework_version or ''} requires {c.dist}{c.requires}"
            + (" (its [and-cuda] extra)" if c.and_extra else "")
            + f" but {c.dist} {c.installed} is installed — typically because another framework in the same "
            "environment pinned a different version. The framework then loads a library it was not built against "
            "('cuDNN version incompatibility', 'undefined symbol', or silently no GPU).",
            (
                Fix(
                    "Give each framework its own virtual environment",
                    venv_command(".venv-tf", "tensorflow[and-cuda]"),
                ),
                Fix(
                    f"Or reinstall the version {c.framework} needs",
                    requirement_command(f"{c.dist}{c.requires}"),
                ),
            ),
            {
                "framework": c.framework,
                "dist": c.dist,
                "installed": c.installed,
                "requires": c.requires,
            },
            group="frameworks",
        )
    for mode, child in sorted(fw.children.items()):
        st = child.status
        label = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}.get(mode, mode)
        if st == "skipped":
            continue
        doc = child.result or ChildResult()
        if st in ("crashed", "timeout", "import-error", "failed", "not-run", "error"):
            out = str(child.output or "").strip()
            tb = str(doc.traceback or "").strip()
            detail = tb.splitlines()[-1] if tb else ""
            described = describe_child(child.to_json())
            yield Finding(
                FRAMEWORK_IMPORT,
                "error",
                f"import {mode} {described}",
                f"A child interpreter that only imports {label} {described}."
                + (f" {detail}." if detail and detail not in described else "")
                + (f" Its output ends with: {out[-800:]!r}." if out else "")
                + " Your training script dies the same way (a 'kernel died' in Jupyter).",
                (
                    Fix(
                        "Reproduce it",
                        f"{shlex.quote(str(fw.executable or 'python'))} -X faulthandler -c 'import {mode}'",
                    ),
                ),
                {"framework": mode, "status": st, "signal": child.signal},
                group="frameworks",
            )
            continue
        gpu_present = bool(ctx.facts.gpus)
        if mode == "torch" and doc.cuda and gpu_present and doc.cuda_available is False:
            if _driver_explains(ctx, doc.cuda):
                continue
            warn = "; ".join(str(w) for w in doc.warnings)
            yield Finding(
                FRAMEWORK_NO_CUDA,
                "error",
                f"torch {doc.version} cannot use the GPU",
                f"torch {doc.version} is a CUDA {doc.cuda} build and this machine has a GPU, but "
                "torch.cuda.is_available() is False" + (f": {warn}" if warn else "") + ".",
                (
                    Fix(
                        "See the driver and environment findings; reproduce with",
                        "python -c 'import torch; print(torch.cuda.is_available())'",
                    ),
                ),
                {"torch": doc.version, "torch_cuda": doc.cuda},
                group="frameworks",
            )
        if mode == "tensorflow":
            bi = doc.build_info
            if bi.is_cuda_build and gpu_present and doc.gpus == ():
                if _driver_explains(ctx, bi.cuda_version):
                    continue
                out = str(child.output or "")
                hint = next(
                    (
                        ln.strip()
                        for ln in out.splitlines()
                        if "Could not load dynamic library" in ln or "Cannot dlopen" in ln
                    ),
                    "",
                )
                yield Finding(
                    FRAMEWORK_NO_CUDA,
                    "error",
                    f"TensorFlow {doc.version} sees no GPU",
                    f"TensorFlow {doc.version} is a CUDA {bi.cuda_version} build and this machine has a "
                    "GPU, but tf.config.list_physical_devices('GPU') is empty"
                    + (f" ({hint})" if hint else "")
                    + ". TensorFlow silently falls back to the CPU.",
                    (
                        Fix(
                            "Install the CUDA libraries TensorFlow pins",
                            tf_and_cuda(doc.version, m=ctx.m),
                        ),
                    ),
                    {"tensorflow": doc.version},
                    group="frameworks",
                )
        if (
            mode == "jax"
            and gpu_present
            and doc.backend == "cpu"
            and any(k.startswith(("jax-cuda", "jax-plugin")) for k in fw.distributions)
        ):
            yield Finding(
                FRAMEWORK_NO_CUDA,
                "warning",
                f"JAX {doc.version} runs on the CPU",
                "A JAX CUDA plugin is installed and this machine has a GPU, but jax.default_backend() is 'cpu'.",
                (
                    Fix(
                        "Reinstall JAX with its CUDA plugin", requirement_command("jax[cuda12]", upgrade=True)
                    ),
                ),
                {"jax": doc.version},
                group="frameworks",
            )


# ------------------------------------------------------------------ environment


_SETTING_NOTES = {
    "PYTORCH_CUDA_ALLOC_CONF": "PyTorch's CUDA caching allocator settings",
    "PYTORCH_ALLOC_CONF": "PyTorch's allocator settings",
    "TF_FORCE_GPU_ALLOW_GROWTH": "TensorFlow grows GPU memory instead of taking it all at start",
    "XLA_PYTHON_CLIENT_PREALLOCATE": "JAX preallocation (default: 75% of GPU memory at first use)",
    "XLA_PYTHON_CLIENT_MEM_FRACTION": "share of GPU memory JAX preallocates",
    "CUDA_DEVICE_ORDER": "GPU numbering (FASTEST_FIRST by default, PCI_BUS_ID matches nvidia-smi)",
    "CUDA_MODULE_LOADING": "CUDA lazy loading",
    "CUBLAS_WORKSPACE_CONFIG": "cuBLAS workspace (deterministic mode)",
    "NCCL_P2P_DISABLE": "NCCL peer-to-peer disabled: multi-GPU traffic goes through host memory",
    "NCCL_IB_DISABLE": "NCCL InfiniBand disabled",
    "LD_PRELOAD": "libraries preloaded into every process",
}


@check(
    "doctor.environment",
    ids=(ENV_LAUNCH_BLOCKING, ENV_SETTINGS),
    entry_points=("doctor", "check", "explain"),
)
def check_environment(ctx: Ctx) -> Iterator[Result]:
    if ctx.probes.environment is None:
        yield Skip(ENV_SETTINGS, "no environment probe data")
        return
    v = dict(environment(ctx).vars)
    clb = v.get("CUDA_LAUNCH_BLOCKING")
    if clb is not None and clb.strip() not in ("", "0"):
        yield Finding(
            ENV_LAUNCH_BLOCKING,
            "warning",
            f"CUDA_LAUNCH_BLOCKING={clb} makes every kernel launch synchronous",
            "CUDA_LAUNCH_BLOCKING is a debugging switch: every kernel waits for the previous one, which makes "
            "training several times slower.",
            (Fix("Unset it once debugging is done", "unset CUDA_LAUNCH_BLOCKING"),),
            {"CUDA_LAUNCH_BLOCKING": clb},
            group="environment",
        )
    shown = {
        k: val for k, val in v.items() if k in _SETTING_NOTES or (k.startswith("NCCL_") and k != "NCCL_DEBUG")
    }
    if shown:
        lines = "; ".join(
            f"{k}={val!r}" + (f" ({_SETTING_NOTES[k]})" if k in _SETTING_NOTES else "")
            for k, val in sorted(shown.items())
        )
        yield Finding(
            ENV_SETTINGS,
            "info",
            f"{len(shown)} setting(s) change how CUDA or the frameworks behave",
            f"Set in this environment: {lines}.",
            (),
            {"vars": sorted(shown)},
            group="environment",
        )


@check(
    "doctor.probe-failures",
    ids=(PROBE_FAILED,),
    entry_points=("doctor", "check", "explain"),
)
def check_probe_failures(ctx: Ctx) -> Iterator[Result]:
    """A probe that crashed or timed out is said once, with its reason (never silently passed); so is probe data
    of an unexpected type, which the typed model (compat.probes.model) ignores."""
    meta = ctx.probes.meta
    for name in meta.probes if meta is not None else ():
        failed = ctx.probes.failed(name) if name in SUBJECTS else None
        if failed is not None and failed.kind in ("timeout", "error") and name not in ("nvml", "frameworks"):
            yield Skip(f"{PROBE_FAILED}.{name}", failed.reason)
    # Values of an unexpected type (a hand-edited or foreign snapshot): the checks ran on the rest, this says what
    # they could not read.
    for name, paths in ctx.probes.malformed().items():
        more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
        yield Skip(
            f"{PROBE_FAILED}.{name}",
            f"unexpected probe data: {', '.join(f'{name}.{p}' for p in paths[:5])}{more} ignored",
        )
