"""gather_facts() end to end on this machine, with fakes only at the boundaries (NVML, PATH, --python)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from compat.checks.doctor import doctor_checks
from compat.facts import Facts
from compat.probes import gather_facts
from compat.resolver import resolve
from tests.doctor.fakes import FakeBin, FakeNvml, FakeNVMLError, env_with, fake_python


def _ids(facts: Facts, m: Any, **kw: Any) -> dict[str, str]:
    return {f.id: f.severity for f in resolve(facts, m, extra_checks=doctor_checks, **kw).findings}


def test_recorded_h100_through_nvml(doctor_matrix: Any) -> None:
    facts = gather_facts(environ=env_with(), nvml=FakeNvml.recorded("h100-580.159.04.json"), frameworks=False)
    d = facts.get("driver")
    assert d is not None and (d.raw, d.source) == ("580.159.04", "nvml")
    assert facts.get("driver_cuda").raw == "13.0"  # type: ignore[union-attr]
    assert (
        facts.gpus is not None and facts.gpus[0].name == "NVIDIA H100 80GB HBM3" and facts.gpus[0].cc == "9.0"
    )
    assert facts.probes["nvidia_smi"]["kind"] == "skipped"
    assert "gpu.none" not in _ids(facts, doctor_matrix)
    json.dumps(facts.to_snapshot())  # everything is JSON-serialisable


def test_nvml_missing_falls_back_to_nvidia_smi(fake_bin: FakeBin, doctor_matrix: Any) -> None:
    fake_bin(
        "nvidia-smi",
        "echo '0, NVIDIA GeForce RTX 4090, GPU-af4f89ae-d08b, 535.183.06, 24564, 2, 24216, 8.9, "
        "Disabled, 41, 18.50, 450.00, 00000000:01:00.0'\n",
    )
    facts = gather_facts(
        environ=env_with(fake_bin.dir),
        nvml=FakeNvml(init_error=FakeNVMLError(999)),  # type: ignore[attr-defined]
        frameworks=False,
    )
    assert facts.gpus_source == "nvidia-smi"
    assert facts.get("driver").source == "nvidia-smi"  # type: ignore[union-attr]
    assert facts.gpus is not None and facts.gpus[0].cc == "8.9"
    assert facts.get("driver_cuda") is None  # the CSV query has no CUDA version field
    ids = _ids(facts, doctor_matrix)
    assert ids.get("driver.nvml") == "warning"


def test_everything_hangs_and_the_doctor_still_answers(
    fake_bin: FakeBin, tmp_path: Path, doctor_matrix: Any
) -> None:
    """NVML, nvidia-smi, nvcc, dmesg, journalctl and the framework import all hang: bounded by the timeouts."""
    for tool in ("nvidia-smi", "nvcc", "dmesg", "journalctl"):
        fake_bin(tool, "sleep 60\n")
    py = fake_python(tmp_path / "py", "hang")
    release = threading.Event()
    t0 = time.monotonic()
    facts = gather_facts(
        str(py),
        environ=env_with(fake_bin.dir),
        nvml=FakeNvml(hang=release),
        timeout=0.5,  # type: ignore[attr-defined]
        framework_timeout=1.0,
        root=str(tmp_path / "emptyroot"),
    )
    took = time.monotonic() - t0
    release.set()
    assert took < 8, took
    assert facts.probes["nvml"]["kind"] == "hang"
    assert facts.probes["nvidia_smi"]["kind"] == "hang"
    assert facts.probes["frameworks"]["children"]["torch"]["status"] == "timeout"
    assert facts.gpus is None
    ids = _ids(facts, doctor_matrix)
    assert ids["driver.nvml"] == "error" and ids["framework.import-failed"] == "error"
    assert ids["driver.nvidia-smi"] == "warning"


def test_broken_python_is_a_finding(tmp_path: Path, doctor_matrix: Any) -> None:
    py = fake_python(tmp_path, "segv")
    facts = gather_facts(
        str(py),
        environ=env_with(),
        nvml=FakeNvml(init_error=FakeNVMLError(12)),
        timeout=1.0,
        framework_timeout=5.0,
    )
    assert facts.get("python").raw == "3.10.12"  # type: ignore[union-attr]
    assert facts.get("torch").raw == "2.5.1"  # type: ignore[union-attr]
    r = resolve(facts, doctor_matrix, extra_checks=doctor_checks)
    f = next(f for f in r.findings if f.id == "framework.import-failed")
    assert f.title == "import torch crashed with SIGSEGV"


def test_overrides_apply_last() -> None:
    env = env_with(COMPAT_OVERRIDE_DRIVER="535.104.05", COMPAT_OVERRIDE_CUDA="")
    facts = gather_facts(environ=env, nvml=FakeNvml.recorded("h100-580.159.04.json"), frameworks=False)
    d = facts.get("driver")
    assert d is not None and (d.raw, d.source) == ("535.104.05", "COMPAT_OVERRIDE_DRIVER")
    assert facts.get("cuda") is None and facts.reason("cuda") == "COMPAT_OVERRIDE_CUDA is empty"


def test_toolkit_and_cudnn_in_a_recorded_tree(tmp_path: Path, fake_bin: FakeBin) -> None:
    root = tmp_path / "root"
    tk = root / "usr" / "local" / "cuda-12.4"
    (tk / "include").mkdir(parents=True)
    (tk / "lib64").mkdir()
    (tk / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}')
    (tk / "include" / "cudnn_version.h").write_text(
        (Path(__file__).parent.parent / "data" / "doctor" / "cudnn" / "8.9.7-cudnn_version.h").read_text()
    )
    (tk / "lib64" / "libcudnn.so.8.9.7").write_text("")
    (tk / "lib64" / "libcudnn.so.8").symlink_to("libcudnn.so.8.9.7")
    (root / "usr" / "local" / "cuda").symlink_to("cuda-12.4")
    facts = gather_facts(
        environ=env_with(fake_bin.dir, only=True),
        nvml=FakeNvml(init_error=FakeNVMLError(12)),  # type: ignore[attr-defined]
        frameworks=False,
        root=str(root),
    )
    assert facts.get("cuda").raw == "12.4.1"  # type: ignore[union-attr]
    assert facts.get("cudnn").raw == "8.9.7"  # type: ignore[union-attr]
    assert facts.probes["toolkits"]["installed"] == {"/usr/local/cuda-12.4": "12.4.1"}
    assert facts.probes["cudnn"]["distinct"] == ["8.9"]


def test_this_machine_quickly() -> None:
    t0 = time.monotonic()
    facts = gather_facts(frameworks=False)
    assert time.monotonic() - t0 < 10
    meta = facts.probes["meta"]
    assert set(meta["probes"]) >= {
        "nvml",
        "driver",
        "toolkits",
        "cudnn",
        "frameworks",
        "resources",
        "health",
        "environment",
    }
    assert all(isinstance(s, float) for s in meta["seconds"].values())
    assert facts.get("os") is not None and facts.get("python") is not None
