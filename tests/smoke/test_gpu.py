"""The smoke job on a real NVIDIA GPU (opt-in: -m gpu; skipped where no NVIDIA driver is loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat.smoke import SmokeOptions, installed_here, run_smoke

INSTALLED = installed_here()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not Path("/proc/driver/nvidia/version").exists(), reason="no NVIDIA driver loaded here"
    ),
]
FRAMEWORKS = [
    pytest.param("torch", marks=pytest.mark.skipif(not INSTALLED.get("torch"), reason="torch not installed")),
    pytest.param(
        "tensorflow",
        marks=pytest.mark.skipif(not INSTALLED.get("tensorflow"), reason="tensorflow not installed"),
    ),
]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_trains_on_the_gpu_with_cudnn_and_matches_the_cpu(framework: str) -> None:
    r = run_smoke(SmokeOptions(framework=framework, device="cuda", timeout=600))
    assert r.verdict == "passed", (r.message, r.details.get("stderr_tail"))
    assert r.device == "cuda" and r.device_name
    assert r.cudnn_used is True
    assert r.details["compare"]["match"] is True
    assert r.details["peak_memory_kind"] in ("gpu_max_allocated", "gpu_peak")
    assert r.peak_memory_bytes and r.peak_memory_bytes > 0


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_amp_on_the_gpu(framework: str) -> None:
    r = run_smoke(SmokeOptions(framework=framework, device="cuda", amp=True, timeout=600))
    assert r.verdict == "passed", (r.message, r.details.get("stderr_tail"))
    assert r.details["amp"] in ("bf16", "fp16")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_find_max_batch_runs_the_gpu_out_of_memory(framework: str) -> None:
    r = run_smoke(SmokeOptions(framework=framework, device="cuda", find_max_batch=True, timeout=600))
    assert r.verdict == "passed", (r.message, r.details.get("stderr_tail"))
    assert r.max_batch is not None and r.max_batch >= 32
    assert r.details["max_batch_search"]["stopped"] in ("out_of_memory", "limit")
    assert r.details["memory_per_sample_bytes"] > 0
