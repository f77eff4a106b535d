"""What every doctor check module shares: the stable finding ids, thresholds and typed readers of Facts.probes.

The doctor's checks are pure functions of Facts (their .probes and .gpus), one module per subject
(doctor_gpu, doctor_health, doctor_host, doctor_frameworks), registered in compat.checks.registry and
collected in compat.checks.doctor. They read only Facts, so `compat check --snapshot FILE` on another
machine reproduces them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Callable

from compat.checks.context import Ctx, Result
from compat.facts import Gpu
from compat.findings import Skip
from compat.probes.model import (
    DriverState,
    Environment,
    GpuDetails,
    Health,
    KernelNote,
    NvidiaSmi,
    ProbeFailed,
    gpu_details,
)

# Stable check ids. Never renumber or rename.
GPU_NONE = "gpu.none"
DRIVER_MISSING = "driver.missing"
DRIVER_NOUVEAU = "driver.nouveau"
DRIVER_MISMATCH = "driver.mismatch"
DRIVER_DEV_NODES = "driver.dev-nodes"
DRIVER_NVML = "driver.nvml"
DRIVER_NVIDIA_SMI = "driver.nvidia-smi"
DRIVER_CONTAINER = "driver.container"
DRIVER_WSL = "driver.wsl"
ENV_VISIBLE = "env.cuda-visible-devices"
ENV_LAUNCH_BLOCKING = "env.launch-blocking"
ENV_SETTINGS = "env.settings"
GPU_MEMORY = "gpu.memory-in-use"
GPU_MIG = "gpu.mig"
GPU_THERMAL = "gpu.thermal"
GPU_THROTTLE = "gpu.throttle"
GPU_POWER = "gpu.power"
GPU_ECC = "gpu.ecc"
GPU_RETIRED = "gpu.retired-pages"
GPU_PCIE = "gpu.pcie"
GPU_XID = "gpu.xid"
HOST_OOM = "host.oom"
HOST_CGROUP_OOM = "host.cgroup-oom"
HOST_SHM = "host.shm"
HOST_MEMORY = "host.memory"
HOST_NOFILE = "host.nofile"
HOST_CPU_QUOTA = "host.cpu-quota"
HOST_DISK = "host.disk"
TOOLKIT_MULTIPLE = "toolkit.multiple"
LIBS_SHADOWED = "libs.shadowed"
CUDNN_MULTIPLE = "cudnn.multiple"
FRAMEWORK_IMPORT = "framework.import-failed"
FRAMEWORK_NO_CUDA = "framework.cuda-unavailable"
FRAMEWORK_PINS = "framework.pins-conflict"
PYTHON_INTERPRETER = "python.interpreter"
PROBE_FAILED = "probe.failed"

DOCTOR_CHECK_IDS = (
    GPU_NONE,
    DRIVER_MISSING,
    DRIVER_NOUVEAU,
    DRIVER_MISMATCH,
    DRIVER_DEV_NODES,
    DRIVER_NVML,
    DRIVER_NVIDIA_SMI,
    DRIVER_CONTAINER,
    DRIVER_WSL,
    ENV_VISIBLE,
    ENV_LAUNCH_BLOCKING,
    ENV_SETTINGS,
    GPU_MEMORY,
    GPU_MIG,
    GPU_THERMAL,
    GPU_THROTTLE,
    GPU_POWER,
    GPU_ECC,
    GPU_RETIRED,
    GPU_PCIE,
    GPU_XID,
    HOST_OOM,
    HOST_CGROUP_OOM,
    HOST_SHM,
    HOST_MEMORY,
    HOST_NOFILE,
    HOST_CPU_QUOTA,
    HOST_DISK,
    TOOLKIT_MULTIPLE,
    LIBS_SHADOWED,
    CUDNN_MULTIPLE,
    FRAMEWORK_IMPORT,
    FRAMEWORK_NO_CUDA,
    FRAMEWORK_PINS,
    PYTHON_INTERPRETER,
    PROBE_FAILED,
)

GIB = 1024**3
MIB = 1024**2
SHM_MIN = 1 * GIB  # Docker's default is 64 MiB; DataLoader workers pass batches through /dev/shm.
NOFILE_MIN = 1024
DISK_MIN = 2 * GIB
MEMORY_LOW = 2 * GIB


def _gib(n: Any) -> str:
    if not isinstance(n, (int, float)):
        return "?"
    if n < GIB:
        return f"{n / MIB:.0f} MiB"
    return f"{n / GIB:.1f} GiB"


def _gpu_label(g: Any) -> str:
    return f"GPU {g.index} ({g.name or 'unknown'})"


def _real_gpus(ctx: Ctx) -> list[Gpu]:
    return list(ctx.facts.gpus or [])


def _details(g: Gpu) -> GpuDetails:
    """A GPU's probe data, typed."""
    return gpu_details(g.details)


def _nvml_cause(ctx: Ctx) -> str | None:
    """Why NVML failed ("library-not-found", "hang", "crashed", ...); None when it answered or did not run."""
    nv = ctx.probes.nvml
    return nv.cause if isinstance(nv, ProbeFailed) else None


def _smi(ctx: Ctx) -> NvidiaSmi:
    return ctx.probes.nvidia_smi or NvidiaSmi()


def _drv(ctx: Ctx) -> DriverState:
    d = ctx.probes.driver
    return d if isinstance(d, DriverState) else DriverState()


def _env(ctx: Ctx) -> Environment:
    e = ctx.probes.environment
    return e if isinstance(e, Environment) else Environment()


def _kernel_notes(ctx: Ctx, kind: str) -> list[KernelNote]:
    h = ctx.probes.health
    return h.notes_of(kind) if isinstance(h, Health) else []


def _why_no_gpu(ctx: Ctx) -> str:
    parts = []
    nv = ctx.probes.nvml
    if isinstance(nv, ProbeFailed):
        parts.append(f"NVML: {nv.reason}")
    smi = ctx.probes.nvidia_smi
    if smi is not None and not smi.ok and smi.kind != "skipped":
        parts.append(f"nvidia-smi: {smi.message}")
    drv = _drv(ctx)
    if drv.pci_readable and not drv.pci_gpus:
        parts.append("no NVIDIA GPU on the PCI bus")
    return "; ".join(parts) or (ctx.facts.gpus_source or "no GPU reported")


def _guarded(check: Callable[[Ctx], Iterable[Result]]) -> Callable[[Ctx], Iterator[Result]]:
    """A check that meets probe data of an unexpected shape (a hand-edited or foreign snapshot) skips with the
    reason instead of taking the whole report down; findings it yielded before that are kept."""

    def run(ctx: Ctx) -> Iterator[Result]:
        try:
            yield from check(ctx)
        except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
            yield Skip(
                f"{PROBE_FAILED}.{check.__name__.removeprefix('check_')}",
                f"unexpected probe data: {type(exc).__name__}: {exc}",
            )

    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    run.__wrapped__ = check  # type: ignore[attr-defined]  # the registry maps the wrapper to its registered check
    return run
