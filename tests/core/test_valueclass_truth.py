"""A record tells the truth about itself, as its standard dataclass twin does, on whatever Python runs the tests:
`__dataclass_params__`, `__match_args__`, `inspect.signature()` before the first instance, and the dataclasses
module's inheritance rules between records and plain dataclasses, both ways."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import threading
import types
from collections.abc import Callable
from dataclasses import KW_ONLY, FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from compat._valueclass import valueclass
from tests.core.test_valueclass import (
    RecAllKw,
    RecChild,
    RecDefaults,
    RecFactory,
    RecKwOnly,
    RecMutable,
    RecOptions,
    RecOwnEq,
    RecOwnHash,
    RecOwnRepr,
    RecPlain,
    RecPost,
    StdAllKw,
    StdChild,
    StdDefaults,
    StdFactory,
    StdKwOnly,
    StdMutable,
    StdOptions,
    StdOwnEq,
    StdOwnRepr,
    StdPlain,
    StdPost,
)


@dataclass(frozen=True)
class StdOwnHash:
    a: int
    b: int

    def __hash__(self) -> int:
        return 7


PAIRS: list[tuple[type, type]] = [
    (RecPlain, StdPlain),
    (RecDefaults, StdDefaults),
    (RecFactory, StdFactory),
    (RecKwOnly, StdKwOnly),
    (RecOptions, StdOptions),
    (RecChild, StdChild),
    (RecPost, StdPost),
    (RecAllKw, StdAllKw),
    (RecMutable, StdMutable),
    (RecOwnEq, StdOwnEq),
    (RecOwnRepr, StdOwnRepr),
    (RecOwnHash, StdOwnHash),
]


def _params(cls: type) -> dict[str, Any]:
    """Every attribute of a class's __dataclass_params__ (3.10: six of them; 3.12+: ten)."""
    p: Any = cls.__dataclass_params__  # type: ignore[attr-defined]
    names = [n for klass in type(p).__mro__ for n in getattr(klass, "__slots__", ())]
    return {n: getattr(p, n) for n in names}


def _plain(text: str) -> str:
    return re.sub(r"\b(?:Rec|Std)(?=[A-Z])", "", text)


