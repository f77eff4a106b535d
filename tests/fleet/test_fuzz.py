"""Fuzzing `compat fleet merge`: real doctor reports with one field of the wrong type (every field in turn),
random JSON, nesting too deep, numbers too long for int(), lone surrogates. Every input keeps the CLI
contract (tests/fuzzing.py); a report compat can read is merged, not refused."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fleet.helpers import DATA
from tests.fuzzing import FUZZ, WRONG, check, json_paths, load, mutate, write_json

SOURCES = ("real/dev-vm.json", "cluster-a/gpu-a02.json", "cluster-a/gpu-a07.json")
"""A real report (no GPU, an OOM kill in the kernel log), one with an Xid GPU, one with a crashed smoke run."""


@cache
def _doc(name: str) -> Any:
    return load(DATA / name)


@cache
def _paths(name: str) -> tuple[tuple[Any, ...], ...]:
    return tuple(json_paths(_doc(name)))


def _merge(run, tmp_path: Path, *docs: Any, text: bool = False):  # type: ignore[no-untyped-def]
    files = [str(write_json(tmp_path / f"node{i}.json", d)) for i, d in enumerate(docs)]
    args = ("fleet", "merge", *files) if text else ("fleet", "merge", "--json", *files)
    res = check(run, *args, what=f"fleet merge {json.dumps(docs[0])[:100]}")
    if res.code in (0, 1) and not text:
        assert json.loads(res.out)["schema_version"] == 1
    return res


@pytest.mark.parametrize("name", [SOURCES[0], SOURCES[2]])
def test_every_field_with_a_wrong_value(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """Each path of the report gets one of the wrong values in turn, merged beside the report as it was."""
    doc = _doc(name)
    for i, path in enumerate(_paths(name)):
        bad = mutate(doc, path, WRONG[i % len(WRONG)])
        _merge(run, tmp_path, bad, doc, text=i % 2 == 1)


@FUZZ
@given(data=st.data())
def test_random_wrong_values(run, tmp_path: Path, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    name = data.draw(st.sampled_from(SOURCES))
    doc = _doc(name)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(name)))
        value = data.draw(st.one_of(st.sampled_from(WRONG), _json_values()))
        doc = mutate(doc, path, value)
    _merge(run, tmp_path, doc, _doc(SOURCES[1]), text=data.draw(st.booleans()))


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
        max_leaves=12,
    )


@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes(run, tmp_path: Path, data: bytes) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "r.json"
    p.write_bytes(data)
    check(run, "fleet", "merge", str(p))


@FUZZ
@given(value=_json_values())
def test_random_json_documents(run, tmp_path: Path, value: Any) -> None:  # type: ignore[no-untyped-def]
    _merge(run, tmp_path, value)


# ------------------------------------------------------------------ regressions


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 100_000 + "]" * 100_000, id="nested-100000"),
        pytest.param('{"a":' * 100_000 + "1" + "}" * 100_000, id="objects-100000"),
        pytest.param("[" * 100_000, id="unterminated"),
        pytest.param("1" * 5000, id="5000-digit-number"),
    ],
)
def test_unreadable_json_is_one_line(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    # RecursionError and int()'s 4300-digit limit were internal errors (exit 3).
    p = tmp_path / "r.json"
    p.write_text(text, encoding="utf-8")
    res = check(run, "fleet", "merge", str(p))
    assert res.code == 2 and str(p) in res.err


def test_report_nested_too_deep_is_refused(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # It parsed, then the JSON output (or any walk of it) recursed past Python's limit: exit 3.
    doc = dict(_doc(SOURCES[1]))
    doc["findings"] = [dict(doc["findings"][0], facts={"x": "DEEP"})]
    (tmp_path / "deep.json").write_text(
        json.dumps(doc).replace('"DEEP"', "[" * 975 + "]" * 975), encoding="utf-8"
    )
    for args in (("--json",), ()):
        res = check(run, "fleet", "merge", *args, str(tmp_path / "deep.json"))
        assert res.code == 2 and "nested more than" in res.err
    big = json.dumps(_doc(SOURCES[1])).replace('"schema_version": 1', '"schema_version": ' + "1" * 5000, 1)
    (tmp_path / "big.json").write_text(big, encoding="utf-8")
    assert check(run, "fleet", "merge", str(tmp_path / "big.json")).code == 2


def test_lone_surrogates_are_printed_escaped(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # "\ud800" is valid JSON but not Unicode: writing the host name to stdout raised UnicodeEncodeError (exit 3).
    doc = dict(_doc(SOURCES[1]), host="node-\ud800")
    res = _merge(run, tmp_path, doc)
    assert json.loads(res.out)["nodes"][0]["name"] == "node-\ud800"
    res = _merge(run, tmp_path, doc, text=True)
    assert "node-\\ud800" in res.out


def test_nan_and_infinity_are_read(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = json.dumps(_doc(SOURCES[0])).replace(
        '"facts": {', '"facts": {"zz": {"raw": NaN, "value": Infinity}, ', 1
    )
    (tmp_path / "nan.json").write_text(text, encoding="utf-8")
    assert check(run, "fleet", "merge", str(tmp_path / "nan.json")).code in (0, 1)
