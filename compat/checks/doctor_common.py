"""What the doctor's checks share: typed readers of Facts.probes and Facts.gpus, and how findings word sizes and GPUs.

The doctor's checks are pure functions of Facts (their .probes and .gpus), one module per subject
(doctor_gpu, doctor_health, doctor_host, doctor_frameworks, doctor_toolchain), each with the stable ids of the
findings it reports, registered in compat.checks.registry and collected in compat.checks.doctor. They read only
Facts, so `compat check --snapshot FILE` on another machine reproduces them.
"""

from __future__ import annotations

import re
from typing import Any

from compat._valueclass import valueclass
from compat.checks.context import Ctx
from compat.facts import Gpu
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

GIB = 1024**3
MIB = 1024**2


def gib(n: Any) -> str:
    """A byte count in words: "512 MiB" below a GiB, "79.2 GiB" from there; "?" when it is not a number."""
    if not isinstance(n, (int, float)):
        return "?"
    if n < GIB:
        return f"{n / MIB:.0f} MiB"
    return f"{n / GIB:.1f} GiB"


def gpu_label(g: Any) -> str:
    """ "GPU 0 (NVIDIA H100 80GB HBM3)": how a finding names a GPU."""
    return f"GPU {g.index} ({g.name or 'unknown'})"


def real_gpus(ctx: Ctx) -> list[Gpu]:
    """The GPUs the probes found (none when they found none or could not tell)."""
    return list(ctx.facts.gpus or [])


def details_of(g: Gpu) -> GpuDetails:
    """A GPU's probe data, typed."""
    return gpu_details(g.details)


def nvml_cause(ctx: Ctx) -> str | None:
    """Why NVML failed ("library-not-found", "hang", "crashed", ...); None when it answered or did not run."""
    nv = ctx.probes.nvml
    return nv.cause if isinstance(nv, ProbeFailed) else None


def nvidia_smi(ctx: Ctx) -> NvidiaSmi:
    """What nvidia-smi answered (an empty record when it did not run)."""
    return ctx.probes.nvidia_smi or NvidiaSmi()


def driver_state(ctx: Ctx) -> DriverState:
    """The kernel module, device nodes and PCI bus as the driver probe read them (empty when it failed)."""
    d = ctx.probes.driver
    return d if isinstance(d, DriverState) else DriverState()


def environment(ctx: Ctx) -> Environment:
    """The environment probe's variables, container and WSL (empty when it failed)."""
    e = ctx.probes.environment
    return e if isinstance(e, Environment) else Environment()


def kernel_notes(ctx: Ctx, kind: str) -> list[KernelNote]:
    """The kernel log's notes of one kind ("api-mismatch", "probe-not-called", ...)."""
    h = ctx.probes.health
    return h.notes_of(kind) if isinstance(h, Health) else []


def why_no_gpu(ctx: Ctx) -> str:
    """Why no GPU is listed, from the probes that said so (NVML, nvidia-smi, the PCI bus)."""
    parts = []
    nv = ctx.probes.nvml
    if isinstance(nv, ProbeFailed):
        parts.append(f"NVML: {nv.reason}")
    smi = ctx.probes.nvidia_smi
    if smi is not None and not smi.ok and smi.kind != "skipped":
        parts.append(f"nvidia-smi: {smi.message}")
    drv = driver_state(ctx)
    if drv.pci_readable and not drv.pci_gpus:
        parts.append("no NVIDIA GPU on the PCI bus")
    return "; ".join(parts) or (ctx.facts.gpus_source or "no GPU reported")


# ------------------------------------------------------------------ CUDA_VISIBLE_DEVICES

_UUID_RE = re.compile(r"^(GPU|MIG)-[0-9a-fA-F-]+$|^MIG-GPU-")


@valueclass
class Visibility:
    """What CUDA_VISIBLE_DEVICES leaves visible."""

    set: bool
    """Whether the variable is set at all."""
    visible: tuple[str, ...] | None
    """The entries CUDA keeps, in order (None when unset: every GPU)."""
    hides_all: bool
    invalid: str | None
    """The first entry that is not a GPU index or UUID: CUDA ignores it and everything after it."""


def visible_devices(value: str | None, count: int | None, uuids: list[str] | None = None) -> Visibility:
    """What CUDA_VISIBLE_DEVICES leaves visible of `count` GPUs.

    CUDA reads the comma-separated list left to right and stops at the first entry that is not a valid
    index or (a prefix of a) GPU UUID; an empty value hides every GPU.
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/#cuda-environment-variables
    """
    if value is None:
        return Visibility(False, None, False, None)
    visible: list[str] = []
    invalid = None
    for e in (x.strip() for x in value.split(",")):
        if e.isdigit():
            ok = count is None or int(e) < count
        elif _UUID_RE.match(e):
            ok = (
                uuids is None
                or e.upper().startswith("MIG")
                or any(u.lower().startswith(e.lower()) for u in uuids)
            )
        else:
            ok = False
        if not ok:
            invalid = e
            break
        if e not in visible:
            visible.append(e)
    return Visibility(True, tuple(visible), not visible, invalid)
