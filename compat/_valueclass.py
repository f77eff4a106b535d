"""`valueclass`: a dataclass that costs less to define, for compat's value classes (start-up time, issue 12).

On Python < 3.13, `@dataclass(frozen=True)` compiles six methods per class, each with its own `exec`: about
0.4 ms a class, and the doctor defines ~90 of them before it can answer (~35 ms of a ~200 ms run). A `valueclass`
compiles at most one, the `__init__`, and only when it is first needed. `__eq__`, `__hash__` and `__repr__` are
shared functions that read the class's fields (getters built once per class); `__setattr__` and `__delattr__` are
closures over the field names. What stays the same: `dataclasses.fields()`, `replace()`, `asdict()`,
`is_dataclass()`, `field(...)` options (default, default_factory, kw_only, compare, hash, repr, metadata),
`__dataclass_params__` and `__match_args__` (those of the dataclass it stands for: init, repr and eq True, frozen
as declared), `inspect.signature()` of the class, equality and hashing by the compared fields of the same class,
FrozenInstanceError on any assignment or deletion after `__init__`, `__post_init__`, pickling and copying, and the
dataclasses module's inheritance rules both ways (a frozen class derives only from frozen ones, a mutable one only
from mutable ones, value classes and plain dataclasses alike).

What differs: `__init__` (the same code the dataclasses module generates, assigning with object.__setattr__ when
frozen) is compiled on the class's first instantiation, or when its signature is asked for, so a class a run never
instantiates costs nothing to compile. A class without a docstring gets its qualified name as one (the dataclasses
module would build it from the signature). ClassVar and InitVar fields are refused. mypy sees a frozen dataclass
(PEP 681).

`valueclass(frozen=False)` is a mutable dataclass with the shared `__eq__` and `__repr__` (and `__hash__ = None`).
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
import sys
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

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
    return key(self) == key(other)  # as the generated tuple comparison (Python < 3.13)


def _eq_fieldwise(self: Any, other: Any) -> Any:
    """Python >= 3.13's generated __eq__: `self is other`, else field by field (`a == a` is False for NaN)."""
    if self is other:
        return True
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = _keys(self.__class__)[0]
    result: Any = True
    for a, b in zip(key(self), key(other), strict=False):
        result = a == b
        if not result:
            return result
    return result


if sys.version_info >= (3, 13):
    _eq = _eq_fieldwise  # noqa: F811


def _hash(self: Any) -> int:
    return hash(_keys(self.__class__)[1](self))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _keys(self.__class__)[2])
    return f"{self.__class__.__qualname__}({shown})"


