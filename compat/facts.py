"""Facts about a stack: typed values with the raw string, the parsed value and where they came from."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from compat._text import json_kind
from compat._valueclass import valueclass
from compat.errors import InputError
from compat.schema_version import SCHEMA_VERSION
from compat.versions import (
    parse_arch,
    parse_cc,
    parse_dotted,
    parse_driver_input,
    parse_python,
    parse_version,
)

OS_NAMES = ("linux", "windows", "macos")


def _parse_os(raw: str) -> str:
    text = raw.strip().lower()
    aliases = {"win32": "windows", "win": "windows", "darwin": "macos", "mac": "macos", "osx": "macos"}
    text = aliases.get(text, text)
    if text not in OS_NAMES:
        raise InputError(f"unknown OS {raw!r} (expected one of: {', '.join(OS_NAMES)})")
    return text


def _parse_archs(raw: str) -> str:
    items = [a for a in raw.replace(",", " ").replace(";", " ").split() if a]
    return " ".join(str(parse_arch(a)) for a in items)


def _parse_cuda(raw: str) -> str:
    return str(parse_dotted(raw, "CUDA version", min_parts=2))


def _parse_cudnn(raw: str) -> str:
    return str(parse_dotted(raw, "cuDNN version"))


def _parse_bool(raw: str, what: str) -> str:
    text = raw.strip().lower()
    if text in ("1", "true", "yes"):
        return "true"
    if text in ("0", "false", "no"):
        return "false"
    raise InputError(f"malformed {what} {raw!r} (expected true or false)")


def _parse_build(raw: str, what: str) -> str:
    text = raw.strip().lower()
    if text not in ("cuda", "cpu", "rocm"):
        raise InputError(f"malformed {what} {raw!r} (expected cuda, cpu or rocm)")
    return text


def _parse_jax(raw: str) -> str:
    from compat.jaxmatrix import parse_jax

    try:
        return parse_jax(raw).raw
    except ValueError as exc:
        raise InputError(f"malformed JAX version: {exc}") from None


# Scalar facts: name -> (parser returning the normalised value, description). The names are the
# `compat check` flags and the COMPAT_OVERRIDE_<NAME> variables; they are a public contract.
FACT_PARSERS: dict[str, tuple[Callable[[str], str], str]] = {
    "os": (_parse_os, "operating system"),
    "python": (lambda r: str(parse_python(r)), "Python version"),
    "driver": (lambda r: str(parse_driver_input(r)), "NVIDIA driver version"),
    "driver_cuda": (_parse_cuda, "highest CUDA version the driver supports"),
    "cuda": (_parse_cuda, "CUDA toolkit/runtime version"),
    "cudnn": (_parse_cudnn, "cuDNN version"),
    "torch": (lambda r: str(parse_version(r, "PyTorch version")), "PyTorch version"),
    "torch_cuda": (_parse_cuda, "CUDA version PyTorch was built with"),
    "torch_cudnn": (_parse_cudnn, "cuDNN version PyTorch uses"),
    "torch_archs": (_parse_archs, "architectures compiled into PyTorch"),
    "tensorflow": (lambda r: str(parse_version(r, "TensorFlow version")), "TensorFlow version"),
    "jax": (lambda r: _parse_jax(r), "JAX version (0.10.2, or 0.10.2+cuda12 with its CUDA plugin)"),
    "jaxlib": (lambda r: str(parse_version(r, "jaxlib version")), "jaxlib version"),
    "tf_cuda": (_parse_cuda, "CUDA version TensorFlow was built with"),
    "tf_cudnn": (_parse_cudnn, "cuDNN version TensorFlow was built with"),
    "tf_archs": (_parse_archs, "architectures compiled into TensorFlow"),
    "torch_build": (lambda r: _parse_build(r, "torch_build"), "PyTorch build kind (cuda, cpu, rocm)"),
    "tf_build": (lambda r: _parse_build(r, "tf_build"), "TensorFlow build kind (cuda, cpu, rocm)"),
    "tf_and_cuda": (
        lambda r: _parse_bool(r, "tf_and_cuda"),
        "TensorFlow installed with the [and-cuda] extra",
    ),
}

# Facts that describe a framework build: replacing the framework version invalidates them.
DERIVED = {
    "torch": ("torch_cuda", "torch_cudnn", "torch_archs", "torch_build"),
    "tensorflow": ("tf_cuda", "tf_cudnn", "tf_archs", "tf_build", "tf_and_cuda"),
    "jax": ("jaxlib",),
}

OVERRIDE_PREFIX = "COMPAT_OVERRIDE_"
OVERRIDABLE = ("driver", "gpu", "cc", "cuda", "cudnn", "torch", "tensorflow", "jax", "python", "os")


@valueclass
class Fact:
    """One fact: present (raw + parsed value) or missing (with the reason)."""

    raw: str | None
    """The string as reported, e.g. "535.104.05"; None when missing."""
    source: str
    """Where it came from: "nvml", "--driver", "snapshot", "COMPAT_OVERRIDE_DRIVER", "Dockerfile:3"."""
    value: str | None = None
    """The parsed, normalised value ("535.104.5"); compare through compat.versions, display `raw`."""
    reason: str | None = None
    """Why the fact is missing; None when present."""

    @property
    def present(self) -> bool:
        return self.raw is not None

    def to_json(self) -> dict[str, Any]:
        if self.raw is None:
            return {"missing": True, "reason": self.reason, "source": self.source}
        return {"raw": self.raw, "value": self.value, "source": self.source}


def make_fact(name: str, raw: str | None, source: str, reason: str | None = None) -> Fact:
    """Validate and normalise `raw` as fact `name`; InputError on malformed input."""
    if raw is None or raw.strip() == "":
        return Fact(None, source, None, reason or f"{source} gave no value")
    parser = FACT_PARSERS.get(name)
    value = parser[0](raw) if parser else raw.strip()
    return Fact(raw.strip(), source, value)


def missing(source: str, reason: str) -> Fact:
    return Fact(None, source, None, reason)


@valueclass
class Gpu:
    """One GPU: its name as reported and, where known, its compute capability."""

    name: str | None
    cc: str | None
    source: str
    index: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """Probe data (memory, health, uuid); JSON-serialisable."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "name": self.name, "cc": self.cc, "source": self.source}
        out.update({k: self.details[k] for k in sorted(self.details)})
        return out


