"""What the probes return, typed: one frozen dataclass per probe subject (and a GPU's details).

The doctor's checks read these attributes (mypy checks them) instead of string keys. Every record encodes and
decodes through the one codec in compat.probes.codec (`to_json`/`from_json`, ProbeFailed for a probe that could not
answer): `compat doctor --json` ("probes"), `--save-snapshot` and `compat check --snapshot` all go through it, so a
snapshot round-trips, and the JSON keys (a public contract) are exactly the keys the untyped dicts had.

All of one run's results together: compat.probes.probeset.ProbeSet. This module imports nothing from compat but
the codec, so any layer (facts, checks, the resolver) may use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.probes.codec import FAIL_KINDS, JSON_KEY, FailKind, ProbeFailed, ProbeResult, from_json, to_json

# ------------------------------------------------------------------ NVML and nvidia-smi


@valueclass
class NvmlGarbage(ProbeResult):
    """One value NVML answered that no working driver returns (compat.probes.sanity)."""

    gpu: int | None = None
    field: str | None = None
    value: Any = None
    why: str | None = None


@valueclass
class NvmlState(ProbeResult):
    """What NVML said about the system when it answered (when it did not: ProbeFailed, NVML's kind in `cause`)."""

    status: str | None = None
    driver: str | None = None
    driver_cuda: str | None = None
    nvml_version: str | None = None
    device_count: int | None = None
    garbage: tuple[NvmlGarbage, ...] = ()


@valueclass
class NvidiaSmi(ProbeResult):
    """nvidia-smi, asked only when NVML failed: `ok`, else `kind` ("skipped", "missing", "hang", "garbage", ...)."""

    ok: bool | None = None
    kind: str | None = None
    message: str | None = None
    driver: str | None = None
    library_version: str | None = None
    status: str | None = None
    fields: tuple[str, ...] | None = None


# ------------------------------------------------------------------ driver


@valueclass
class PciGpu(ProbeResult):
    address: str | None = None
    device: str | None = None
    driver: str | None = None
    pci_class: str | None = field(default=None, metadata={JSON_KEY: "class"})


@valueclass
class DriverState(ProbeResult):
    """The kernel module, device nodes, user-space libraries and the PCI bus."""

    status: str | None = None
    kernel_version: str | None = None
    kernel_flavor: str | None = None
    tegra: bool | None = None
    nouveau: bool | None = None
    mismatch: bool | None = None
    nvidia_module_loaded: bool | None = None
    dev_nodes: tuple[str, ...] = ()
    dev_inaccessible: tuple[str, ...] = ()
    has_nvidiactl: bool | None = None
    has_uvm: bool | None = None
    userspace_versions: tuple[str, ...] = ()
    libcuda_versions: tuple[str, ...] = ()
    pci_gpus: tuple[PciGpu, ...] = ()
    pci_readable: bool | None = None
    errors: Mapping[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ toolkits and cuDNN


@valueclass
class Chosen(ProbeResult):
    """The toolkit or cuDNN a fact was taken from."""

    version: str | None = None
    source: str | None = None
    path: str | None = None


@valueclass
class Nvcc(ProbeResult):
    status: str | None = None
    path: str | None = None
    release: str | None = None
    error: str | None = None
    output: str | None = None


@valueclass
class Toolkit(ProbeResult):
    path: str | None = None
    version: str | None = None


@valueclass
class LdLib(ProbeResult):
    dir: str | None = None
    file: str | None = None


@valueclass
class Toolkits(ProbeResult):
    """CUDA toolkits: nvcc on PATH, CUDA_HOME/CUDA_PATH, /usr/local/cuda*, and CUDA libraries on LD_LIBRARY_PATH."""

    status: str | None = None
    nvcc: Nvcc = field(default_factory=Nvcc)
    cuda_home: Mapping[str, str] = field(default_factory=dict)
    toolkits: tuple[Toolkit, ...] = ()
    installed: Mapping[str, str] = field(default_factory=dict)
    releases: tuple[str, ...] = ()
    chosen: Chosen | None = None
    ld_library_path_libs: tuple[LdLib, ...] = ()


@valueclass
class Header(ProbeResult):
    path: str | None = None
    version: str | None = None


@valueclass
class Cudnn(ProbeResult):
    status: str | None = None
    headers: tuple[Header, ...] = ()
    distinct: tuple[str, ...] = ()
    system_versions: tuple[str, ...] = ()
    chosen: Chosen | None = None


# ------------------------------------------------------------------ frameworks


@valueclass
class BuildInfo(ProbeResult):
    is_cuda_build: bool | None = None
    cuda_version: str | None = None


@valueclass
class ChildResult(ProbeResult):
    """What a framework child printed (torch, tensorflow or jax; each fills its own fields)."""

    version: str | None = None
    cuda: str | None = None
    cuda_available: bool | None = None
    warnings: tuple[Any, ...] = ()
    libs: tuple[str, ...] = ()
    build_info: BuildInfo = field(default_factory=BuildInfo)
    gpus: tuple[Any, ...] | None = None
    backend: str | None = None
    traceback: str | None = None


@valueclass
class FrameworkChild(ProbeResult):
    """One framework imported in a child interpreter: `status` "ok", "skipped", "crashed", "timeout", ..."""

    status: str | None = None
    result: ChildResult | None = None
    output: str | None = None
    signal: str | None = None


@valueclass
class PinConflict(ProbeResult):
    framework: str = ""
    framework_version: str | None = None
    dist: str = ""
    requires: str = ""
    installed: str = ""
    and_extra: Any = field(default=None, metadata={JSON_KEY: "extra"})
    """The extra that pins it ("and-cuda"), when the pin comes from one."""


@valueclass
class FrameworksMeta(ProbeResult):
    output: str | None = None


@valueclass
class Frameworks(ProbeResult):
    """The installed distributions, their pins, and each framework imported in a child."""

    status: str | None = None
    error: str | None = None
    python: str | None = None
    python_executable: str | None = None
    executable: str | None = None
    distributions: Mapping[str, Any] = field(default_factory=dict)
    requires: Mapping[str, Any] = field(default_factory=dict)
    conflicts: tuple[PinConflict, ...] = ()
    static: Mapping[str, Any] = field(default_factory=dict)
    children: Mapping[str, FrameworkChild] = field(default_factory=dict)
    meta: FrameworksMeta = field(default_factory=FrameworksMeta)


# ------------------------------------------------------------------ resources, health, environment, toolchain


@valueclass
class Cgroup(ProbeResult):
    version: int | None = None
    memory_limit: int | None = None
    oom_kills: int | None = None
    cpu_quota: float | None = None
    error: str | None = None


@valueclass
class Shm(ProbeResult):
    path: str | None = None
    total: int | None = None
    free: int | None = None
    error: str | None = None


@valueclass
class Memory(ProbeResult):
    total: int | None = None
    available: int | None = None
    swap_total: int | None = None
    swap_free: int | None = None
    error: str | None = None


@valueclass
class Nofile(ProbeResult):
    soft: int | None = None
    hard: int | None = None


@valueclass
class Cpus(ProbeResult):
    count: int | None = None
    affinity: int | None = None


@valueclass
class Disk(ProbeResult):
    path: str | None = None
    total: int | None = None
    free: int | None = None
    error: str | None = None


@valueclass
class Resources(ProbeResult):
    """Host memory, the cgroup's limits, /dev/shm, open files, CPUs and free disk."""

    status: str | None = None
    memory: Memory = field(default_factory=Memory)
    cgroup: Cgroup = field(default_factory=Cgroup)
    shm: Shm = field(default_factory=Shm)
    nofile: Nofile = field(default_factory=Nofile)
    cpus: Cpus = field(default_factory=Cpus)
    disk: tuple[Disk, ...] = ()


@valueclass
class XidEvent(ProbeResult):
    code: int | None = None
    pci: str | None = None
    process: str | None = None
    message: str | None = None


@valueclass
class OomKill(ProbeResult):
    process: str | None = None
    pid: int | None = None
    anon_rss: int | None = None
    cgroup: bool | str | None = None
    """Whether (or at which cgroup) the kill hit a cgroup memory limit."""


@valueclass
class KernelNote(ProbeResult):
    """A kernel-log line of interest besides Xid and OOM ("probe-not-called", "rm-init-failed", "api-mismatch")."""

    kind: str | None = None
    message: str | None = None
    client: str | None = None
    kernel: str | None = None


@valueclass
class Health(ProbeResult):
    """The kernel log: Xid events, OOM kills, and driver notes."""

    status: str | None = None
    source: str | None = None
    error: str | None = None
    xid: tuple[XidEvent, ...] = ()
    oom: tuple[OomKill, ...] = ()
    oom_total: int | None = None
    notes: tuple[KernelNote, ...] = ()

    def notes_of(self, kind: str) -> list[KernelNote]:
        return [n for n in self.notes if n.kind == kind]


@valueclass
class Container(ProbeResult):
    in_container: bool | None = None
    signs: tuple[str, ...] = ()
    nvidia_visible_devices: str | None = None


@valueclass
class Environment(ProbeResult):
    """The environment variables that matter, the container and WSL."""

    status: str | None = None
    vars: Mapping[str, str] = field(default_factory=dict)
    container: Container = field(default_factory=Container)
    wsl: bool | None = None
    wsl_lib: bool | None = None


@valueclass
class Toolchain(ProbeResult):
    """The host C++ compiler."""

    status: str | None = None
    cxx: str | None = None
    compiler_status: str | None = None
    family: str | None = None
    version: str | None = None
    error: str | None = None


@valueclass
class Meta(ProbeResult):
    """How the probes ran: timeouts, seconds per probe, which probes there are."""

    timeout: float | None = None
    framework_timeout: float | None = None
    seconds: Mapping[str, float] = field(default_factory=dict)
    total_seconds: float | None = None
    python: str | None = None
    probes: tuple[str, ...] = ()


# ------------------------------------------------------------------ GPU details (Facts.gpus[].details)


@valueclass
class GpuProcess(ProbeResult):
    pid: int | None = None
    used_memory: int | None = None


@valueclass
class MigMode(ProbeResult):
    current: bool | None = None
    pending: bool | None = None


@valueclass
class RemappedRows(ProbeResult):
    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None


@valueclass
class Pcie(ProbeResult):
    gen: int | None = None
    gen_max: int | None = None
    width: int | None = None
    width_max: int | None = None


@valueclass
class GpuHealth(ProbeResult):
    temperature: int | None = None
    temperature_slowdown: int | None = None
    throttle_reasons: tuple[str, ...] = ()
    power_usage_w: float | None = None
    power_limit_w: float | None = None
    power_default_limit_w: float | None = None
    ecc_uncorrected_volatile: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows: RemappedRows | None = None
    pcie: Pcie | None = None


@valueclass
class GpuDetails(ProbeResult):
    """One GPU's probe data (compat.facts.Gpu.details): memory in bytes, processes, modes and health."""

    uuid: str | None = None
    pci_bus_id: str | None = None
    memory_total: int | None = None
    memory_used: int | None = None
    memory_free: int | None = None
    processes: tuple[GpuProcess, ...] = ()
    persistence_mode: bool | None = None
    mig_mode: MigMode | None = None
    health: GpuHealth | None = None
    nvml_errors: Mapping[str, Any] = field(default_factory=dict)


def gpu_details(details: Any) -> GpuDetails:
    """A compat.facts.Gpu's details, typed."""
    return GpuDetails.from_json(details if isinstance(details, Mapping) else {})


__all__ = [
    "BuildInfo",
    "Cgroup",
    "ChildResult",
    "Chosen",
    "Container",
    "Cpus",
    "Cudnn",
    "Disk",
    "DriverState",
    "Environment",
    "FAIL_KINDS",
    "FailKind",
    "FrameworkChild",
    "Frameworks",
    "FrameworksMeta",
    "GpuDetails",
    "GpuHealth",
    "GpuProcess",
    "Header",
    "Health",
    "KernelNote",
    "LdLib",
    "Memory",
    "Meta",
    "MigMode",
    "Nofile",
    "Nvcc",
    "NvidiaSmi",
    "NvmlGarbage",
    "NvmlState",
    "OomKill",
    "PciGpu",
    "Pcie",
    "PinConflict",
    "ProbeFailed",
    "ProbeResult",
    "RemappedRows",
    "Resources",
    "Shm",
    "Toolchain",
    "Toolkit",
    "Toolkits",
    "XidEvent",
    "from_json",
    "gpu_details",
    "to_json",
]
