"""Fixtures for the dockerfile tests: a matrix with a fixed PyTorch table, and a Dockerfile writer."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "dockerfile"


@pytest.fixture(scope="session")
def dmatrix(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The shipped matrix files with tests/data/dockerfile/pytorch-fixture.yaml as pytorch.yaml (its releases,
    the shipped file's `cxx11_abi` table)."""
    import yaml

    from compat.matrix import load_matrix

    d = tmp_path_factory.mktemp("matrix")
    for f in (ROOT / "matrix").glob("*.yaml"):
        shutil.copy(f, d / f.name)
    fixture = yaml.safe_load((DATA / "pytorch-fixture.yaml").read_text(encoding="utf-8"))
    shipped = yaml.safe_load((ROOT / "matrix" / "pytorch.yaml").read_text(encoding="utf-8"))
    fixture["cxx11_abi"] = shipped["cxx11_abi"]
    (d / "pytorch.yaml").write_text(yaml.safe_dump(fixture, sort_keys=False), encoding="utf-8")
    return load_matrix(d)


@pytest.fixture
def write_df(tmp_path: Path) -> Callable[..., Path]:
    def _write(text: str, name: str = "Dockerfile", **files: str) -> Path:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        for rel, content in files.items():
            f = tmp_path / rel.replace("__", "/")
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(content, encoding="utf-8")
        return p

    return _write
