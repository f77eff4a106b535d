"""Fuzzing `compat matrix validate DIR` (and `compat check --matrix DIR`): the shipped matrix with one field
of the wrong type, random bytes, YAML nested deep enough to crash libyaml, alias bombs, timestamps.

`matrix validate` lists every problem, one per line, after a first `compat: error:` line; every other command
keeps the one-line contract (tests/fuzzing.py). Neither ever exits 3 or prints a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.explain.catalogue
import compat.matrix
from tests.conftest import ROOT
from tests.fuzzing import FUZZ, LIMIT_S, WRONG, check, json_paths, mutate

FILES = sorted(p.name for p in (ROOT / "matrix").glob("*.yaml"))
YAML_WRONG = tuple(v for v in WRONG if v != "\ud800") + (
    "2026-01-01",
    "sm_86",
    "535.104.05",
    [{}],
    {"x": [1]},
)


@pytest.fixture(scope="module")
def mdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("matrix")
    for name in FILES:
        shutil.copy(ROOT / "matrix" / name, d / name)
    return d


@pytest.fixture(scope="module")
def docs() -> dict[str, Any]:
    return {name: yaml.safe_load((ROOT / "matrix" / name).read_text(encoding="utf-8")) for name in FILES}


def _paths(doc: Any, cap: int = 12) -> list[tuple[Any, ...]]:
    paths = [p for p in json_paths(doc, 1) if len(p) <= 3]
    step = max(1, -(-len(paths) // cap))
    return paths[::step]


def _validate(run, d: Path, label: str, *, also_check: bool = True) -> None:  # type: ignore[no-untyped-def]
    compat.matrix.LOADED_MATRICES.clear()
    compat.explain.catalogue._CACHE.clear()
    t = time.perf_counter()
    res = run("matrix", "validate", str(d))
    took = time.perf_counter() - t
    assert res.code in (0, 2), f"{label}: exit {res.code}: {res.err[:500]}"
    assert "Traceback" not in res.err, f"{label}: {res.err[:2000]}"
    if res.code == 2:
        assert res.err.startswith("compat: error: matrix "), f"{label}: {res.err[:300]}"
    assert took < LIMIT_S, f"{label}: {took:.2f} s"
    compat.matrix.LOADED_MATRICES.clear()
    if not also_check:
        return
    check(
        run,
        "check",
        "--matrix",
        str(d),
        "--driver",
        "535.104.05",
        "--torch",
        "2.1.0",
        "--gpu",
        "RTX 4090",
        what=f"check --matrix ({label})",
    )
    compat.matrix.LOADED_MATRICES.clear()


@contextmanager
def _with(d: Path, name: str, data: bytes) -> Iterator[None]:
    """The copied matrix with one file replaced by `data`, restored after."""
    original = (ROOT / "matrix" / name).read_bytes()
    (d / name).write_bytes(data)
    try:
        yield
    finally:
        (d / name).write_bytes(original)


def _dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False).encode("utf-8")


@pytest.mark.parametrize("name", FILES)
def test_fields_with_wrong_values(run, mdir: Path, docs: dict[str, Any], name: str) -> None:  # type: ignore[no-untyped-def]
    for i, path in enumerate(_paths(docs[name])):
        value = YAML_WRONG[(i * 7 + len(name)) % len(YAML_WRONG)]
        with _with(mdir, name, _dump(mutate(docs[name], path, value))):
            _validate(run, mdir, f"{name} {path} = {value!r:.40}", also_check=i % 3 == 0)


@settings(FUZZ, max_examples=25)
@given(data=st.data())
def test_random_wrong_values(run, mdir: Path, docs: dict[str, Any], data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    name = data.draw(st.sampled_from(FILES))
    path = data.draw(st.sampled_from(list(json_paths(docs[name], 2))))
    value = data.draw(st.sampled_from(YAML_WRONG))
    with _with(mdir, name, _dump(mutate(docs[name], path, value))):
        _validate(run, mdir, f"{name} {path} = {value!r:.40}")


@settings(FUZZ, max_examples=20)
@given(data=st.binary(max_size=1024), name=st.sampled_from(FILES))
def test_random_bytes(run, mdir: Path, data: bytes, name: str) -> None:  # type: ignore[no-untyped-def]
    with _with(mdir, name, data):
        _validate(run, mdir, f"{name} = {data[:40]!r}")


# ------------------------------------------------------------------ regressions

LAUGHS = "updated: 2026-01-01\na: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param("pytorch.yaml", LAUGHS + "releases: *i\n", id="alias-bomb-rows"),
        pytest.param("gpus.yaml", LAUGHS + "gpus: *i\n", id="alias-bomb-gpus"),
        pytest.param("signatures.yaml", LAUGHS + "signatures: *i\n", id="alias-bomb-signatures"),
        pytest.param("images.yaml", "updated: 2026-01-01 10:00:00\n", id="timestamp-updated"),
        pytest.param("cuda.yaml", "updated: " + "9" * 5000 + "\n", id="5000-digit-updated"),
        pytest.param("xid.yaml", "updated: !!python/object/apply:os.system ['true']\n", id="python-tag"),
        pytest.param("cudnn.yaml", "a: &a {<<: *a}\n", id="merge-key-loop"),
        pytest.param("tensorflow.yaml", "updated: 2026-01-01\nx: " + "a" * 2_000_000 + "\n", id="2MB-line"),
        pytest.param("known_issues.yaml", "{a: " * 5000 + "1" + "}" * 5000, id="mappings-5000-deep"),
    ],
)
def test_malformed_files(run, mdir: Path, name: str, text: str) -> None:  # type: ignore[no-untyped-def]
    with _with(mdir, name, text.encode("utf-8")):
        _validate(run, mdir, name)


@pytest.mark.parametrize(
    ("name", "path", "value"),
    [
        # Each was an internal error (exit 3): TypeError, InvalidVersion or int()'s 4300-digit ValueError.
        pytest.param("images.yaml", ("os", 0, "name"), [], id="os-name-list"),
        pytest.param("pytorch.yaml", ("releases", 1, "variants", 0, "cuda"), "x", id="variant-cuda-x"),
        pytest.param(
            "pytorch.yaml", ("releases", 1, "variants", 0, "cuda"), "9" * 5000, id="variant-cuda-5000-digits"
        ),
        pytest.param("pytorch.yaml", ("releases", 0, "pypi_default"), {}, id="pypi-default-mapping"),
        pytest.param("tensorflow.yaml", ("releases", 1, "cuda"), "x", id="tensorflow-cuda-x"),
        pytest.param(
            "cuda.yaml", ("compute_capabilities", 0, "last_driver"), "9" * 5000, id="last-driver-5000-digits"
        ),
        pytest.param(
            "cuda.yaml", ("compute_capabilities", 0, "last_driver"), "\u00b2", id="last-driver-superscript"
        ),
    ],
)
def test_field_regressions(
    run,
    mdir: Path,
    docs: dict[str, Any],
    name: str,
    path: tuple[Any, ...],  # type: ignore[no-untyped-def]
    value: Any,
) -> None:
    with _with(mdir, name, _dump(mutate(docs[name], path, value))):
        compat.matrix.LOADED_MATRICES.clear()
        res = run("matrix", "validate", str(mdir))
        assert res.code == 2 and "internal error" not in res.err, res.err[:300]


def test_yaml_nested_deep_enough_to_crash_libyaml(tmp_path: Path) -> None:
    # libyaml's composer recursed until the C stack overflowed: a segfault (exit -11), in a child process here.
    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    for text in ("[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x\n"):
        (d / "gpus.yaml").write_text(text, encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-m", "compat", "matrix", "validate", str(d)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 2, (proc.returncode, err[:300])
        # compat's own depth guard says "nested more than"; a PyYAML with its own flow-depth limit (6.0.3+) refuses
        # deep nesting first ("while increasing flow level" / "block level"): either way one problem line names the file.
        assert "gpus.yaml" in err and (
            "nested more than" in err or "flow level" in err or "block level" in err
        ), err[:300]
        assert "Traceback" not in err
