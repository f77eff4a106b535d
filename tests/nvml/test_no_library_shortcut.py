"""The NVML probe's no-child shortcut (compat.probes.nvml.no_driver_library) stays off where a libnvidia-ml.so.1 can
be loaded: with the fake NVML library on LD_LIBRARY_PATH the child runs and answers from the library."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.probes import nvml
from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import profile

PROFILE = "a100-sxm4-80gb"


@pytest.mark.parametrize("mode", ["full", "light"])
def test_the_child_runs_when_the_fake_library_is_on_ld_library_path(
    fake_nvml: FakeNvmlLib, tmp_path: Path, mode: str
) -> None:
    doc = profile(PROFILE)
    driver = doc["system"]["nvmlSystemGetDriverVersion"]
    env = fake_nvml.env(doc, tmp_path)
    assert nvml.no_driver_library(env) is False
    got = nvml.in_child(mode, 10.0, env)
    assert got["status"] == "ok", got
    if mode == "full":
        assert got["driver_version"] == driver and got["device_count"] == len(doc["devices"])
    else:
        assert got["driver"] == driver and len(got["gpus"]) == len(doc["devices"])
    assert (tmp_path / "trace.txt").exists()  # the fake library itself answered
    without = {k: v for k, v in env.items() if k != "LD_LIBRARY_PATH"}
    if nvml.no_driver_library(without):  # no driver here: only the fake library made the child run
        assert nvml.in_child(mode, 10.0, without)["error"]["kind"] == "library-not-found"
