"""What the probes return, typed: one frozen dataclass per probe subject, ProbeFailed, and the one JSON codec.

The doctor's checks read these attributes (mypy checks them) instead of string keys. `to_json`/`from_json` are the
only encoder and decoder of probe results: `compat doctor --json` ("probes"), `--save-snapshot` and
`compat check --snapshot` all go through them, so a snapshot round-trips. The JSON keys are a public contract and are
exactly the keys the untyped dicts had: a decoded record remembers which of its keys were present, and a key it
does not model, or a value of the wrong type (a hand-edited or foreign snapshot), is kept verbatim in `extra` (and
written back) while the typed field keeps its default. Decoding never raises.

This module imports nothing from compat, so any layer (facts, checks, the resolver) may use it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin

FailKind = Literal["timeout", "error", "crashed", "unavailable"]
"""How a probe failed: it hung past its deadline, raised or returned an error, its child process died on a signal,
or what it needs is not installed (the NVML binding)."""

FAIL_KINDS: tuple[FailKind, ...] = ("timeout", "error", "crashed", "unavailable")

R = TypeVar("R", bound="Record")


@dataclass(frozen=True)
class Record:
    """Base of every probe record: the keys a decoded record had, and what the model does not type."""

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)
    """JSON keys the model does not name, or whose value had an unexpected type: written back unchanged."""
    present: tuple[str, ...] | None = field(default=None, kw_only=True, compare=False, repr=False)
    """The modelled keys the JSON had (None: a record built in code writes every field)."""
    malformed: tuple[str, ...] = field(default=(), kw_only=True, compare=False, repr=False)
    """Modelled keys whose JSON value had the wrong type (kept in `extra`; the field keeps its default)."""

    def malformed_paths(self, prefix: str = "") -> list[str]:
        """Every malformed key in this record and the records inside it ("xid", "shm", "children.torch.result")."""
        out = [f"{prefix}{k}" for k in self.malformed]
        for f in _fields(type(self)):
            out.extend(_malformed(getattr(self, f.name), f"{prefix}{_key(f)}."))
        return out

    def to_json(self) -> dict[str, Any]:
        return cast(dict[str, Any], to_json(self))

    @classmethod
    def from_json(cls: type[R], doc: Any) -> R:
        return from_json(cls, doc)


# ------------------------------------------------------------------ the codec

_KEY = "json_key"  # field metadata: the JSON key when it is not a Python name ("class")


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get(_KEY, f.name))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    h = _HINTS.get(cls)
    if h is None:
        h = _HINTS[cls] = typing.get_type_hints(cls)
    return h


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.name not in ("extra", "present", "malformed"))


def _malformed(value: Any, prefix: str) -> list[str]:
    if isinstance(value, Record):
        return value.malformed_paths(prefix)
    if isinstance(value, tuple):
        return [p for i, v in enumerate(value) for p in _malformed(v, f"{prefix}{i}.")]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _malformed(v, f"{prefix}{k}.")]
    return []


class _Bad(Exception):
    """A JSON value that does not fit the annotation (never leaves this module)."""


def _decode(tp: Any, value: Any) -> Any:
    if tp is Any:
        return value
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = get_args(tp)
        if value is None:
            if type(None) in args:
                return None
            raise _Bad
        for a in args:
            if a is type(None):
                continue
            try:
                return _decode(a, value)
            except _Bad:
                continue
        raise _Bad
    if origin is Literal:
        if value in get_args(tp):
            return value
        raise _Bad
    if origin is tuple:
        if not isinstance(value, list):
            raise _Bad
        (item,) = get_args(tp)[:1]
        return tuple(_decode(item, v) for v in value)
    if origin in (Mapping, dict):
        if not isinstance(value, dict):
            raise _Bad
        _k, vt = get_args(tp)
        return {str(k): _decode(vt, v) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, ProbeFailed):
        if not isinstance(value, dict):
            raise _Bad
        return ProbeFailed.decode(value)
    if isinstance(tp, type) and issubclass(tp, Record):
        if not isinstance(value, dict):
            raise _Bad
        return from_json(tp, value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _Bad
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Bad
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise _Bad
    if tp is str:
        if isinstance(value, str):
            return value
        raise _Bad
    raise _Bad


def from_json(cls: type[R], doc: Any) -> R:
    """Decode a probe record; never raises (a value that is not an object gives the defaults, marked malformed;
    ProbeSet keeps such a value whole, in `others`, so that it is written back)."""
    if not isinstance(doc, Mapping):
        return cls(malformed=("(not an object)",) if doc is not None else ())
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    present: list[str] = []
    malformed: list[str] = []
    known = {_key(f): f for f in _fields(cls)}
    for k, v in doc.items():
        f = known.get(k)
        if f is None:
            extra[k] = v
            continue
        try:
            kwargs[f.name] = _decode(hints[f.name], v)
            present.append(k)
        except _Bad:
            extra[k] = v
            malformed.append(k)
    return cls(**kwargs, extra=extra, present=tuple(present), malformed=tuple(malformed))


def _encode(value: Any) -> Any:
    if isinstance(value, (Record, ProbeFailed)):
        return value.to_json()
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _encode(v) for k, v in value.items()}
    return value


def to_json(obj: Record | ProbeFailed) -> Any:
    """The JSON form of a probe record (exactly the keys it was decoded from, or every field)."""
    if isinstance(obj, ProbeFailed):
        return obj.to_json()
    out: dict[str, Any] = {}
    only = set(obj.present) if obj.present is not None else None
    for f in _fields(type(obj)):
        k = _key(f)
        if only is None or k in only:
            out[k] = _encode(getattr(obj, f.name))
    out.update(obj.extra)
    return out


# ------------------------------------------------------------------ failures


@dataclass(frozen=True)
class ProbeFailed:
    """A probe that could not answer: how (`kind`) and why (`reason`), instead of status strings and error dicts."""

    kind: FailKind
    reason: str
    cause: str | None = None
    """NVML's finer classification ("library-not-found", "driver-not-loaded", "hang", "crashed", "gpu-lost", ...)."""
    code: int | None = None
    """The NVML return code, when there is one."""
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The JSON it was decoded from: written back unchanged (its keys are the public contract)."""

    @classmethod
    def decode(cls, doc: Mapping[str, Any]) -> ProbeFailed:
        status = doc.get("status")
        kind: FailKind = cast(FailKind, status) if status in FAIL_KINDS else "error"
        err = doc.get("error")
        if isinstance(err, Mapping):
            reason = err.get("message")
            cause = err.get("kind")
            code = err.get("code")
        else:
            reason = doc.get("message") if err is None else err
            cause = doc.get("kind")
            code = doc.get("code")
        return cls(
            kind,
            str(reason) if reason is not None else f"probe status {status!r}",
            str(cause) if isinstance(cause, str) else None,
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            raw=dict(doc),
        )

    def to_json(self) -> dict[str, Any]:
        if self.raw is not None:
            return dict(self.raw)
        return {"status": self.kind, "error": self.reason}


def is_failure(doc: Any) -> bool:
    """Whether a probe's JSON says it failed (a status other than "ok")."""
    return isinstance(doc, Mapping) and isinstance(doc.get("status"), str) and doc.get("status") != "ok"


