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
time, so a mistake shows at once). A class with a field that `__init__` leaves unset (`field(init=False)` without a
default, set in `__post_init__`) keeps the dataclasses module's frozen `__setattr__`/`__delattr__` (two more
compiled methods) so that the field cannot be assigned later. mypy sees a frozen dataclass (PEP 681).

`record(frozen=False)` is a mutable dataclass with the shared `__eq__` and `__repr__` (and `__hash__ = None`).
"""

from __future__ import annotations

import dataclasses
import operator
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
_KEYS: dict[
    type, tuple[Callable[[Any], tuple[Any, ...]], Callable[[Any], tuple[Any, ...]], tuple[str, ...]]
] = {}
"""class -> (its compared fields' values, its hashed fields' values, the names repr shows), built on first use."""


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of `names` as a tuple, read in C (operator.attrgetter) as the generated methods would."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)  # type: ignore[return-value]


def _keys(
    cls: type,
) -> tuple[Callable[[Any], tuple[Any, ...]], Callable[[Any], tuple[Any, ...]], tuple[str, ...]]:
    got = _KEYS.get(cls)
    if got is None:
        fs = dataclasses.fields(cls)
        got = (
            _getter(tuple(f.name for f in fs if f.compare)),
            _getter(tuple(f.name for f in fs if (f.compare if f.hash is None else f.hash))),
            tuple(f.name for f in fs if f.repr),
        )
        with _LOCK:
            _KEYS[cls] = got
    return got


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = _keys(self.__class__)[0]
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash(_keys(self.__class__)[1](self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _keys(self.__class__)[2])
    return f"{self.__class__.__qualname__}({shown})"


def _setattr(self: Any, name: str, value: Any) -> None:
    # Each field once (the generated __init__); nothing after.
    if name in self.__dict__ or name not in self.__class__.__dataclass_fields__:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _unset_by_init(cls: type) -> bool:
    """Whether a field of `cls` (or of its bases) is field(init=False) without a default: __init__ leaves it unset."""
    for klass in cls.__mro__:
        for value in vars(klass).values():
            if (
                isinstance(value, dataclasses.Field)
                and not value.init
                and value.default is dataclasses.MISSING
                and value.default_factory is dataclasses.MISSING
            ):
                return True
        for f in getattr(klass, "__dataclass_fields__", {}).values():
            if not f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                return True
    return False


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
    # A field __init__ leaves unset (field(init=False) without a default, set by __post_init__) would let the
    # set-once rule assign it later: such a class gets the dataclasses module's own frozen methods instead.
    plain_frozen = frozen and _unset_by_init(cls)
    out: Any = dataclasses.dataclass(cls, repr=False, eq=False, frozen=plain_frozen, kw_only=kw_only)
    if "__eq__" not in own:
        out.__eq__ = _eq
    if "__repr__" not in own:
        out.__repr__ = _repr
    if not explicit_hash:
        out.__hash__ = _hash if frozen else None
    if frozen and not plain_frozen:
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