@valueclass
class Facts:
    """Everything known about one stack. Missing facts are absent from `values` or present as missing."""

    values: Mapping[str, Fact] = field(default_factory=dict)
    gpus: tuple[Gpu, ...] | None = None
    """None: unknown whether there are GPUs; (): known to have none."""
    gpus_source: str = ""
    probes: Mapping[str, Any] = field(default_factory=dict)
    """Structured probe results for the doctor's checks: a compat.probes.probeset.ProbeSet (typed; as a Mapping it
    reads as its JSON form), or a plain JSON mapping that checks decode with compat.probes.probeset.probe_set."""

    def get(self, name: str) -> Fact | None:
        f = self.values.get(name)
        return f if f is not None and f.present else None

    def reason(self, name: str) -> str | None:
        f = self.values.get(name)
        return f.reason if f is not None else None

    def with_values(self, updates: Mapping[str, Fact]) -> Facts:
        vals = dict(self.values)
        for name, fact in updates.items():
            for derived in DERIVED.get(name, ()):
                vals.pop(derived, None)
            vals[name] = fact
        return replace(self, values=vals)

    def with_gpus(self, gpus: tuple[Gpu, ...] | None, source: str) -> Facts:
        return replace(self, gpus=gpus, gpus_source=source)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: self.values[name].to_json() for name in sorted(self.values)}
        out["gpus"] = None if self.gpus is None else [g.to_json() for g in self.gpus]
        return out

    def to_snapshot(self) -> dict[str, Any]:
        from compat.probes.probeset import ProbeSet  # the one codec of probe results

        return {
            "schema_version": SCHEMA_VERSION,
            "facts": self.to_json(),
            "probes": ProbeSet.from_json(self.probes).to_json(),
        }


