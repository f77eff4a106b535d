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