def _frozen_methods(cls: type[Any]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The dataclasses module's frozen __setattr__/__delattr__ for `cls`, as closures (nothing compiled): a field,
    or any attribute of an instance of exactly `cls`, is refused; a plain subclass may set its own attributes."""
    names = frozenset(f.name for f in dataclasses.fields(cls))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


class _Factory:
    """The default of a parameter whose field has a default_factory (the dataclasses module's own trick)."""

    def __repr__(self) -> str:
        return "<factory>"


# The dataclasses module's own sentinel where it has one, so that signatures compare equal to a dataclass's.
_FACTORY: Any = getattr(dataclasses, "_HAS_DEFAULT_FACTORY", None) or _Factory()


def _check_order(cls: type) -> None:
    """What the dataclasses module checks when it compiles __init__: no positional field without a default after
    one with a default (checked at class creation here: __init__ itself is compiled on first use)."""
    seen_default = None
    for f in dataclasses.fields(cls):
        if not f.init or f.kw_only:
            continue
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if has_default:
            seen_default = f.name
        elif seen_default is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument {seen_default!r}")


def _init_fn(cls: type, frozen: bool) -> Callable[..., None]:
    """The __init__ the dataclasses module would generate for `cls` (frozen: fields set with object.__setattr__)."""
    fs = dataclasses.fields(cls)
    me = "__dataclass_self__" if any(f.name == "self" for f in fs) else "self"
    ns: dict[str, Any] = {"__record_set__": object.__setattr__, "__record_factory__": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    annotations: dict[str, Any] = {}
    for f in fs:
        dflt, fact = f"__record_default_{f.name}__", f"__record_factory_{f.name}__"
        if f.default is not dataclasses.MISSING:
            ns[dflt] = f.default
        if f.default_factory is not dataclasses.MISSING:
            ns[fact] = f.default_factory
        if f.init:
            if f.default is not dataclasses.MISSING:
                param, value = f"{f.name}={dflt}", f.name
            elif f.default_factory is not dataclasses.MISSING:
                param, value = (
                    f"{f.name}=__record_factory__",
                    f"{fact}() if {f.name} is __record_factory__ else {f.name}",
                )
            else:
                param, value = f.name, f.name
            (keyword if f.kw_only else positional).append(param)
            annotations[f.name] = f.type
        elif f.default is not dataclasses.MISSING:
            value = dflt
        elif f.default_factory is not dataclasses.MISSING:
            value = f"{fact}()"
        else:
            continue  # left unset, as the dataclasses module leaves it (__post_init__ may set it)
        body.append(f"__record_set__({me}, {f.name!r}, {value})" if frozen else f"{me}.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    params = ", ".join([me, *positional, *(["*", *keyword] if keyword else [])])
    src = f"def __init__({params}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    exec(src, ns)  # noqa: S102 - source built above from the class's own field names
    fn: Callable[..., None] = ns["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    fn.__module__ = cls.__module__
    fn.__annotations__ = {**annotations, "return": None}  # the generated one's, which inspect.signature shows
    return fn


class _LazyInit:
    """A value class's `__init__` until it is needed: on the first call (the class's first instantiation), or when
    `inspect.signature()` reads it, it compiles the real one (_init_fn) and puts it in its place, so a class that is
    defined but never instantiated in a run costs no compilation."""

    def __init__(self, cls: type, frozen: bool) -> None:
        self.cls = cls
        self.frozen = frozen
        self.__name__ = "__init__"
        self.__qualname__ = f"{cls.__qualname__}.__init__"

    def compiled(self) -> Callable[..., None]:
        """The class's real __init__, compiled now if it was not yet."""
        real: Callable[..., None] = self.cls.__dict__["__init__"]
        if real is self:
            real = _init_fn(self.cls, self.frozen)
            type.__setattr__(self.cls, "__init__", real)
        return real

    def __call__(self, obj: Any, /, *args: Any, **kwargs: Any) -> None:
        self.compiled()(obj, *args, **kwargs)

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    @property
    def __signature__(self) -> Any:
        import inspect  # only asked for by tools (help(), IDEs): never on compat's own paths

        return inspect.signature(self.compiled())


_DEFINING = threading.local()
"""`on` while this thread has the dataclasses module define a value class (see _adopt_params)."""
_PARAMS_TYPES: dict[type, type] = {}
"""The dataclasses module's params type -> its subclass for value classes (_adopt_params)."""


def _adopt_params(params: Any, frozen: bool) -> None:
    """Make the `__dataclass_params__` the dataclasses module gave a value class those of the dataclass it stands for:
    init, repr and eq True, frozen as declared (its type becomes a subclass of its own type with a `frozen` property).

    A value class is defined with the dataclasses module told frozen=False (a frozen dataclass costs two more compiled
    methods); so that the module does not refuse a frozen value class's frozen bases, they read frozen=False to it, in the
    thread defining a value class and only during that call, and _check_bases applies the rule instead."""
    std = type(params)
    sub = _PARAMS_TYPES.get(std)
    if sub is None:
        slot = std.__dict__["frozen"]  # the slot holding the value

        def get(self: Any) -> bool:
            return bool(slot.__get__(self, std)) and not getattr(_DEFINING, "on", False)

        sub = type(std.__name__, (std,), {"__slots__": (), "frozen": property(get, slot.__set__)})
        sub.__module__ = std.__module__
        with _LOCK:
            _PARAMS_TYPES[std] = sub
    params.__class__ = sub
    params.init = params.repr = params.eq = True
    params.frozen = frozen


def _check_bases(cls: type, frozen: bool) -> bool:
    """The dataclasses module's inheritance rule, read from the bases' true `__dataclass_params__`: no mutable class
    derives from a frozen dataclass; a frozen one derives only from frozen ones (Python 3.13: from no mutable one).
    True when a base is a frozen plain dataclass (its params cannot be told to read frozen=False)."""
    # Read as the dataclasses module reads them: a plain class in between inherits its base's.
    bases = cls.__mro__[-1:0:-1]
    params: list[Any] = [
        getattr(b, "__dataclass_params__", None) for b in bases if hasattr(b, "__dataclass_fields__")
    ]
    flags = [bool(p.frozen) for p in params]
    if any(flags) and not frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")
    if flags and frozen and not (all(flags) if sys.version_info >= (3, 13) else any(flags)):
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    return any(p.frozen and type(p) not in _PARAMS_TYPES.values() for p in params)


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
    # Below a frozen plain dataclass the dataclasses module must be told frozen=True (it then compiles a
    # __setattr__ and a __delattr__, replaced below); compat has no such class.
    std_frozen_base = _check_bases(cls, frozen)
    was, _DEFINING.on = getattr(_DEFINING, "on", False), not std_frozen_base
    try:
        out: Any = dataclasses.dataclass(
            cls, init=False, repr=False, eq=False, frozen=std_frozen_base, kw_only=kw_only
        )
    finally:
        _DEFINING.on = was
    _adopt_params(out.__dataclass_params__, frozen)
    if len(out.__dataclass_fields__) != len(dataclasses.fields(out)):  # ClassVar or InitVar pseudo-fields
        raise TypeError(
            f"{cls.__qualname__}: a value class has no ClassVar or InitVar fields; use a dataclass"
        )
    if "__init__" not in own:
        _check_order(out)
        out.__init__ = _LazyInit(out, frozen)
    if "__eq__" not in own:
        out.__eq__ = _eq
    if "__repr__" not in own:
        out.__repr__ = _repr
    if not explicit_hash:
        out.__hash__ = _hash if frozen else None
    if frozen:
        out.__setattr__, out.__delattr__ = _frozen_methods(out)
    return out  # type: ignore[no-any-return]


@overload
def valueclass(cls: T, /) -> T: ...
@overload
def valueclass(*, frozen: bool = True, kw_only: bool = False) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def valueclass(cls: Any = None, /, *, frozen: bool = True, kw_only: bool = False) -> Any:
    """A frozen dataclass (`frozen=False`: a mutable one) that is cheap to define; see the module docstring."""
    if cls is None:
        return lambda c: _make(c, frozen, kw_only)
    return _make(cls, frozen, kw_only)


__all__ = ["valueclass"]
