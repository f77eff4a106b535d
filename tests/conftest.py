"""Shared fixtures: the shipped matrix, and a runner for the CLI that returns (exit code, stdout, stderr)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


MAX_WORKERS = 8
"""`-n auto` (pyproject's addopts): two pytest-xdist workers per CPU, at most this many. Most of the default
suite waits on child processes (probes, smoke jobs, timeouts), so twice the CPUs keeps them busy."""


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _selects_gpu(markexpr: str) -> bool:
    """`-m gpu` (or any expression naming gpu but not `not gpu`): tests that share one real GPU."""
    words = markexpr.replace("(", " ").replace(")", " ").split()
    return any(w == "gpu" and (i == 0 or words[i - 1] != "not") for i, w in enumerate(words))


def auto_workers(markexpr: str, environ: Mapping[str, str] = os.environ) -> int:
    """The worker count `-n auto` gives: 0 (one process) when GPU tests are selected, else 2 per CPU, at most
    MAX_WORKERS; PYTEST_XDIST_AUTO_NUM_WORKERS overrides it, as in pytest-xdist itself."""
    if _selects_gpu(markexpr):
        return 0
    explicit = environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").strip()
    if explicit.isdigit():
        return int(explicit)
    return min(MAX_WORKERS, 2 * _cpus())


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return auto_workers(str(config.option.markexpr or ""))


_OWN_CACHE: list[tuple[str, str | None]] = []  # (the temporary directory, the value it replaced)


def pytest_configure(config: pytest.Config) -> None:
    """Every pytest process (the controller and each xdist worker) gets its own empty COMPAT_CACHE_DIR: workers
    never race on one matrix or guard cache, and no test reads or writes the developer's real cache."""
    d = tempfile.mkdtemp(prefix="compat-test-cache-")
    _OWN_CACHE.append((d, os.environ.get("COMPAT_CACHE_DIR")))
    os.environ["COMPAT_CACHE_DIR"] = d


def pytest_unconfigure(config: pytest.Config) -> None:
    while _OWN_CACHE:
        d, before = _OWN_CACHE.pop()
        shutil.rmtree(d, ignore_errors=True)
        if before is None:
            os.environ.pop("COMPAT_CACHE_DIR", None)
        else:
            os.environ["COMPAT_CACHE_DIR"] = before


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Any]) -> Any:
    """`make(directory)` run once per test run, however many xdist workers ask: the first caller runs it under a
    file lock in the run's shared temporary directory and stores its (JSON) result; later callers, in any
    worker, wait for the lock and read it. Order-independent: whichever test asks first pays."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common parent
    d = root / f"once-{name}"
    done = root / f"once-{name}.json"
    with open(root / f"once-{name}.lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows: each worker makes its own
            d = base / f"once-{name}"
            done = base / f"once-{name}.json"
        if not done.exists():
            d.mkdir(parents=True, exist_ok=True)
            done.write_text(json.dumps({"result": make(d)}), encoding="utf-8")
    return json.loads(done.read_text(encoding="utf-8"))["result"]


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


def _deselects_slow(markexpr: str) -> bool:
    """True when -m's expression rejects a test whose only marker is `slow` (the default: 'not slow and ...')."""
    if not markexpr:
        return False
    try:
        from _pytest.mark.expression import Expression

        def only_slow(name: str, /, **kwargs: str | int | bool | None) -> bool:
            return name == "slow"

        return not Expression.compile(markexpr).evaluate(only_slow)
    except Exception:  # pytest's parser moved or the expression is odd: collect everything, -m still filters
        return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Fuzz modules are all `slow`: when -m deselects slow, do not even import them (their example corpora and
    hypothesis cost every xdist worker seconds of collection)."""
    fuzz = collection_path.name.startswith("test_fuzz") and collection_path.suffix == ".py"
    return True if fuzz and _deselects_slow(str(config.option.markexpr or "")) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Fuzz suites (every `test_fuzz*.py`) are `slow`: the default run skips them, `.ci/run` runs them with -m slow."""
    slow = pytest.mark.slow
    for item in items:
        if item.path.name.startswith("test_fuzz"):
            item.add_marker(slow)
