"""`compat suggest`: newest working release per machine, computed from the matrix rows (PyPI wheels, NVIDIA tables)."""

from __future__ import annotations

import json
from typing import Optional

import pytest

from compat.facts import Facts, apply_flags, make_fact
from compat.suggest import suggest


def _s(matrix, **flags: Optional[str]):  # type: ignore[no-untyped-def]
    os_name = flags.pop("os", None) or "linux"
    facts = apply_flags(
        Facts(values={"os": make_fact("os", os_name, "--os")}),
        {k: v for k, v in flags.items() if v is not None},
    )
    return suggest(facts, matrix)


# (driver, gpu, python, os, torch version, torch variant, tf version)
CASES = [
    # Driver 470 (CUDA 11.4) runs CUDA 11.x under minor-version compatibility: the last cu118 build with sm_86.
    ("470.82.01", "NVIDIA GeForce RTX 3090", "3.10", "linux", "2.6.0", "cu118", "2.14.1"),
    # A CUDA 13 driver and Blackwell: the newest release; TF 2.19+ is a known failure on sm_120.
    ("580.65.06", "NVIDIA GeForce RTX 5090", "3.12", "linux", "2.15.0", "cu132", "2.18.1"),
    # Pascal: cu126 builds keep sm_60 (sm_61 runs it); CUDA 13 builds dropped it.
    ("550.54.14", "NVIDIA GeForce GTX 1080", "3.11", "linux", "2.14.1", "cu126", "2.21.0"),
    # Kepler: only cu118 builds carry sm_37; TF keeps sm_35 until 2.14.
    ("535.104.05", "Tesla K80", "3.9", "linux", "2.6.0", "cu118", "2.14.1"),
    # Native Windows: TensorFlow's last GPU release is 2.10.
    ("560.94", "NVIDIA GeForce RTX 3090", "3.10", "windows", None, None, "2.10.1"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-py{c[2]}-{c[3]}" for c in CASES])
def test_suggest(matrix, case) -> None:  # type: ignore[no-untyped-def]
    driver, gpu, py, os_name, t_ver, t_var, tf_ver = case
    s = _s(matrix, driver=driver, gpu=gpu, python=py, os=os_name)
    if t_ver:
        assert s.torch is not None and (s.torch.version, s.torch.variant) == (t_ver, t_var)
        if t_var:
            assert s.torch.command.startswith(f"pip install torch=={t_ver}")
    assert s.tensorflow is not None and s.tensorflow.version == tf_ver


def test_blocked_says_what_unlocks_newer(matrix) -> None:  # type: ignore[no-untyped-def]
    s = _s(matrix, driver="470.82.01", gpu="NVIDIA GeForce RTX 3090", python="3.10")
    whys = {b["what"]: b["why"] for b in s.blocked}
    assert whys["torch 2.7.0 to 2.8.0"] == "needs driver ≥ 525.60.13 (CUDA 12.x)"
    assert "580.65.06" in whys["torch 2.9.0 to 2.14.1"]
    assert whys["tensorflow 2.15.0 and newer"] == "needs driver ≥ 525.60.13 (CUDA 12.x)"


def test_pypi_default_gets_plain_pip_command(matrix) -> None:  # type: ignore[no-untyped-def]
    s = _s(matrix, driver="580.65.06", gpu="NVIDIA GeForce RTX 5090", python="3.12")
    assert s.torch is not None and s.torch.command == "pip install torch==2.15.0"


def test_no_working_release_is_null_with_reason(matrix) -> None:  # type: ignore[no-untyped-def]
    s = _s(matrix, gpu="Tesla K80", python="3.12", driver="470.82.01")
    doc = s.to_json()
    assert doc["schema_version"] == 1
    assert doc["tensorflow"] is None and "sm_37" in doc["unavailable"]["tensorflow"]


def test_versions_compare_as_versions(matrix) -> None:  # type: ignore[no-untyped-def]
    # 2.14.1 must rank above 2.9.x (string order would say the opposite); 2.15 has no cp310 wheels.
    s = _s(matrix, driver="570.124.06", gpu="NVIDIA GeForce RTX 4090", python="3.10")
    assert s.torch is not None and s.torch.version == "2.14.1" and s.torch.variant == "cu126"


def test_cpu_only_machine(matrix) -> None:  # type: ignore[no-untyped-def]
    s = _s(matrix, python="3.12")
    assert (
        s.torch is not None
        and s.torch.variant == "cpu"
        and "--index-url https://download.pytorch.org/whl/cpu" in s.torch.command
    )


def test_cli_json(run) -> None:  # type: ignore[no-untyped-def]
    r = run(
        "suggest",
        "--driver",
        "535.104.05",
        "--gpu",
        "RTX 4090",
        "--python",
        "3.11",
        "--os",
        "linux",
        "--no-probe",
        "--json",
    )
    assert r.code == 0
    doc = json.loads(r.out)
    assert set(doc) >= {"schema_version", "torch", "tensorflow", "blocked"}
    assert set(doc["torch"]) == {"version", "variant", "command", "reason"}
    bad = run("suggest", "--driver", "x", "--no-probe")
    assert bad.code == 2 and bad.err.count("\n") == 1


def test_driver_branch_that_no_longer_drives_the_gpu(matrix) -> None:  # type: ignore[no-untyped-def]
    # NVIDIA's architecture matrix: Kepler's last driver branch is R470.
    s = _s(matrix, driver="535.104.05", gpu="Tesla K80", python="3.9")
    assert s.blocked[0]["what"] == "every GPU build" and "R470" in s.blocked[0]["why"]
    assert s.torch is not None and s.torch.variant == "cu118" and "R470" in s.torch.reason