# ------------------------------------------------------------------ NVML and nvidia-smi


@dataclass(frozen=True)
class NvmlGarbage(Record):
    """One value NVML answered that no working driver returns (compat.probes.sanity)."""

    gpu: int | None = None
    field: str | None = None
    value: Any = None
    why: str | None = None


@dataclass(frozen=True)
class NvmlState(Record):
    """What NVML said about the system when it answered (when it did not: ProbeFailed, NVML's kind in `cause`)."""

    status: str | None = None
    driver: str | None = None
    driver_cuda: str | None = None
    nvml_version: str | None = None
    device_count: int | None = None
    garbage: tuple[NvmlGarbage, ...] = ()


@dataclass(frozen=True)
class NvidiaSmi(Record):
    """nvidia-smi, asked only when NVML failed: `ok`, else `kind` ("skipped", "missing", "hang", "garbage", ...)."""

    ok: bool | None = None
    kind: str | None = None
    message: str | None = None
    driver: str | None = None
    library_version: str | None = None
    status: str | None = None
    fields: tuple[str, ...] | None = None


# ------------------------------------------------------------------ driver


@dataclass(frozen=True)
class PciGpu(Record):
    address: str | None = None
    device: str | None = None
    driver: str | None = None
    pci_class: str | None = field(default=None, metadata={_KEY: "class"})