@pytest.mark.parametrize(("rec", "std"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_dataclass_params_and_match_args_are_the_twins(rec: type, std: type) -> None:
    assert _params(rec) == _params(std)
    assert _params(rec)["frozen"] is (rec is not RecMutable)
    assert repr(rec.__dataclass_params__) == repr(std.__dataclass_params__)  # type: ignore[attr-defined]
    assert type(rec.__dataclass_params__).__name__ == type(std.__dataclass_params__).__name__  # type: ignore[attr-defined]
    assert rec.__match_args__ == std.__match_args__  # type: ignore[attr-defined]


def _twins() -> list[tuple[type, type]]:
    """Fresh classes, never instantiated, each with its standard twin (the shapes whose __init__ differ most)."""

    def factory() -> list[int]:
        return [1]

    def both(body: dict[str, Any], annotations: dict[str, Any], **options: Any) -> tuple[type, type]:
        frozen = options.pop("frozen", True)
        rec = valueclass(frozen=frozen, **options)(type("Rec", (), {**body, "__annotations__": annotations}))
        std: type = dataclass(frozen=frozen, **options)(
            type("Std", (), {**body, "__annotations__": annotations})
        )
        return rec, std

    return [
        both({}, {"a": int, "b": "str"}),
        both({"b": 2, "c": field(default_factory=factory)}, {"a": int, "b": int, "c": "list[int]"}),
        both({"b": field(default=0, kw_only=True)}, {"a": int, "b": int}),
        both({"_": None, "b": "x"}, {"a": int, "_": KW_ONLY, "b": str}),
        both({"b": 1}, {"a": int, "b": int}, kw_only=True),
        both({"later": field(init=False, default=5)}, {"a": int, "later": int}),
        both({}, {"self": int, "other": int}),  # a field named self: the dataclasses module renames self
        both({"b": field(default_factory=factory)}, {"a": int, "b": "list[int]"}, frozen=False),
        both({}, {}),
    ]


def _compiled(cls: type) -> bool:
    return isinstance(cls.__dict__["__init__"], types.FunctionType)


def test_the_signature_is_the_twins_before_and_after_the_first_instance() -> None:
    for rec, std in _twins():
        assert not _compiled(rec), "defining a record compiles nothing"
        assert inspect.signature(rec) == inspect.signature(std), rec.__dataclass_fields__  # type: ignore[attr-defined]
        assert str(inspect.signature(rec)) == str(inspect.signature(std))
        assert inspect.signature(rec.__init__) == inspect.signature(std.__init__)  # type: ignore[misc]
        assert _compiled(rec)  # asking compiled it: from now on it is the plain function
        assert rec.__init__.__qualname__ == "Rec.__init__"  # type: ignore[misc]
        assert inspect.signature(rec) == inspect.signature(std)
    rec, std = _twins()[1]
    assert inspect.signature(rec.__init__) == inspect.signature(std.__init__)  # type: ignore[misc]  # still lazy
    assert _compiled(rec)
    rec, std = _twins()[0]
    assert rec(1, "x") == rec(a=1, b="x") and _compiled(rec)  # the first call compiles, without a signature


def test_a_plain_subclass_reads_its_record_base_signature() -> None:
    rec, std = _twins()[1]

    class PlainRec(rec):  # type: ignore[valid-type,misc]
        pass

    class PlainStd(std):  # type: ignore[valid-type,misc]
        pass

    assert inspect.signature(PlainRec) == inspect.signature(PlainStd)
    assert PlainRec(1).c == [1] and PlainRec(1) == PlainRec(1)


# ------------------------------------------------------------------ inheritance, both ways

KINDS = ["record", "mutable record", "dataclass", "mutable dataclass"]


def _decorator(kind: str, std: bool = False) -> Callable[[type], type]:
    """The decorator for `kind`; std=True: the standard dataclass of the same frozenness (the twin)."""
    frozen = not kind.startswith("mutable")
    if kind.endswith("record") and not std:
        return valueclass(frozen=frozen)
    return dataclass(frozen=frozen)


def _define(kinds: tuple[str, ...], std: bool) -> type | BaseException:
    """Bases of kinds[:-1] (fields b0, b1...), then a class of kinds[-1] deriving from them all (field c):
    the class, or what defining it raised."""
    bases = tuple(
        _decorator(kind, std)(type(f"B{i}", (), {"__annotations__": {f"b{i}": int}, f"b{i}": i}))
        for i, kind in enumerate(kinds[:-1])
    )
    try:
        return _decorator(kinds[-1], std)(type("C", bases, {"__annotations__": {"c": int}, "c": 9}))
    except TypeError as exc:
        return exc


CASES = [
    *itertools.product(KINDS, KINDS),
    *(
        (a, b, c) for a, b in itertools.combinations(KINDS, 2) for c in KINDS
    ),  # two bases (3.13's stricter rule)
]


@pytest.mark.parametrize("kinds", CASES, ids=["<".join(reversed(c)) for c in CASES])
def test_inheritance_follows_the_dataclasses_rules_as_the_twins_do(kinds: tuple[str, ...]) -> None:
    got, want = _define(kinds, std=False), _define(kinds, std=True)
    if isinstance(want, BaseException):
        assert isinstance(got, TypeError), f"{kinds}: defined, where the dataclasses refuse: {want}"
        assert str(got) == str(want)
        return
    assert isinstance(got, type), f"{kinds}: refused ({got}), where the dataclasses define it"
    assert _params(got)["frozen"] == _params(want)["frozen"]
    assert [f.name for f in dataclasses.fields(got)] == [f.name for f in dataclasses.fields(want)]
    assert inspect.signature(got) == inspect.signature(want)
    obj, twin = got(), want()
    assert repr(obj) == repr(twin) and dataclasses.asdict(obj) == dataclasses.asdict(twin)
    assert obj == got() and obj != got(c=0) and dataclasses.replace(obj, c=0) == got(c=0)
    if _params(want)["frozen"]:
        assert hash(obj) == hash(twin)
        for thing in (obj, twin):
            with pytest.raises(FrozenInstanceError):
                thing.c = 1
    else:
        obj.c = twin.c = 1
        assert repr(obj) == repr(twin)


def test_a_dataclass_below_a_record_is_a_working_dataclass() -> None:
    """The cases the brief names: a frozen dataclass below a frozen record defines and works; a mutable one is
    refused at definition (before, it was defined and failed at its first instance)."""

    @dataclass(frozen=True)
    class Sub(RecPlain):
        c: int = 0

    s = Sub(1, "x", 2)
    assert s == Sub(1, "x", 2) and s != Sub(1, "x") and hash(s) == hash((1, "x", 2))
    assert repr(s).endswith(".Sub(a=1, b='x', c=2)") and dataclasses.astuple(s) == (1, "x", 2)
    with pytest.raises(FrozenInstanceError):
        s.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

        @dataclass
        class Loose(RecPlain):  # type: ignore[misc]
            c: int = 0

    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):

        @dataclass(frozen=True)
        class Tight(RecMutable):  # type: ignore[misc]
            c: int = 0

    @dataclass
    class Free(RecMutable):
        c: int = 0

    f = Free(1)
    f.c = 3
    assert repr(f).endswith(".Free(a=1, b=[], c=3)")


def test_a_failed_definition_leaves_the_bases_telling_the_truth() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @valueclass
        class Bad(RecPlain):
            c: list[int] = []  # noqa: RUF012 - refused by the dataclasses module, the point of the test

    assert RecPlain.__dataclass_params__.frozen is True  # type: ignore[attr-defined]


def test_other_threads_read_the_truth_while_records_are_defined() -> None:
    seen: set[bool] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(RecPlain.__dataclass_params__.frozen)  # type: ignore[attr-defined]

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(300):
            valueclass(type(f"Sub{i}", (RecPlain,), {"__annotations__": {"c": int}, "c": 0}))
    finally:
        stop.set()
        reader.join()
    assert seen == {True}
