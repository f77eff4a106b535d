"""The one JSON codec of probe results: the ProbeResult base, to_json/from_json, and ProbeFailed.

A decoded record remembers which of its keys were present, and a key it does not model, or a value of the wrong type
(a hand-edited or foreign snapshot), is kept verbatim in `extra` (and written back) while the typed field keeps its
default and the key is listed in `malformed`. Decoding never raises. The probe records themselves are in
compat.probes.model. This module imports nothing from compat.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin

from compat._valueclass import valueclass

FailKind = Literal["timeout", "error", "crashed", "unavailable"]
"""How a probe failed: it hung past its deadline, raised or returned an error, its child process died on a signal,
or what it needs is not installed (the NVML binding)."""

FAIL_KINDS: tuple[FailKind, ...] = ("timeout", "error", "crashed", "unavailable")

R = TypeVar("R", bound="ProbeResult")


@valueclass
class ProbeResult:
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

JSON_KEY = "json_key"  # field metadata: the JSON key when it is not a Python name ("class")


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get(JSON_KEY, f.name))


_HINTS: dict[type, dict[str, Any]] = {}
_EVALUATED: dict[tuple[str, str], Any] = {}
"""(module, annotation text) -> the type: the records repeat a few texts ("str | None") many times."""


def _hints(cls: type) -> dict[str, Any]:
    """typing.get_type_hints(cls) for the records' string annotations, each distinct text evaluated once (the
    records are decoded on every doctor run: get_type_hints took ~3 ms of it)."""
    h = _HINTS.get(cls)
    if h is None:
        h = {}
        for base in reversed(cls.__mro__):
            for name, ann in base.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - own classes, string annotations
                if isinstance(ann, str):
                    key = (base.__module__, ann)
                    if key not in _EVALUATED:
                        _EVALUATED[key] = eval(ann, vars(sys.modules[base.__module__]))  # noqa: S307 - our own annotations
                    ann = _EVALUATED[key]
                h[name] = type(None) if ann is None else ann
        _HINTS[cls] = h
    return h


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.name not in ("extra", "present", "malformed"))


def _malformed(value: Any, prefix: str) -> list[str]:
    if isinstance(value, ProbeResult):
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
    if isinstance(tp, type) and issubclass(tp, ProbeResult):
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
    if isinstance(value, (ProbeResult, ProbeFailed)):
        return value.to_json()
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _encode(v) for k, v in value.items()}
    return value


def to_json(obj: ProbeResult | ProbeFailed) -> Any:
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


@valueclass
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


__all__ = ["FAIL_KINDS", "FailKind", "ProbeFailed", "ProbeResult", "from_json", "is_failure", "to_json"]