@dataclass(frozen=True)
class DriverState(Record):
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


@dataclass(frozen=True)
class Chosen(Record):
    """The toolkit or cuDNN a fact was taken from."""

    version: str | None = None
    source: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class Nvcc(Record):
    status: str | None = None
    path: str | None = None
    release: str | None = None
    error: str | None = None
    output: str | None = None


@dataclass(frozen=True)
class Toolkit(Record):
    path: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class LdLib(Record):
    dir: str | None = None
    file: str | None = None


@dataclass(frozen=True)
class Toolkits(Record):
    """CUDA toolkits: nvcc on PATH, CUDA_HOME/CUDA_PATH, /usr/local/cuda*, and CUDA libraries on LD_LIBRARY_PATH."""

    status: str | None = None
    nvcc: Nvcc = field(default_factory=Nvcc)
    cuda_home: Mapping[str, str] = field(default_factory=dict)
    toolkits: tuple[Toolkit, ...] = ()
    installed: Mapping[str, str] = field(default_factory=dict)
    releases: tuple[str, ...] = ()
    chosen: Chosen | None = None
    ld_library_path_libs: tuple[LdLib, ...] = ()


@dataclass(frozen=True)
class Header(Record):
    path: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class Cudnn(Record):
    status: str | None = None
    headers: tuple[Header, ...] = ()
    distinct: tuple[str, ...] = ()
    system_versions: tuple[str, ...] = ()
    chosen: Chosen | None = None


# ------------------------------------------------------------------ frameworks


@dataclass(frozen=True)
class BuildInfo(Record):
    is_cuda_build: bool | None = None
    cuda_version: str | None = None


@dataclass(frozen=True)
class ChildResult(Record):
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


@dataclass(frozen=True)
class FrameworkChild(Record):
    """One framework imported in a child interpreter: `status` "ok", "skipped", "crashed", "timeout", ..."""

    status: str | None = None
    result: ChildResult | None = None
    output: str | None = None
    signal: str | None = None


@dataclass(frozen=True)
class PinConflict(Record):
    framework: str = ""
    framework_version: str | None = None
    dist: str = ""
    requires: str = ""
    installed: str = ""
    and_extra: Any = field(default=None, metadata={_KEY: "extra"})
    """The extra that pins it ("and-cuda"), when the pin comes from one."""


@dataclass(frozen=True)
class FrameworksMeta(Record):
    output: str | None = None


@dataclass(frozen=True)
class Frameworks(Record):
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


@dataclass(frozen=True)
class Cgroup(Record):
    version: int | None = None
    memory_limit: int | None = None
    oom_kills: int | None = None
    cpu_quota: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class Shm(Record):
    path: str | None = None
    total: int | None = None
    free: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Memory(Record):
    total: int | None = None
    available: int | None = None
    swap_total: int | None = None
    swap_free: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Nofile(Record):
    soft: int | None = None
    hard: int | None = None


@dataclass(frozen=True)
class Cpus(Record):
    count: int | None = None
    affinity: int | None = None


