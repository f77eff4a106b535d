"""Fixtures of the chaos suite: fake NVML libraries compiled once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.harness import VARIANTS, build_fake_nvml


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """variant -> folder with a libnvidia-ml.so.1 that fails that way (put it on LD_LIBRARY_PATH)."""
    base = tmp_path_factory.mktemp("fake-nvml")
    return {v: build_fake_nvml(v, base) for v in VARIANTS}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The chaos suite runs real processes (a few minutes on 2 cores): marked slow, still run by .ci/run."""
    for item in items:
        if "tests/chaos/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.slow)
