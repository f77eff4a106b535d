"""The parsed-matrix cache: keyed on the files' bytes, used only when it matches, never a relative path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import compat.matrix.load as load_mod
from compat.matrix import CORE_FILES, diskcache, load_matrix
from compat.matrix.yamlio import load_yaml

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def mdir(tmp_path: Path) -> Path:
    d = tmp_path / "m"
    d.mkdir()
    for name in CORE_FILES:
        shutil.copy(ROOT / "matrix" / name, d / name)
    return d


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    c = tmp_path / "cache"
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(c))
    return c


def _count_yaml_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = load_yaml

    def counting(text: str):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(text)

    monkeypatch.setattr(load_mod, "load_yaml", counting)
    return calls


def test_warm_load_parses_no_yaml_and_gives_the_same_matrix(
    mdir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_yaml_parses(monkeypatch)
    cold = load_matrix(mdir)
    assert calls[0] == len(CORE_FILES)
    assert (cache / diskcache.CACHE_FILE).is_file()
    warm = load_matrix(mdir)
    assert calls[0] == len(CORE_FILES)  # nothing parsed the second time
    assert (
        warm.torch == cold.torch and warm.cuda_releases == cold.cuda_releases and warm.updated == cold.updated
    )


def test_changed_bytes_miss_the_cache(mdir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_matrix(mdir)
    text = (mdir / "gpus.yaml").read_text(encoding="utf-8")
    (mdir / "gpus.yaml").write_text(text + "\n# touched\n", encoding="utf-8")
    calls = _count_yaml_parses(monkeypatch)
    load_matrix(mdir)
    assert calls[0] == len(CORE_FILES)


def test_a_damaged_cache_is_ignored(mdir: Path, cache: Path) -> None:
    load_matrix(mdir)
    (cache / diskcache.CACHE_FILE).write_text('{"key": ', encoding="utf-8")
    assert load_matrix(mdir).torch
    entry = json.loads((cache / diskcache.CACHE_FILE).read_text(encoding="utf-8"))
    assert set(entry) == {"key", "docs"}  # rewritten


def test_an_invalid_matrix_is_not_cached(mdir: Path, cache: Path) -> None:
    (mdir / "gpus.yaml").write_text("updated: 2026-01-01\ngpus: [{name: x}]\n", encoding="utf-8")
    with pytest.raises(Exception):  # noqa: B017 - MatrixError; the point is what is left on disk
        load_matrix(mdir)
    assert not (cache / diskcache.CACHE_FILE).exists()


def test_alias_bomb_is_not_expanded_into_the_cache(cache: Path) -> None:
    laughs = {"a": ["x"] * 10}
    node: object = laughs["a"]
    for _ in range(9):
        node = [node] * 10
    assert diskcache.write("k", {"pytorch.yaml": {"releases": node}}) is False
    assert not (cache / diskcache.CACHE_FILE).exists()


def test_cache_off_writes_nothing(mdir: Path, cache: Path) -> None:
    load_matrix(mdir, cache=False)
    assert not cache.exists()


def test_cache_dir_rules(tmp_path: Path) -> None:
    assert diskcache.cache_dir({"COMPAT_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert diskcache.cache_dir({"COMPAT_CACHE_DIR": "relative/dir"}) is None
    home = diskcache.cache_dir({"HOME": "/home/u"})
    assert home is not None and home.is_absolute()
    no_home = diskcache.cache_dir({})
    assert no_home is not None and no_home.is_absolute()
    rel_home = diskcache.cache_dir({"HOME": "relative", "XDG_CACHE_HOME": "also-relative"})
    assert rel_home is not None and rel_home.is_absolute()


def test_key_depends_on_every_byte_and_name() -> None:
    base = diskcache.content_key({"a.yaml": b"x", "b.yaml": b"y"})
    assert base == diskcache.content_key({"b.yaml": b"y", "a.yaml": b"x"})
    assert base != diskcache.content_key({"a.yaml": b"x", "b.yaml": b"z"})
    assert base != diskcache.content_key({"a.yaml": b"xy", "b.yaml": b""})