@dataclass(frozen=True)
class Disk(Record):
    path: str | None = None
    total: int | None = None
    free: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Resources(Record):
    """Host memory, the cgroup's limits, /dev/shm, open files, CPUs and free disk."""

    status: str | None = None
    memory: Memory = field(default_factory=Memory)
    cgroup: Cgroup = field(default_factory=Cgroup)
    shm: Shm = field(default_factory=Shm)
    nofile: Nofile = field(default_factory=Nofile)
    cpus: Cpus = field(default_factory=Cpus)
    disk: tuple[Disk, ...] = ()


@dataclass(frozen=True)
class XidEvent(Record):
    code: int | None = None
    pci: str | None = None
    process: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class OomKill(Record):
    process: str | None = None
    pid: int | None = None
    anon_rss: int | None = None
    cgroup: bool | str | None = None
    """Whether (or at which cgroup) the kill hit a cgroup memory limit."""


@dataclass(frozen=True)
class KernelNote(Record):
    """A kernel-log line of interest besides Xid and OOM ("probe-not-called", "rm-init-failed", "api-mismatch")."""

    kind: str | None = None
    message: str | None = None
    client: str | None = None
    kernel: str | None = None


@dataclass(frozen=True)
class Health(Record):
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


@dataclass(frozen=True)
class Container(Record):
    in_container: bool | None = None
    signs: tuple[str, ...] = ()
    nvidia_visible_devices: str | None = None


@dataclass(frozen=True)
class Environment(Record):
    """The environment variables that matter, the container and WSL."""

    status: str | None = None
    vars: Mapping[str, str] = field(default_factory=dict)
    container: Container = field(default_factory=Container)
    wsl: bool | None = None
    wsl_lib: bool | None = None


@dataclass(frozen=True)
class Toolchain(Record):
    """The host C++ compiler."""

    status: str | None = None
    cxx: str | None = None
    compiler_status: str | None = None
    family: str | None = None
    version: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Meta(Record):
    """How the probes ran: timeouts, seconds per probe, which probes there are."""

    timeout: float | None = None
    framework_timeout: float | None = None
    seconds: Mapping[str, float] = field(default_factory=dict)
    total_seconds: float | None = None
    python: str | None = None
    probes: tuple[str, ...] = ()


# ------------------------------------------------------------------ GPU details (Facts.gpus[].details)


@dataclass(frozen=True)
class GpuProcess(Record):
    pid: int | None = None
    used_memory: int | None = None


@dataclass(frozen=True)
class MigMode(Record):
    current: bool | None = None
    pending: bool | None = None


@dataclass(frozen=True)
class RemappedRows(Record):
    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None


@dataclass(frozen=True)
class Pcie(Record):
    gen: int | None = None
    gen_max: int | None = None
    width: int | None = None
    width_max: int | None = None


@dataclass(frozen=True)
class GpuHealth(Record):
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


@dataclass(frozen=True)
class GpuDetails(Record):
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


# ------------------------------------------------------------------ all probes


SUBJECTS: dict[str, type[Record]] = {
    "nvml": NvmlState,
    "nvidia_smi": NvidiaSmi,
    "driver": DriverState,
    "toolkits": Toolkits,
    "cudnn": Cudnn,
    "frameworks": Frameworks,
    "resources": Resources,
    "health": Health,
    "environment": Environment,
    "toolchain": Toolchain,
    "meta": Meta,
}
"""Probe name -> its record type (the keys of Facts.probes and of "probes" in `compat doctor --json`)."""

# Records whose "failure" is a state they carry themselves (nvidia-smi's ok/kind), not a ProbeFailed.
_STATEFUL = ("nvidia_smi", "meta")


