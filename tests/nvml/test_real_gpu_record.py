"""On a real NVIDIA GPU (opt-in: -m gpu): record this machine with `compat record`, replay the recording with the
fake NVML library, and the doctor sees the same GPUs and driver: the fake answers as the real driver did."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import compat, doctor, node_env

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not Path("/proc/driver/nvidia/version").exists(), reason="no NVIDIA driver loaded here"
    ),
]


def test_real_machine_round_trip(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "FAKE_NVML"))}
    env["COMPAT_CACHE_DIR"] = str(tmp_path / "cache")
    res = compat(["record", "--out", str(tmp_path / "me.json")], env)
    assert res.returncode == 0, res.stderr
    rec = json.loads((tmp_path / "me.json").read_text())
    assert rec["init"] == "SUCCESS" and rec["devices"]
    real = compat(["doctor", "--json", "--no-smoke", "--python", bare_python], env)
    real_rep = json.loads(real.stdout)
    _, replay = doctor(node_env(fake_nvml, rec, tmp_path / "replay"), bare_python)
    keep = ("name", "cc", "memory_total", "mig_mode", "persistence_mode", "pci_bus_id")
    assert [{k: g[k] for k in keep} for g in replay["gpus"]] == [
        {k: g[k] for k in keep} for g in real_rep["gpus"]
    ]
    assert replay["facts"]["driver"]["raw"] == real_rep["facts"]["driver"]["raw"]
    assert replay["facts"]["driver_cuda"] == real_rep["facts"]["driver_cuda"]