def apply_flags(facts: Facts, flags: Mapping[str, str | None], source_fmt: str = "--{}") -> Facts:
    """Overlay explicitly given values (CLI flags or overrides) on `facts`; None means 'not given'."""
    updates: dict[str, Fact] = {}
    gpu_name = flags.get("gpu")
    cc = flags.get("cc")
    for name, raw in flags.items():
        if raw is None or name in ("gpu", "cc"):
            continue
        src = source_fmt.format(name.replace("_", "-") if source_fmt.startswith("--") else name.upper())
        updates[name] = make_fact(name, raw, src, reason=f"{src} is empty")
    out = facts.with_values(updates) if updates else facts
    if gpu_name is not None or cc is not None:
        if cc is not None and cc.strip():
            cc_norm: str | None = str(parse_cc(cc))
        else:
            cc_norm = None
        gname: str | None = gpu_name.strip() if gpu_name else None
        if not gname and not cc_norm:
            src = source_fmt.format("gpu" if source_fmt.startswith("--") else "GPU")
            return out.with_gpus((), src)
        if gname is None and out.gpus:
            # --cc alone refines the GPUs already known (e.g. from a snapshot).
            gpus = tuple(replace(g, cc=cc_norm) for g in out.gpus)
            return out.with_gpus(gpus, out.gpus_source)
        src = (
            source_fmt.format("gpu" if gpu_name is not None else "cc")
            if source_fmt.startswith("--")
            else (source_fmt.format("GPU" if gpu_name is not None else "CC"))
        )
        return out.with_gpus((Gpu(name=gname or None, cc=cc_norm, source=src, index=0),), src)
    return out


