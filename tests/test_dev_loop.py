"""The developer loop (issue 12, item 9): the README's `python -m pytest` runs in parallel and skips the slow suites,
`.ci/run` still runs them, and mypy checks the tests too."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import conftest
from tests.conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # a dependency of compat below 3.11


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _addopts() -> list[str]:
    return shlex.split(_pyproject()["tool"]["pytest"]["ini_options"]["addopts"])


def test_default_run_is_parallel_and_deselects_gpu_slow_and_network() -> None:
    opts = _addopts()
    assert opts[opts.index("-n") + 1] == "auto"
    expr = opts[opts.index("-m") + 1]
    assert conftest._deselects_slow(expr)
    for marker in ("gpu", "slow", "network"):
        assert f"not {marker}" in expr
    extras = _pyproject()["project"]["optional-dependencies"]["test"]
    assert any(r.replace(" ", "").startswith("pytest-xdist") for r in extras)


def test_mypy_checks_the_package_the_tests_and_the_benchmarks() -> None:
    files = _pyproject()["tool"]["mypy"]["files"]
    assert {"compat", "tests", "bench"} <= set(files)


def test_ci_checks_formatting_and_runs_the_slow_suites() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "ruff format --check compat tests bench" in ci
    assert "mypy" in ci
    assert '-m "slow and not gpu and not network"' in ci


@pytest.mark.parametrize(
    ("expr", "workers"),
    [
        ("not gpu and not slow and not network", 2 * 3),
        ("slow and not gpu and not network", 2 * 3),
        ("gpu", 0),
        ("gpu and not slow", 0),
        ("(gpu or network)", 0),
        ("not gpu", 2 * 3),
    ],
)
def test_auto_workers(expr: str, workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "_cpus", lambda: 3)
    assert conftest.auto_workers(expr, {}) == workers


def test_auto_workers_are_capped_and_can_be_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "_cpus", lambda: 64)
    assert conftest.auto_workers("not slow", {}) == conftest.MAX_WORKERS == 8
    assert conftest.auto_workers("not slow", {"PYTEST_XDIST_AUTO_NUM_WORKERS": "3"}) == 3
    assert conftest.auto_workers("gpu", {"PYTEST_XDIST_AUTO_NUM_WORKERS": "3"}) == 0


@pytest.mark.parametrize(
    ("expr", "ignored"),
    [
        ("not gpu and not slow and not network", True),
        ("not slow", True),
        ("slow", False),
        ("slow and not gpu and not network", False),
        ("", False),
        ("gpu", True),
    ],
)
def test_fuzz_modules_are_not_even_imported_when_slow_is_deselected(expr: str, ignored: bool) -> None:
    config: Any = SimpleNamespace(option=SimpleNamespace(markexpr=expr))
    fuzz = ROOT / "tests" / "explain" / "test_fuzz.py"
    assert fuzz.exists()
    assert conftest.pytest_ignore_collect(fuzz, config) is (True if ignored else None)
    assert conftest.pytest_ignore_collect(ROOT / "tests" / "test_dev_loop.py", config) is None


def test_each_test_process_has_its_own_cache_directory() -> None:
    d = os.environ["COMPAT_CACHE_DIR"]
    assert Path(d).name.startswith("compat-test-cache-")
    assert Path(d).parent == Path(tempfile.gettempdir())
    from compat.cache import cache_dir

    assert cache_dir() == d  # compat itself reads it: no test touches the developer's real cache


def test_once_runs_its_work_once_per_run(tmp_path_factory: pytest.TempPathFactory) -> None:
    calls: list[Path] = []

    def make(d: Path) -> str:
        calls.append(d)
        (d / "made").write_text("x")
        return str(d)

    name = f"dev-loop-{os.getpid()}"
    first = conftest.once(tmp_path_factory, name, make)
    second = conftest.once(tmp_path_factory, name, make)
    assert first == second and len(calls) == 1 and (Path(first) / "made").exists()


def test_the_replay_sample_names_real_profiles() -> None:
    from tests.nvml.helpers import profile_names
    from tests.nvml.test_record import REPLAY_SAMPLE

    assert set(REPLAY_SAMPLE) <= set(profile_names()) and len(REPLAY_SAMPLE) >= 3
