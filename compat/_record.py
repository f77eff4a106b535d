"""`record`: a dataclass that costs less to define, for compat's value classes (start-up time, issue 12).

On Python < 3.13, `@dataclass(frozen=True)` compiles six methods per class, each with its own `exec`: about
0.4 ms a class, and the doctor defines ~90 of them before it can answer (~35 ms of a ~200 ms run). A `record`
compiles one: the `__init__`. `__eq__`, `__hash__`, `__repr__`, `__setattr__` and `__delattr__` are shared functions
that read the class's fields (computed once per class). What stays the same: `dataclasses.fields()`,
`replace()`, `asdict()`, `is_dataclass()`, `field(...)` options (default, default_factory, kw_only, compare,
hash, repr, metadata), equality and hashing by the compared fields of the same class, FrozenInstanceError on
any assignment or deletion after `__init__`, `__post_init__`, pickling and copying.

What differs: a record's `__init__` assigns through the shared `__setattr__`, which lets each field be set
once (so `__init__` and `__post_init__` with `object.__setattr__` work as before); `__dataclass_params__.frozen`
reads False; a record may not inherit from a plain frozen dataclass (the dataclasses module refuses at import
time, so a mistake shows at once). mypy sees a frozen dataclass (`dataclass_transform`, PEP 681).

`record(frozen=False)` is a mutable dataclass with the shared `__eq__` and `__repr__` (and `__hash__ = None`).
"""

from __future__ import annotations

import dataclasses
import reprlib
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_kw: Any) -> Callable[[Any], Any]:
        return lambda f: f


T = TypeVar("T", bound=type)

_LOCK = threading.Lock()
_NAMES: dict[type, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}
"""class -> (compared fields, hashed fields, shown fields), computed on first use."""


def _names(cls: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    got = _NAMES.get(cls)
    if got is None:
        fs = dataclasses.fields(cls)
        got = (
            tuple(f.name for f in fs if f.compare),
            tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash)),
            tuple(f.name for f in fs if f.repr),
        )
        with _LOCK:
            _NAMES[cls] = got
    return got


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = _names(self.__class__)[0]
    return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, n) for n in _names(self.__class__)[1]))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _names(self.__class__)[2])
    return f"{self.__class__.__qualname__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    # Each field once (the generated __init__); nothing after.
    if name in self.__dict__ or name not in self.__class__.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _make(cls: T, frozen: bool, kw_only: bool) -> T:
    own = cls.__dict__
    for name in ("__setattr__", "__delattr__"):
        if frozen and name in own:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__qualname__}")
    # As the dataclasses module does: methods the class defines itself stay (an __eq__ without __hash__ leaves
    # Python's implicit __hash__ = None, which is not an explicit one).
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if cls.__doc__ is None:  # else the dataclasses module builds one from inspect.signature (slow)
        cls.__doc__ = cls.__qualname__
    out: Any = dataclasses.dataclass(cls, repr=False, eq=False, frozen=False, kw_only=kw_only)
    if "__eq__" not in own:
        out.__eq__ = _eq
    if "__repr__" not in own:
        out.__repr__ = _repr
    if not explicit_hash:
        out.__hash__ = _hash if frozen else None
    if frozen:
        out.__setattr__ = _setattr
        out.__delattr__ = _delattr
    return out  # type: ignore[no-any-return]


@overload
def record(cls: T, /) -> T: ...
@overload
def record(*, frozen: bool = True, kw_only: bool = False) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, frozen: bool = True, kw_only: bool = False) -> Any:
    """A frozen dataclass (`frozen=False`: a mutable one) that is cheap to define; see the module docstring."""
    if cls is None:
        return lambda c: _make(c, frozen, kw_only)
    return _make(cls, frozen, kw_only)


__all__ = ["record"]