def read_overrides(environ: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """COMPAT_OVERRIDE_<FACT> values present in the environment ('' means: the fact is absent)."""
    env = os.environ if environ is None else environ
    out: dict[str, str | None] = {}
    for name in OVERRIDABLE:
        key = OVERRIDE_PREFIX + name.upper()
        if key in env:
            out[name] = env[key]
    return out


MAX_ECHO = 80
"""Characters of a user's value echoed in a message (a 100 KB value must not give a 100 KB line)."""


def shorten(value: str, limit: int = MAX_ECHO) -> str:
    """`value` cut to `limit` characters with an ellipsis, for messages that echo it."""
    return value if len(value) <= limit else value[:limit] + f"… ({len(value)} characters)"


def apply_overrides(facts: Facts, environ: Mapping[str, str] | None = None) -> Facts:
    """Replace facts by COMPAT_OVERRIDE_<FACT> variables, wherever facts are gathered.

    A malformed value is an InputError naming the variable (not a flag the user never gave), value shortened.
    """
    overrides = read_overrides(environ)
    for name, raw in overrides.items():  # one at a time first: the message names the variable that is wrong
        try:
            apply_flags(facts, {name: raw}, source_fmt=OVERRIDE_PREFIX + "{}")
        except InputError as exc:
            var = OVERRIDE_PREFIX + name.upper()
            why = str(exc)
            if raw is not None and len(raw) > MAX_ECHO:
                why = why.replace(repr(raw), repr(shorten(raw)))
            raise InputError(f"{var}={shorten(raw or '')!r} is not valid: {shorten(why, 300)}") from None
    return apply_flags(facts, overrides, source_fmt=OVERRIDE_PREFIX + "{}")


def host_os() -> str:
    if sys.platform.startswith("win"):
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def host_name() -> str:
    """This machine's name, as socket.gethostname() gives it (on POSIX the kernel's nodename, read without
    importing socket): what the doctor reports and what --redact hides."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket  # pragma: no cover - Windows

    return socket.gethostname()  # pragma: no cover


def host_python() -> str:
    return sys.version.split()[0]  # platform.python_version(), without importing platform (~2 ms)


# ---------------------------------------------------------------- snapshots


def facts_from_json(doc: Any, origin: str) -> Facts:
    """Rebuild Facts from a snapshot document; InputError naming `origin` on any problem."""
    if not isinstance(doc, dict):
        raise InputError(f"{origin}: not a compat snapshot (expected a JSON object)")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise InputError(
            f"{origin}: unsupported snapshot schema_version {json_kind(doc.get('schema_version'))} "
            f"(this compat reads {SCHEMA_VERSION})"
        )
    raw_facts = doc.get("facts")
    if not isinstance(raw_facts, dict):
        raise InputError(f"{origin}: snapshot has no 'facts' object")
    values: dict[str, Fact] = {}
    gpus: tuple[Gpu, ...] | None = None
    for name, item in raw_facts.items():
        if name == "gpus":
            gpus = _gpus_from_json(item, origin)
            continue
        if not isinstance(item, dict):
            raise InputError(f"{origin}: fact {name!r} is not an object")
        source = str(item.get("source", "snapshot"))
        if item.get("missing"):
            values[name] = missing(source, str(item.get("reason") or "missing in snapshot"))
            continue
        raw = item.get("raw")
        if not isinstance(raw, str):
            raise InputError(f"{origin}: fact {name!r} has no 'raw' string")
        try:
            values[name] = make_fact(name, raw, source)
        except InputError as exc:
            raise InputError(f"{origin}: fact {name!r}: {exc}") from None
    probes = doc.get("probes", {})
    if not isinstance(probes, dict):
        raise InputError(f"{origin}: 'probes' is not an object")
    from compat.probes.probeset import ProbeSet  # the one codec of probe results: lenient, keeps unknown keys

    return Facts(
        values=values,
        gpus=gpus,
        gpus_source="snapshot" if gpus is not None else "",
        probes=ProbeSet.from_json(probes),
    )


def _gpus_from_json(item: Any, origin: str) -> tuple[Gpu, ...] | None:
    if item is None:
        return None
    if not isinstance(item, list):
        raise InputError(f"{origin}: 'gpus' is not a list")
    out = []
    for i, g in enumerate(item):
        if not isinstance(g, dict):
            raise InputError(f"{origin}: gpus[{i}] is not an object")
        cc = g.get("cc")
        if cc is not None:
            try:
                cc = str(parse_cc(str(cc)))
            except InputError as exc:
                raise InputError(f"{origin}: gpus[{i}]: {exc}") from None
        details = {k: v for k, v in g.items() if k not in ("index", "name", "cc", "source")}
        name = g.get("name")
        out.append(
            Gpu(
                name=str(name) if name is not None else None,
                cc=cc,
                source=str(g.get("source", "snapshot")),
                index=g.get("index") if isinstance(g.get("index"), int) else i,
                details=details,
            )
        )
    return tuple(out)


def load_snapshot(path: str | Path) -> Facts:
    """Read a snapshot file written by `compat doctor --save-snapshot`; InputError on any problem."""
    from compat.inputs import read_bytes

    p = Path(path)
    try:
        text = read_bytes(str(p), "snapshot", SNAPSHOT_MAX_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"snapshot {str(p)!r} cannot be read: {exc}") from None
    if not text.strip():
        raise InputError(f"snapshot {str(p)!r} is empty")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"snapshot {str(p)!r} is not JSON: {exc.msg} at line {exc.lineno}") from None
    except (RecursionError, ValueError) as exc:  # arrays nested ~1000 deep; an integer of over 4300 digits
        raise InputError(f"snapshot {str(p)!r} is not a compat snapshot: {json_error(exc)}") from None
    if json_too_deep(doc):
        raise InputError(
            f"snapshot {str(p)!r} is not a compat snapshot: JSON nested more than "
            f"{MAX_JSON_DEPTH} levels deep"
        )
    return facts_from_json(doc, f"snapshot {str(p)!r}")


SNAPSHOT_MAX_BYTES = 16 << 20
"""A snapshot is a few KiB; a larger file (or an endless one such as /dev/zero) is refused with exit 2."""
MAX_JSON_DEPTH = 100
"""Snapshots and doctor reports nest 7 levels; deeper input is refused before anything recurses into it."""


def json_too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a parsed JSON value nests deeper than `limit` (walked without recursion)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, depth = todo.pop()
        if isinstance(v, dict):
            kids: Any = v.values()
        elif isinstance(v, list):
            kids = v
        else:
            continue
        if depth >= limit:
            return True
        todo.extend((k, depth + 1) for k in kids)
    return False


def json_error(exc: BaseException) -> str:
    """One line for what json.loads raises besides JSONDecodeError (RecursionError, int conversion)."""
    if isinstance(exc, RecursionError):
        return f"JSON nested more than {MAX_JSON_DEPTH} levels deep"
    text = str(exc).split(":")[0]
    return f"unreadable JSON value ({text})" if text else "unreadable JSON value"


def save_snapshot(facts: Facts, path: str | Path) -> None:
    Path(path).write_text(json.dumps(facts.to_snapshot(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
