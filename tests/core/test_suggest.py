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


# (driver, gpu, python, os, torch version, torch variant, tf version). Issue 13: what suggest ranks first passes
# `compat check` with no warning when a warning-free option exists, so picks that check warns about moved:
CASES = [
    # Driver 470 (CUDA 11.4) runs CUDA 11.8 only under minor-version compatibility (a warning); CUDA 11.3 ships
    # with driver 465.19.01, so the cu113 builds run fully, and the matrix now has their arch list (sm_37..sm_86,
    # pytorch/builder release/1.12): 1.12.1+cu113 is the newest warning-free option. TF: 2.12-2.14 lack sm_86
    # (error), 2.11.1 runs it through PTX (a warning).
    ("470.82.01", "NVIDIA GeForce RTX 3090", "3.10", "linux", "1.12.1", "cu113", "2.11.1"),
    # A CUDA 13.0 driver and Blackwell: 2.15.0 has only cu132 (13.2 runs only under minor-version compatibility
    # on 580.65.06, a warning); 2.14.1's PyPI cu130 is warning-free. TF 2.19+ is a known failure on sm_120.
    ("580.65.06", "NVIDIA GeForce RTX 5090", "3.12", "linux", "2.14.1", "cu130", "2.18.1"),
    # Pascal on 550.54.14: cu126 needs 560.28.03 for full support (a warning); 2.6.0's PyPI cu124 build is clean.
    # TF 2.18+ (CUDA 12.5) is minor-version only on 550.54.14; 2.17.1 (CUDA 12.3) is clean.
    ("550.54.14", "NVIDIA GeForce GTX 1080", "3.11", "linux", "2.6.0", "cu124", "2.17.1"),
    # Kepler: driver 535 no longer drives it, answered for R470; the cu102 build of 1.12.1 runs there fully.
    ("535.104.05", "Tesla K80", "3.9", "linux", "1.12.1", "cu102", "2.11.1"),
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
    # Issue 13: 2.1-2.7 have cu118 builds (≥ 450.80.02 under minor-version compatibility); what blocks 2.7 is its
    # unknown arch list, and only 2.8+ (no cu118 build) need the CUDA 12 driver.
    assert whys["torch 2.8.0 to 2.14.1"] == "needs driver ≥ 525.60.13 (CUDA 12.x)"
    assert "its compiled architectures are unknown to the matrix" in whys["torch 2.7.0 to 2.7.1"]
    assert "580.65.06" in whys["torch 2.15.0"]
    assert whys["tensorflow 2.15.0 and newer"] == "needs driver ≥ 525.60.13 (CUDA 12.x)"


def test_pypi_default_gets_plain_pip_command(matrix) -> None:  # type: ignore[no-untyped-def]
    s = _s(matrix, driver="580.65.06", gpu="NVIDIA GeForce RTX 5090", python="3.12")
    assert s.torch is not None and s.torch.command == "pip install torch==2.14.1"
    assert s.torch.wheel == "pypi-default" and s.torch.changes == {"torch": "2.14.1+cu130"}


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
    assert set(doc["torch"]) >= {"version", "variant", "command", "reason", "kind", "changes", "wheel"}
    bad = run("suggest", "--driver", "x", "--no-probe")
    assert bad.code == 2 and bad.err.count("\n") == 1


def test_driver_branch_that_no_longer_drives_the_gpu(matrix) -> None:  # type: ignore[no-untyped-def]
    # NVIDIA's architecture matrix: Kepler's last driver branch is R470.
    s = _s(matrix, driver="535.104.05", gpu="Tesla K80", python="3.9")
    assert s.blocked[0]["what"] == "every GPU build" and "R470" in s.blocked[0]["why"]
    assert s.torch is not None and s.torch.variant == "cu102" and "R470" in s.torch.reason
