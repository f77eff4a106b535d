"""`compat._valueclass.record` behaves like `@dataclass(frozen=True)` (and `valueclass(frozen=False)` like a mutable one).

Each record class below has a standard dataclass twin (same fields, same options), named `Rec...` and `Std...`:
the two must agree on repr (modulo the class name), ==, hash, the dataclasses module's functions, frozenness,
pickling and copying.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import re
import sys
from dataclasses import KW_ONLY, FrozenInstanceError, dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat._valueclass import valueclass

# ------------------------------------------------------------------ the class shapes, each with its twin


@valueclass
class RecPlain:
    a: int
    b: str


@dataclass(frozen=True)
class StdPlain:
    a: int
    b: str


@valueclass
class RecDefaults:
    a: int
    b: int = 2
    c: tuple[int, ...] = ()


@dataclass(frozen=True)
class StdDefaults:
    a: int
    b: int = 2
    c: tuple[int, ...] = ()


def _pair() -> tuple[int, int]:
    return (1, 2)


@valueclass
class RecFactory:
    a: int
    pair: tuple[int, int] = field(default_factory=_pair)
    items: list[int] = field(default_factory=list, compare=False, hash=False)


@dataclass(frozen=True)
class StdFactory:
    a: int
    pair: tuple[int, int] = field(default_factory=_pair)
    items: list[int] = field(default_factory=list, compare=False, hash=False)


@valueclass
class RecKwOnly:
    a: int
    b: int = 0
    c: int = field(kw_only=True)
    _: KW_ONLY
    d: str = "d"


@dataclass(frozen=True)
class StdKwOnly:
    a: int
    b: int = 0
    c: int = field(kw_only=True)
    _: KW_ONLY
    d: str = "d"


@valueclass
class RecOptions:
    a: int
    note: str = field(default="", compare=False)  # neither compared nor hashed
    unhashed: int = field(default=0, hash=False)  # compared, not hashed
    hashed_only: int = field(default=0, compare=False, hash=True)  # hashed, not compared
    secret: str = field(default="s", repr=False, metadata={"why": "hidden"})


@dataclass(frozen=True)
class StdOptions:
    a: int
    note: str = field(default="", compare=False)
    unhashed: int = field(default=0, hash=False)
    hashed_only: int = field(default=0, compare=False, hash=True)
    secret: str = field(default="s", repr=False, metadata={"why": "hidden"})


@valueclass
class RecBase:
    a: int
    b: str = "b"


@valueclass
class RecChild(RecBase):
    c: float = 0.5


@dataclass(frozen=True)
class StdBase:
    a: int
    b: str = "b"


@dataclass(frozen=True)
class StdChild(StdBase):
    c: float = 0.5


@valueclass
class RecPost:
    a: int
    b: int
    total: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.a + self.b)


@dataclass(frozen=True)
class StdPost:
    a: int
    b: int
    total: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", self.a + self.b)


@valueclass
class RecInner:
    x: int
    tags: tuple[str, ...] = ()


@valueclass
class RecOuter:
    inner: RecInner
    others: tuple[RecInner, ...] = ()


@dataclass(frozen=True)
class StdInner:
    x: int
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class StdOuter:
    inner: StdInner
    others: tuple[StdInner, ...] = ()


@valueclass
class RecOwnEq:
    a: int
    b: int

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecOwnEq) and self.a == other.a


@dataclass(frozen=True)
class StdOwnEq:
    a: int
    b: int

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StdOwnEq) and self.a == other.a


@valueclass
class RecOwnRepr:
    a: int

    def __repr__(self) -> str:
        return f"<own {self.a}>"


@dataclass(frozen=True)
class StdOwnRepr:
    a: int

    def __repr__(self) -> str:
        return f"<own {self.a}>"


@valueclass
class RecOwnHash:
    a: int
    b: int

    def __hash__(self) -> int:
        return 7


@valueclass
class RecHolder:
    items: list[Any]


@dataclass(frozen=True)
class StdHolder:
    items: list[Any]


@valueclass(frozen=False)
class RecMutable:
    a: int
    b: list[int] = field(default_factory=list)


@dataclass
class StdMutable:
    a: int
    b: list[int] = field(default_factory=list)


@valueclass(frozen=False)
class RecMutableNode:
    name: str
    children: list[Any] = field(default_factory=list)


@dataclass
class StdMutableNode:
    name: str
    children: list[Any] = field(default_factory=list)


@valueclass(kw_only=True)
class RecAllKw:
    a: int
    b: int = 1


@dataclass(frozen=True, kw_only=True)
class StdAllKw:
    a: int
    b: int = 1


@valueclass
class RecOther:  # same fields as RecPlain
    a: int
    b: str


@valueclass
class RecNaN:
    x: float
    y: int = 0


# ------------------------------------------------------------------ helpers


def _plain(text: str) -> str:
    """A repr without the Rec/Std prefix of the class names it shows."""
    return re.sub(r"\b(?:Rec|Std)(?=[A-Z])", "", text)


def _field_specs(cls: type) -> list[tuple[Any, ...]]:
    return [
        (
            f.name,
            f.type,
            f.default,
            f.default_factory is dataclasses.MISSING,
            f.init,
            f.repr,
            f.compare,
            f.hash,
            f.kw_only,
            dict(f.metadata),
        )
        for f in dataclasses.fields(cls)
    ]


Call = tuple[tuple[Any, ...], dict[str, Any]]


def _agree(rec: type, std: type, calls: list[Call]) -> None:
    """The record and its twin, built from the same arguments, agree on everything a caller can see."""
    assert dataclasses.is_dataclass(rec) and dataclasses.is_dataclass(std)
    assert _field_specs(rec) == _field_specs(std)
    rs = [rec(*args, **kw) for args, kw in calls]
    ss = [std(*args, **kw) for args, kw in calls]
    for r, s in zip(rs, ss, strict=False):
        assert dataclasses.is_dataclass(r)
        assert _plain(repr(r)) == _plain(repr(s))
        assert dataclasses.asdict(r) == dataclasses.asdict(s)
        assert dataclasses.astuple(r) == dataclasses.astuple(s)
        assert hash(r) == hash(s)
        # The std dataclass hashes the tuple of its hashed fields.
        hashed = [f.name for f in dataclasses.fields(std) if (f.compare if f.hash is None else f.hash)]
        assert hash(r) == hash(tuple(getattr(s, n) for n in hashed))
    for i, (ri, si) in enumerate(zip(rs, ss, strict=False)):
        for j, (rj, sj) in enumerate(zip(rs, ss, strict=False)):
            assert (ri == rj) is (si == sj), (i, j)
            assert (ri != rj) is (si != sj), (i, j)
            if ri == rj:
                assert hash(ri) == hash(rj)
    assert any(a == b for a in rs for b in rs if a is not b), "the calls hold no two equal instances"
    assert any(a != b for a in rs for b in rs), "the calls hold no two different instances"


def _frozen_like(r: Any, s: Any) -> None:
    for obj in (r, s):
        name = dataclasses.fields(obj)[0].name
        before = getattr(obj, name)
        with pytest.raises(FrozenInstanceError):
            setattr(obj, name, before)
        with pytest.raises(FrozenInstanceError):
            delattr(obj, name)
        with pytest.raises(FrozenInstanceError):
            obj.brand_new = 1  # a name that is not a field
        with pytest.raises(FrozenInstanceError):
            delattr(obj, "brand_new")
        assert getattr(obj, name) == before
        assert "brand_new" not in obj.__dict__


SHAPES: list[tuple[type, type, list[Call]]] = [
    (RecPlain, StdPlain, [((1, "x"), {}), ((1, "x"), {}), ((2, "x"), {}), ((1, "y"), {})]),
    (
        RecDefaults,
        StdDefaults,
        [((1,), {}), ((1, 2), {}), ((1, 2, ()), {}), ((1, 3), {}), ((1,), {"c": (4,)})],
    ),
    (RecFactory, StdFactory, [((1,), {}), ((1, (1, 2)), {}), ((1, (2, 2)), {}), ((1, (1, 2), [9]), {})]),
    (
        RecKwOnly,
        StdKwOnly,
        [((1,), {"c": 3}), ((1, 0), {"c": 3, "d": "d"}), ((1, 2), {"c": 3}), ((1,), {"c": 3, "d": "e"})],
    ),
    (
        RecOptions,
        StdOptions,
        [
            ((1,), {}),
            ((1, "note"), {}),  # equal (note is not compared), same hash
            ((1,), {"unhashed": 5}),  # different, same hash
            ((1,), {"hashed_only": 5}),  # equal, different hash in both (as the std dataclass does)
            ((1,), {"secret": "other"}),  # equal
            ((2,), {}),
        ],
    ),
    (RecChild, StdChild, [((1,), {}), ((1, "b", 0.5), {}), ((1, "b", 1.5), {}), ((1, "z"), {})]),
    (RecPost, StdPost, [((1, 2), {}), ((1, 2), {}), ((2, 1), {}), ((0, 3), {})]),
    (RecAllKw, StdAllKw, [((), {"a": 1}), ((), {"a": 1, "b": 1}), ((), {"a": 1, "b": 2})]),
]


@pytest.mark.parametrize(("rec", "std", "calls"), SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_a_record_agrees_with_its_frozen_dataclass_twin(rec: type, std: type, calls: list[Call]) -> None:
    if rec is RecOptions:
        # hashed_only takes part in the hash, not in ==: equal instances may hash differently, as in the std
        # dataclass; the helper's hash check is only for classes whose hashed fields are compared.
        r1, r2 = RecOptions(1), RecOptions(1, hashed_only=5)
        s1, s2 = StdOptions(1), StdOptions(1, hashed_only=5)
        assert r1 == r2 and s1 == s2
        assert (hash(r1) == hash(r2)) is (hash(s1) == hash(s2)) is False
        calls = [c for c in calls if "hashed_only" not in c[1]]
    _agree(rec, std, calls)
    args, kw = calls[0]
    _frozen_like(rec(*args, **kw), std(*args, **kw))


@pytest.mark.parametrize(("rec", "std", "calls"), SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_replace_pickle_and_copies_round_trip(rec: type, std: type, calls: list[Call]) -> None:
    for args, kw in calls:
        r, s = rec(*args, **kw), std(*args, **kw)
        for back in (pickle.loads(pickle.dumps(r)), copy.copy(r), copy.deepcopy(r)):
            assert type(back) is rec and back == r and hash(back) == hash(r)
            assert back.__dict__ == r.__dict__
            assert _plain(repr(back)) == _plain(repr(s))
            _frozen_like(back, s)
        name = next(f.name for f in dataclasses.fields(rec) if f.init)
        value = getattr(r, name)
        assert dataclasses.replace(r, **{name: value}) == r
        replaced = dataclasses.replace(r, **{name: value + 1})  # every first init field here is an int
        std_replaced = dataclasses.replace(s, **{name: value + 1})
        assert _plain(repr(replaced)) == _plain(repr(std_replaced))
        assert (replaced == r) is (std_replaced == s)


def test_default_factory_gives_each_instance_its_own_value() -> None:
    a, b = RecFactory(1), RecFactory(1)
    assert a.items == [] and a.items is not b.items
    a.items.append(3)  # the list is mutable, the record is not
    assert b.items == [] and a == b  # items is not compared


def test_an_unhashable_field_makes_hash_fail_as_in_the_dataclass() -> None:
    with pytest.raises(TypeError):
        hash(RecHolder([1]))
    with pytest.raises(TypeError):
        hash(StdHolder([1]))
    assert RecHolder([1]) == RecHolder([1]) and RecHolder([1]) != RecHolder([2])


def test_kw_only_fields_refuse_positional_arguments() -> None:
    with pytest.raises(TypeError):
        RecKwOnly(1, 2, 3)  # type: ignore[misc]
    with pytest.raises(TypeError):
        RecAllKw(1)  # type: ignore[misc]
    assert RecKwOnly(1, c=3) == RecKwOnly(a=1, b=0, c=3, d="d")


def test_post_init_sets_a_field_once_then_it_is_frozen() -> None:
    r = RecPost(2, 3)
    assert r.total == 5 and repr(r) == "RecPost(a=2, b=3, total=5)"
    with pytest.raises(FrozenInstanceError):
        r.total = 6  # type: ignore[misc]
    with pytest.raises(TypeError):
        RecPost(1, 2, 3)  # type: ignore[call-arg]


def test_a_record_inherits_its_base_fields_and_compares_only_with_its_own_class() -> None:
    assert [f.name for f in dataclasses.fields(RecChild)] == ["a", "b", "c"]
    base, child = RecBase(1, "b"), RecChild(1, "b")
    assert base != child and child != base  # different classes, as in the std dataclass
    assert (StdBase(1, "b") == StdChild(1, "b")) is False
    assert repr(child) == "RecChild(a=1, b='b', c=0.5)"


def test_different_record_classes_with_equal_fields_are_not_equal() -> None:
    a: object = RecPlain(1, "x")
    b: object = RecOther(1, "x")
    assert a != b and b != a
    assert (a == b) is False
    assert a.__eq__(b) is NotImplemented
    assert a.__eq__((1, "x")) is NotImplemented
    assert a != (1, "x")
    assert len({a, b}) == 2


def test_nested_records_compare_hash_and_show_like_nested_dataclasses() -> None:
    r = RecOuter(RecInner(1, ("t",)), (RecInner(2), RecInner(3, ("u", "v"))))
    s = StdOuter(StdInner(1, ("t",)), (StdInner(2), StdInner(3, ("u", "v"))))
    assert _plain(repr(r)) == _plain(repr(s))
    assert hash(r) == hash(s)
    assert dataclasses.asdict(r) == dataclasses.asdict(s)
    assert dataclasses.asdict(r)["others"][1] == {"x": 3, "tags": ("u", "v")}
    same = RecOuter(RecInner(1, ("t",)), (RecInner(2), RecInner(3, ("u", "v"))))
    assert r == same and hash(r) == hash(same)
    assert r != RecOuter(RecInner(1, ("t",)), (RecInner(2), RecInner(3, ("u",))))
    assert copy.deepcopy(r) == r and pickle.loads(pickle.dumps(r)) == r
    assert copy.deepcopy(r).inner is not r.inner


def test_nan_fields_compare_as_the_dataclass_does() -> None:
    """Python < 3.13 compares field tuples (the same NaN object is equal to itself there, by identity); 3.13's
    dataclasses compare field by field (a NaN is unequal to itself), after `self is other`."""

    @dataclass(frozen=True)
    class StdNaN:
        x: float
        y: int = 0

    nan = float("nan")
    a, b = RecNaN(nan), RecNaN(nan)
    assert (a == b) is (StdNaN(nan) == StdNaN(nan)) is (sys.version_info < (3, 13))
    assert (a != b) is (StdNaN(nan) != StdNaN(nan))
    assert a == a and StdNaN(nan) != StdNaN(float("nan")) and RecNaN(nan) != RecNaN(float("nan"))
    assert hash(a) == hash(b) == hash(StdNaN(nan))
    assert a != RecNaN(nan, 1)
    assert repr(a) == "RecNaN(x=nan, y=0)"
    assert math.isnan(pickle.loads(pickle.dumps(a)).x)


def test_a_recursive_repr_does_not_loop() -> None:
    r, s = RecHolder([]), StdHolder([])
    r.items.append(r)
    s.items.append(s)
    assert repr(r) == "RecHolder(items=[...])"
    assert _plain(repr(r)) == _plain(repr(s))
    n, m = RecMutableNode("root"), StdMutableNode("root")
    n.children.append(RecMutableNode("leaf", [n]))
    m.children.append(StdMutableNode("leaf", [m]))
    assert (
        _plain(repr(n))
        == _plain(repr(m))
        == "MutableNode(name='root', children=[MutableNode(name='leaf', children=[...])])"
    )
    # The guard is per object: a second, different instance in the same repr is still shown.
    two = RecHolder([RecHolder([1]), RecHolder([1])])
    assert repr(two) == "RecHolder(items=[RecHolder(items=[1]), RecHolder(items=[1])])"


def test_a_class_keeps_its_own_eq_and_repr() -> None:
    assert RecOwnEq.__eq__ is RecOwnEq.__dict__["__eq__"]
    r1, r2, r3 = RecOwnEq(1, 2), RecOwnEq(1, 3), RecOwnEq(2, 2)
    s1, s2, s3 = StdOwnEq(1, 2), StdOwnEq(1, 3), StdOwnEq(2, 2)
    assert (r1 == r2, r1 == r3) == (s1 == s2, s1 == s3) == (True, False)
    # An own __eq__ without __hash__: hashed by the fields all the same (the dataclass module does so too).
    assert hash(r1) == hash(s1) == hash((1, 2))
    assert _plain(repr(r1)) == _plain(repr(s1)) == "OwnEq(a=1, b=2)"
    assert repr(RecOwnRepr(4)) == repr(StdOwnRepr(4)) == "<own 4>"
    assert RecOwnRepr(4) == RecOwnRepr(4) and hash(RecOwnRepr(4)) == hash(StdOwnRepr(4))
    assert hash(RecOwnHash(1, 2)) == 7 and RecOwnHash(1, 2) != RecOwnHash(1, 3)


def test_a_mutable_record_is_mutable_and_unhashable() -> None:
    r, s = RecMutable(1), StdMutable(1)
    assert RecMutable.__hash__ is None and StdMutable.__hash__ is None
    with pytest.raises(TypeError):
        hash(r)
    r.a = 2
    s.a = 2
    r.extra = "x"  # type: ignore[attr-defined]
    del r.extra  # type: ignore[attr-defined]
    r.b.append(1)
    s.b.append(1)
    assert _plain(repr(r)) == _plain(repr(s)) == "Mutable(a=2, b=[1])"
    assert r == RecMutable(2, [1]) and r != RecMutable(2, [])
    assert r != s  # different classes
    back = pickle.loads(pickle.dumps(r))
    assert back == r and copy.deepcopy(r) == r and copy.deepcopy(r).b is not r.b
    assert dataclasses.replace(r, a=5) == RecMutable(5, [1])


def test_defining_setattr_or_delattr_on_a_frozen_record_fails_at_class_creation() -> None:
    with pytest.raises(TypeError, match="__setattr__"):

        @valueclass
        class BadSet:
            a: int

            def __setattr__(self, name: str, value: Any) -> None:
                object.__setattr__(self, name, value)

    with pytest.raises(TypeError, match="__delattr__"):

        @valueclass
        class BadDel:
            a: int

            def __delattr__(self, name: str) -> None:
                object.__delattr__(self, name)

    @valueclass(frozen=False)
    class Fine:  # a mutable record may define them
        a: int

        def __setattr__(self, name: str, value: Any) -> None:
            object.__setattr__(self, name, value * 2)

    assert Fine(2).a == 4


def test_a_record_may_inherit_from_a_frozen_dataclass() -> None:
    """As a frozen dataclass may (tests/core/test_valueclass_truth.py has every pairing)."""

    @valueclass
    class Sub(StdBase):
        c: int = 0

    s = Sub(1)
    assert repr(s).endswith(".Sub(a=1, b='b', c=0)") and s == Sub(1, "b", 0) and hash(s) == hash((1, "b", 0))
    with pytest.raises(FrozenInstanceError):
        s.a = 2  # type: ignore[misc]


# ------------------------------------------------------------------ property test

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.tuples(st.integers(-3, 3), st.text(max_size=2)),
    st.frozensets(st.integers(-3, 3), max_size=3),
)
SMALL = st.one_of(st.integers(-2, 2), st.sampled_from(["", "a", "b"]), st.none(), st.booleans())


@valueclass
class RecProp:
    a: Any
    b: Any = None
    c: Any = field(default=None, compare=False)
    d: Any = field(default=None, hash=False)
    e: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class StdProp:
    a: Any
    b: Any = None
    c: Any = field(default=None, compare=False)
    d: Any = field(default=None, hash=False)
    e: Any = field(default=None, repr=False)


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(VALUES, SMALL, SMALL, SMALL, SMALL),
    st.tuples(SMALL, SMALL, SMALL, SMALL, SMALL),
)
def test_record_and_dataclass_agree_on_random_values(
    x: tuple[Any, Any, Any, Any, Any], y: tuple[Any, Any, Any, Any, Any]
) -> None:
    rx, ry, sx, sy = RecProp(*x), RecProp(*y), StdProp(*x), StdProp(*y)
    assert (rx == ry) is (sx == sy)
    assert (rx != ry) is (sx != sy)
    assert (rx == rx) is (sx == sx) is True
    assert hash(rx) == hash(sx) and hash(ry) == hash(sy)
    if rx == ry:
        assert hash(rx) == hash(ry)
    assert _plain(repr(rx)) == _plain(repr(sx))
    assert _plain(repr(ry)) == _plain(repr(sy))
    assert dataclasses.asdict(rx) == dataclasses.asdict(sx)
    assert pickle.loads(pickle.dumps(rx)) == rx


def test_a_field_init_leaves_unset_cannot_be_assigned_later() -> None:
    """field(init=False) without a default (and a __post_init__ that does not set it): after __init__ it stays
    unassignable, as in a frozen dataclass (the set-once rule alone would let it be set once)."""

    @valueclass
    class Lazy:
        a: int
        later: int = field(init=False)

    x = Lazy(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.later = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        _ = x.later


def test_compat_defines_its_value_classes_as_records() -> None:
    """The start-up budget depends on it: a plain @dataclass costs ~0.4 ms to define on Python < 3.13 (six
    compiled methods), a record almost nothing until it is instantiated."""
    from tests.conftest import ROOT

    plain = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "compat").rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*@(dataclasses\.)?dataclass\b", line)
    ]
    assert not plain, f"use compat._valueclass.record instead of @dataclass: {plain}"


def test_frozen_records_follow_the_dataclasses_inheritance_rules() -> None:
    """As the dataclasses module: a plain subclass of a frozen record may set its own attributes (not the fields);
    a mutable record cannot derive from a frozen one, nor a frozen one from a mutable one."""

    @valueclass
    class Base:
        x: int

    class Plain(Base):
        pass

    p = Plain(1)
    p.extra = 5  # type: ignore[attr-defined]
    assert p.extra == 5  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        Base(1).extra = 5  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="non-frozen dataclass from a frozen one"):

        @valueclass(frozen=False)
        class Mutable(Base):  # type: ignore[misc]  # mypy refuses it too
            y: int = 0

    @valueclass(frozen=False)
    class Loose:
        x: int

    with pytest.raises(TypeError, match="frozen dataclass from a non-frozen one"):

        @valueclass
        class Tight(Loose):  # type: ignore[misc]  # mypy refuses it too
            y: int = 0
