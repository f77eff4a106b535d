"""Fixtures of the doctor's tests (the fakes themselves live in fakes.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.doctor.fakes import ROOT, write_exe


@pytest.fixture
def fake_bin(tmp_path: Path) -> Callable[[str, str], Path]:
    """Create fake executables in a directory that the returned env's PATH puts first."""
    d = tmp_path / "bin"

    def make(name: str, script: str) -> Path:
        return write_exe(d, name, script)

    make.dir = d  # type: ignore[attr-defined]
    return make


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test gets its own import cache, so no test sees another's (or the developer's) cached import."""
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path / "cache"))
    yield


@pytest.fixture(scope="session")
def matrix_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped matrix; while a core file is still missing from it (work in progress), a copy with an empty
    stand-in for that file, so the doctor's own tests do not depend on unrelated data files."""
    from compat.errors import MatrixError
    from compat.matrix import CORE_FILES, load_matrix

    shipped = ROOT / "matrix"
    try:
        load_matrix(shipped)
        return shipped
    except MatrixError:
        pass
    d = tmp_path_factory.mktemp("matrix")
    for f in shipped.glob("*.yaml"):
        shutil.copy(f, d / f.name)
    for name in CORE_FILES:
        if not (d / name).exists():
            key = "issues" if name == "known_issues.yaml" else ("gpus" if name == "gpus.yaml" else "releases")
            (d / name).write_text(f"updated: 2026-01-01\n{key}: []\n", encoding="utf-8")
    load_matrix(d)
    return d


@pytest.fixture(scope="session")
def doctor_matrix(matrix_dir: Path):  # type: ignore[no-untyped-def]
    from compat.matrix import load_matrix

    return load_matrix(matrix_dir)
