"""The JAX smoke child trains for real on the CPU JAX that CI installs, and refuses a CPU fall-back on --device cuda."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# find_spec, not importorskip: the child imports JAX, this process never needs to (and collection stays cheap).
if importlib.util.find_spec("jax") is None:
    pytest.skip("CPU JAX is installed by .ci/run; not in this environment", allow_module_level=True)

CHILD = Path(__file__).resolve().parents[2] / "compat" / "smoke" / "_child_jax.py"

pytestmark = pytest.mark.slow


def _run(tmp_path: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    out = tmp_path / "result.json"
    proc = subprocess.run(
        [sys.executable, str(CHILD), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, json.loads(out.read_text(encoding="utf-8"))


def test_cpu_training_step_lowers_the_loss(tmp_path: Path) -> None:
    code, r = _run(tmp_path, "--device", "cpu", "--steps", "12", "--batch-size", "16")
    assert code == 0, r.get("message")
    assert r["status"] == "passed"
    assert r["framework"] == "jax"
    assert r["device"] == "cpu" and r["backend"] == "cpu"
    assert r["steps"] == 12
    assert r["loss_last"] < r["loss_first"]
    assert r["samples_per_second"] > 0


def test_gpu_request_without_a_gpu_is_a_failure_not_a_silent_cpu_run(tmp_path: Path) -> None:
    code, r = _run(tmp_path, "--device", "cuda", "--steps", "3")
    assert code == 1
    assert r["status"] == "failed"
    assert r["stage"] == "device"
    assert "chose the cpu backend, not the GPU" in r["message"]


def test_compat_smoke_framework_jax_on_the_cpu(run: Any) -> None:
    r = run("smoke", "--framework", "jax", "--device", "cpu", "--steps", "10", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert (doc["status"], doc["framework"], doc["device"]) == ("passed", "jax", "cpu")
    assert doc["loss_last"] < doc["loss_first"]
