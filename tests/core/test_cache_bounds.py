"""compat's one cache stays bounded: each family of keyed entries (framework imports, tool answers, pyproject
outcomes) keeps its KEEP newest entries; other files in the folder are never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compat import cache


def _entry(d: Path, name: str, age: int) -> Path:
    p = d / name
    p.write_bytes(b"x")
    os.utime(p, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    return p


def test_prune_keeps_the_newest_of_one_family_only(tmp_path: Path) -> None:
    for i in range(10):
        _entry(tmp_path, f"tool-{i:02d}.bin", age=i)  # tool-00 is the newest
    others = [_entry(tmp_path, "pyproject-a.bin", 99), _entry(tmp_path, "guard-x.bin", 99)]
    removed = cache.prune(str(tmp_path), "tool-", keep=3)
    assert removed == 7
    assert sorted(p.name for p in tmp_path.glob("tool-*")) == ["tool-00.bin", "tool-01.bin", "tool-02.bin"]
    assert all(p.exists() for p in others)
    assert cache.prune(str(tmp_path), "tool-", keep=3) == 0
    assert cache.prune(str(tmp_path / "missing"), "tool-") == 0


def test_store_with_a_family_bounds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "KEEP", 4)
    for i in range(9):
        assert cache.store(str(tmp_path / f"tool-{i}.bin"), 1, {"i": i}, family="tool-")
        os.utime(tmp_path / f"tool-{i}.bin", ns=(i * 10**9, i * 10**9))
    assert cache.store(str(tmp_path / "tool-9.bin"), 1, {"i": 9}, family="tool-")
    left = sorted(p.name for p in tmp_path.glob("tool-*.bin"))
    assert len(left) == 4 and "tool-9.bin" in left
    assert cache.load(str(tmp_path / "tool-9.bin"), 1) == {"i": 9, "format": 1}
    assert cache.store(str(tmp_path / "other.bin"), 1, {"i": 0})  # no family: nothing pruned
    assert (tmp_path / "other.bin").exists()
