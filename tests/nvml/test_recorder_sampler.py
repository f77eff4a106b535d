"""The run recorder's GPU sampler child (compat run / compat watch, issue 15) through the real pynvml against the
fake NVML library (issue 18): every NVML call it makes answers from a real GPU's recorded profile."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import profile


def _sample(
    fake_nvml: FakeNvmlLib, doc: dict[str, Any], work: Path, seconds: float = 1.5
) -> list[dict[str, Any]]:
    env = fake_nvml.env(doc, work)
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "compat.record.gpu_sampler", "0.2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    time.sleep(seconds)
    out, err = proc.communicate(b"", timeout=30)  # closing stdin ends the sampler (its parent went away)
    assert proc.returncode == 0, err.decode()[-2000:]
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def test_sampler_reads_a_real_l40s_profile(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = copy.deepcopy(profile("l40s"))
    dev = doc["devices"][0]
    dev["nvmlDeviceGetUtilizationRates"] = [87, 40]  # edit: utilisation is not in the capture
    dev["nvmlDeviceGetMemoryInfo"]["used"] = 12 << 30
    lines = _sample(fake_nvml, doc, tmp_path)
    info = next(x["info"] for x in lines if "info" in x)
    assert info[0]["name"] == "NVIDIA L40S"
    assert info[0]["mem_total"] == 48305799168
    assert info[0]["power_limit_w"] == 350.0
    samples = [x["s"][0] for x in lines if "s" in x]
    assert len(samples) >= 3
    s = samples[-1]
    assert (s["util"], s["temp"], s["power"], s["throttle"], s["procs"]) == (87, 63, 127.7, [], [])
    assert s["used"] == 12 << 30
    assert s["ecc"] == 0


def test_sampler_on_a_geforce_without_ecc_or_utilisation(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    # GeForce: ECC reads NOT_SUPPORTED; utilisation absent from the profile: each is None, never a crash.
    lines = _sample(fake_nvml, profile("geforce-rtx-3090"), tmp_path)
    samples = [x["s"][0] for x in lines if "s" in x]
    assert samples and samples[-1]["ecc"] is None and samples[-1]["util"] is None
    assert samples[-1]["temp"] is not None


def test_sampler_says_unavailable_when_nvml_does_not_start(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    doc = copy.deepcopy(profile("l40s"))
    doc["init"] = "DRIVER_NOT_LOADED"
    lines = _sample(fake_nvml, doc, tmp_path, seconds=0.5)
    assert len(lines) == 1 and "unavailable" in lines[0]
    assert os.environ.get("FAKE_NVML_PROFILE") is None  # the fake was only ever loaded in the child
