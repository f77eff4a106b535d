"""Shared fixtures: the shipped matrix, and a runner for the CLI that returns (exit code, stdout, stderr)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No override or matrix variable from the developer's shell leaks into a test."""
    for key in list(os.environ):
        if key.startswith("COMPAT_") and key != "COMPAT_CACHE_DIR":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    # doctor, smoke and suggest inspect the active environment (compat/target.py): in tests, the one running them.
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    yield


@pytest.fixture(scope="session")
def matrix():  # type: ignore[no-untyped-def]
    from compat.matrix import load_matrix

    return load_matrix(os.environ.get("TEST_MATRIX_DIR") or ROOT / "matrix")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    from compat.cli import main

    def _run(*args: str) -> Result:
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        else:  # pragma: no cover - main always exits
            code = 0
        cap = capsys.readouterr()
        return Result(code, cap.out, cap.err)

    return _run


def python() -> str:
    return sys.executable


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Fuzz suites (every `test_fuzz*.py`) are `slow`: the default run skips them, `.ci/run` runs them with -m slow."""
    slow = pytest.mark.slow
    for item in items:
        if item.path.name.startswith("test_fuzz"):
            item.add_marker(slow)