@dataclass(frozen=True)
class ProbeSet(Mapping[str, Any]):
    """Every probe's result (or ProbeFailed; None when the probe did not run), what Facts.probes holds.

    As a Mapping it reads as the JSON form (`facts.probes["nvml"]["kind"]`), for the readers that predate the
    model (the smoke job, explain's cross-check, fleet reports); checks use the typed attributes.
    """

    nvml: NvmlState | ProbeFailed | None = None
    nvidia_smi: NvidiaSmi | None = None
    driver: DriverState | ProbeFailed | None = None
    toolkits: Toolkits | ProbeFailed | None = None
    cudnn: Cudnn | ProbeFailed | None = None
    frameworks: Frameworks | ProbeFailed | None = None
    resources: Resources | ProbeFailed | None = None
    health: Health | ProbeFailed | None = None
    environment: Environment | ProbeFailed | None = None
    toolchain: Toolchain | ProbeFailed | None = None
    meta: Meta | None = None
    others: Mapping[str, Any] = field(default_factory=dict)
    """Probe names this compat does not know (a newer compat's snapshot): kept and written back."""

    @classmethod
    def from_json(cls, doc: Any) -> ProbeSet:
        """Decode Facts.probes / a snapshot's "probes"; never raises."""
        if isinstance(doc, ProbeSet):
            return doc
        if not isinstance(doc, Mapping):
            return cls()
        kwargs: dict[str, Any] = {}
        others: dict[str, Any] = {}
        for name, value in doc.items():
            rec = SUBJECTS.get(name)
            if rec is None:
                others[name] = value
            elif not isinstance(value, Mapping):
                others[name] = value  # not an object: kept for the writer, unknown to the checks
            elif name == "frameworks" and value.get("status") == "error" and "python_executable" in value:
                kwargs[name] = rec.from_json(value)  # a broken --python interpreter: a finding of its own
            elif name not in _STATEFUL and is_failure(value):
                kwargs[name] = ProbeFailed.decode(value)
            else:
                kwargs[name] = rec.from_json(value)
        return cls(**kwargs, others=others)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in SUBJECTS:
            v = getattr(self, name)
            if v is not None:
                out[name] = to_json(v)
        out.update({k: v for k, v in self.others.items() if k not in out})
        return out

    def malformed(self) -> dict[str, list[str]]:
        """Probe name -> the keys whose value had an unexpected type (a hand-edited or foreign snapshot)."""
        out: dict[str, list[str]] = {}
        for name in SUBJECTS:
            v = getattr(self, name)
            paths = v.malformed_paths() if isinstance(v, Record) else []
            if paths:
                out[name] = paths
        return out

    def failed(self, name: str) -> ProbeFailed | None:
        v = getattr(self, name, None) if name in SUBJECTS else None
        return v if isinstance(v, ProbeFailed) else None

    # Mapping: the JSON form, key by key.
    def _names(self) -> list[str]:
        names = [n for n in SUBJECTS if getattr(self, n) is not None]
        return names + [k for k in self.others if k not in names]

    def __getitem__(self, key: str) -> Any:
        v = getattr(self, key) if key in SUBJECTS else None
        if v is not None:
            return to_json(v)
        return self.others[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProbeSet):
            return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(self))
        if isinstance(other, Mapping):
            return self.to_json() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def probe_set(probes: Any) -> ProbeSet:
    """Facts.probes as a ProbeSet (decoded when it is a plain mapping: hand-built Facts, old callers)."""
    return probes if isinstance(probes, ProbeSet) else ProbeSet.from_json(probes)


def gpu_details(details: Any) -> GpuDetails:
    """A compat.facts.Gpu's details, typed."""
    return GpuDetails.from_json(details if isinstance(details, Mapping) else {})


__all__ = [
    "FAIL_KINDS",
    "SUBJECTS",
    "Cudnn",
    "DriverState",
    "Environment",
    "FailKind",
    "Frameworks",
    "GpuDetails",
    "Health",
    "Meta",
    "NvidiaSmi",
    "NvmlState",
    "ProbeFailed",
    "ProbeSet",
    "Record",
    "Resources",
    "Toolchain",
    "Toolkits",
    "from_json",
    "gpu_details",
    "probe_set",
    "to_json",
]
