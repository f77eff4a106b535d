"""Fixtures for the tests that drive the real pynvml against the fake NVML library (tests/fake_nvml)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_nvml import FakeNvmlLib, build, compiler


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory: pytest.TempPathFactory) -> FakeNvmlLib:
    """The fake library, compiled once per session with the system C compiler."""
    if compiler() is None:
        if os.environ.get("CI"):
            pytest.fail("CI must build the fake NVML library, but no C compiler (cc, gcc, clang) is on PATH")
        pytest.skip("no C compiler (cc, gcc or clang) on PATH to build the fake NVML library")
    out: Path = tmp_path_factory.mktemp("fake-nvml-build")
    build(out)  # fail early, with the compiler's message, if the source does not build
    return FakeNvmlLib(out)


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with no framework installed, for `compat doctor --python`: the reports then depend on the
    profile alone, not on whichever torch or TensorFlow the test machine has (and no framework import per run)."""
    d = tmp_path_factory.mktemp("bare-venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(d)], check=True, capture_output=True, timeout=120
    )
    return str(d / "bin" / "python")
