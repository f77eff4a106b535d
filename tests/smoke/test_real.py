"""The real smoke job: PyTorch and TensorFlow trained for real on the CPU (CI installs both CPU builds).

The GPU paths (cuda device, AMP on a GPU, the CPU comparison on a GPU, the max-batch OOM loop) are in
test_gpu.py, opt-in with -m gpu.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compat.smoke import SmokeOptions, installed_here, run_smoke, smoke_findings

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = installed_here()
needs_torch = pytest.mark.skipif(
    not INSTALLED.get("torch"), reason="torch is not installed (CI installs the CPU build)"
)
needs_tf = pytest.mark.skipif(
    not INSTALLED.get("tensorflow"), reason="tensorflow is not installed (CI installs tensorflow-cpu)"
)
FRAMEWORKS = [pytest.param("torch", marks=needs_torch), pytest.param("tensorflow", marks=needs_tf)]
# Real training takes seconds of CPU per case: `slow` (deselected by default, run by .ci/run's slow step). The
# default run keeps the cheapest real check, PyTorch refusing --device cuda on a CPU build.
slow = pytest.mark.slow
FAST_ON_TORCH = [
    pytest.param("torch", marks=needs_torch),
    pytest.param("tensorflow", marks=[needs_tf, slow]),
]


def cli_json(*args: str) -> tuple[int, dict[str, Any], list[str]]:
    """`compat smoke --json ...` in a fresh interpreter; also reports which frameworks that parent imported."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['compat', 'smoke', '--json', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('compat', run_name='__main__')\n"
        "finally:\n"
        "    sys.stderr.write('MODULES ' + ' '.join(m for m in ('torch', 'tensorflow') if m in sys.modules) + '\\n')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    modules = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES")][-1].split()[1:]
    return proc.returncode, json.loads(proc.stdout), modules


@slow
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cli_trains_for_real_on_the_cpu(framework: str) -> None:
    code, doc, parent_modules = cli_json("--framework", framework, "--device", "cpu", "--steps", "12")
    assert code == 0, doc
    assert parent_modules == [], "the parent process imported a framework"
    assert (doc["status"], doc["framework"], doc["device"], doc["steps"]) == ("passed", framework, "cpu", 12)
    # the module's __version__: PyPI's CUDA wheels add a local part (2.13.0+cu130) their distribution lacks
    assert doc["framework_version"].split("+")[0] == str(INSTALLED[framework]).split("+")[0]
    assert doc["loss_last"] < doc["loss_first"]
    assert len(doc["losses"]) == 12
    assert doc["cudnn_used"] is False and doc["signal"] is None and doc["cause"] is None
    assert doc["samples_per_second"] > 0 and doc["peak_memory_bytes"] > 0
    t = doc["timings"]
    for key in ("child_start", "import", "first_step", "steady_steps", "overhead", "total"):
        assert key in t
    assert t["import"] > 0 and t["total"] >= t["import"]


@slow
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_amp_comparison_and_bounded_max_batch_on_the_cpu(framework: str) -> None:
    # compare="always" and max_batch_cap exercise on the CPU the code the GPU runs: the forward pass against a
    # CPU copy, and the doubling loop (bounded by the cap instead of the GPU's memory).
    r = run_smoke(
        SmokeOptions(
            framework=framework,
            device="cpu",
            steps=6,
            batch_size=8,
            amp=True,
            find_max_batch=True,
            max_batch_cap=32,
            compare="always",
            timeout=300,
        )
    )
    assert r.verdict == "passed", (r.message, r.details.get("stderr_tail"))
    assert r.details["amp"] == "bf16"
    assert r.details["compare"]["match"] is True
    assert r.max_batch == 32
    assert [t[0] for t in r.details["max_batch_search"]["tried"]] == [8, 16, 32]
    assert r.details["max_batch_search"]["stopped"] == "cap"
    assert r.details["memory_per_sample_bytes"] is None or r.details["memory_per_sample_bytes"] >= 0
    assert [f.id for f in smoke_findings(r)] == ["smoke.passed", "smoke.max_batch"]


@slow
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_find_max_batch_on_the_cpu_is_gpu_only(framework: str) -> None:
    r = run_smoke(SmokeOptions(framework=framework, device="cpu", steps=3, batch_size=8, find_max_batch=True))
    assert r.verdict == "passed"
    assert r.max_batch is None
    assert "GPUs only" in r.details["max_batch_note"]


@pytest.mark.parametrize("framework", FAST_ON_TORCH)
def test_cuda_requested_on_a_cpu_build_fails_with_the_reason(framework: str) -> None:
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    r = run_smoke(SmokeOptions(framework=framework, device="cuda", steps=3))
    assert (r.verdict, r.exit_code) == ("failed", 1)
    assert r.details["stage"] == "device"
    if (
        framework == "torch"
    ):  # PyTorch's own words (a CPU build's, or a CUDA build's without a driver: the PyPI
        # wheel for Python != 3.11 here), which explain recognises
        assert "Torch not compiled with CUDA enabled" in r.message or "Found no NVIDIA driver" in r.message
        assert r.cause == "no_gpu_visible" and r.fixes
    else:
        assert "--device cuda" in r.message
