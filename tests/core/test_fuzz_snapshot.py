"""Fuzzing `compat check --snapshot FILE` (compat.facts.load_snapshot) and `compat explain --snapshot`: real
snapshots and doctor reports with one field of the wrong type (every field in turn), random bytes and JSON,
nesting too deep, numbers too long for int(). Every input keeps the CLI contract (tests/fuzzing.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat.errors import InputError
from compat.facts import load_snapshot
from tests.conftest import ROOT
from tests.fuzzing import FUZZ, WRONG, check, json_paths, load, mutate, write_json

SOURCES = (
    "examples/snapshot-a100-cu121-driver470.json",
    "tests/data/explain/snapshot_old_driver.json",
    "tests/data/explain/snapshot_no_gpu.json",
    "tests/data/fleet/real/dev-vm.json",
    "tests/data/fleet/cluster-a/gpu-a02.json",
)
"""Snapshots, and doctor reports (a snapshot too: facts and probes), whose probes feed the doctor's checks."""


@cache
def _doc(name: str) -> Any:
    return load(ROOT / name)


@cache
def _paths(name: str) -> tuple[tuple[Any, ...], ...]:
    return tuple(json_paths(_doc(name)))


def _check(run, tmp_path: Path, doc: Any, *extra: str):  # type: ignore[no-untyped-def]
    p = write_json(tmp_path / "snap.json", doc)
    res = check(run, "check", "--snapshot", str(p), *extra, what=f"check --snapshot {json.dumps(doc)[:100]}")
    if res.code in (0, 1) and "--json" in extra:
        assert json.loads(res.out)["schema_version"] == 1
    return res


@pytest.mark.parametrize("name", [SOURCES[1], SOURCES[3]])
def test_every_field_with_a_wrong_value(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    doc = _doc(name)
    for i, path in enumerate(_paths(name)):
        _check(run, tmp_path, mutate(doc, path, WRONG[i % len(WRONG)]), *(("--json",) if i % 2 else ()))


@FUZZ
@given(data=st.data())
def test_random_wrong_values(run, tmp_path: Path, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    name = data.draw(st.sampled_from(SOURCES))
    doc = _doc(name)
    for _ in range(data.draw(st.integers(1, 3))):
        doc = mutate(
            doc,
            data.draw(st.sampled_from(_paths(name))),
            data.draw(st.one_of(st.sampled_from(WRONG), _json_values())),
        )
    extra = data.draw(
        st.sampled_from([(), ("--json",), ("--driver", "535.104.05", "--torch", "2.1.0+cu121")])
    )
    _check(run, tmp_path, doc, *extra)


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
    p = tmp_path / "snap.json"
    p.write_bytes(data)
    res = check(run, "check", "--snapshot", str(p))
    assert res.code == 2 or data.strip().startswith(b"{")


@FUZZ
@given(doc=_json_values())
def test_random_json(run, tmp_path: Path, doc: Any) -> None:  # type: ignore[no-untyped-def]
    _check(run, tmp_path, doc)


@FUZZ
@given(data=st.data())
def test_explain_cross_checks_against_odd_snapshots(run, tmp_path: Path, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    name = data.draw(st.sampled_from(SOURCES))
    doc = mutate(_doc(name), data.draw(st.sampled_from(_paths(name))), data.draw(st.sampled_from(WRONG)))
    snap = write_json(tmp_path / "snap.json", doc)
    log = tmp_path / "x.log"
    log.write_text(
        data.draw(
            st.sampled_from(
                [
                    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
                    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n",
                    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
                    "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n",
                ]
            )
        ),
        encoding="utf-8",
    )
    check(run, "explain", str(log), "--snapshot", str(snap), "--json")


VERSION_FLAGS = (
    "--driver",
    "--cuda",
    "--cudnn",
    "--torch",
    "--tensorflow",
    "--python",
    "--cc",
    "--gpu",
    "--os",
)


@FUZZ
@given(
    values=st.dictionaries(
        st.sampled_from(VERSION_FLAGS),
        st.one_of(
            st.text(max_size=12),
            st.text(alphabet="0123456789.+-_abcu ", max_size=16),
            st.sampled_from(["535.104.05", "12.4", "2.5.1+cu124", "8.6", "9" * 5000]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_random_flag_values(run, values: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Malformed versions from the command line: exit 2 with one line, never a traceback."""
    args = [a for flag, v in values.items() for a in (flag, v)]
    check(run, "check", *args, "--json")


# ------------------------------------------------------------------ regressions


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 100_000 + "]" * 100_000, id="nested-100000"),
        pytest.param('{"a":' * 100_000 + "1" + "}" * 100_000, id="objects-100000"),
        pytest.param("[" * 100_000, id="unterminated"),
        pytest.param("1" * 5000, id="5000-digit-number"),
        pytest.param('{"schema_version": ' + "1" * 5000 + "}", id="5000-digit-schema-version"),
        pytest.param('{"schema_version": 1, "facts": {}, "probes": {"x": DEEP}}', id="probes-nested-975"),
    ],
)
def test_unreadable_json_is_one_line(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    # RecursionError and int()'s 4300-digit limit were internal errors (exit 3).
    p = tmp_path / "snap.json"
    p.write_text(text.replace("DEEP", "[" * 975 + "]" * 975), encoding="utf-8")
    for cmd in (("check", "--snapshot", str(p)), ("explain", "--snapshot", str(p), str(p))):
        res = check(run, *cmd)
        assert res.code == 2 and "snapshot" in res.err
    with pytest.raises(InputError):
        load_snapshot(p)


def test_nesting_within_the_limit_is_read(tmp_path: Path) -> None:
    p = tmp_path / "snap.json"
    p.write_text(
        '{"schema_version": 1, "facts": {}, "probes": {"x": ' + "[" * 90 + "]" * 90 + "}}", encoding="utf-8"
    )
    assert load_snapshot(p).probes["x"] == json.loads("[" * 90 + "]" * 90)


def test_long_version_in_a_snapshot_is_one_line(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # parse_dotted passed the 5000 digits to packaging, whose int() raised ValueError (exit 3).
    doc = _doc(SOURCES[0])
    for fact in ("cuda", "cudnn", "torch", "driver_cuda"):
        res = _check(run, tmp_path, mutate(doc, ("facts", fact), {"raw": "9" * 5000, "source": "x"}))
        assert res.code == 2 and fact in res.err
    for flag in ("--cuda", "--cudnn", "--torch", "--tensorflow", "--python", "--driver", "--cc"):
        assert check(run, "check", flag, "9" * 5000).code == 2
