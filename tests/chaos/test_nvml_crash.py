"""Issue 19, item 1: a libnvidia-ml.so.1 that segfaults, aborts, hangs or lies is a finding, never a crash.

On main these cases exit 139/134 with no output: NVML ran inside compat's own process (and inside the
training script that called compat.guard()). The fakes are compiled from fake_nvml.c by the test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.chaos.harness import Run, assert_contract, run

BARE_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
DOCTOR = ["doctor", "--no-smoke", "--timeout", "1", "--python", BARE_PYTHON]


def _doctor(lib: Path, *extra: str) -> Run:
    return run([*DOCTOR, *extra], env={"LD_LIBRARY_PATH": str(lib)})


def _nvml_finding(r: Run) -> dict[str, object]:
    doc = json.loads(r.out)
    found = [f for f in doc["findings"] if f["id"] == "driver.nvml"]
    assert found, doc["findings"]
    return found[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("variant", ["segv", "abort"])
def test_doctor_reports_a_crashing_driver_library(fake_nvml: dict[str, Path], variant: str) -> None:
    r = _doctor(fake_nvml[variant], "--json")
    assert_contract(r, codes=(1,))
    f = _nvml_finding(r)
    assert f["severity"] == "error"
    assert "the NVIDIA driver library crashed" in str(f["message"])
    assert ("SIGSEGV" if variant == "segv" else "SIGABRT") in str(f["message"])


def test_doctor_text_names_the_crash(fake_nvml: dict[str, Path]) -> None:
    r = _doctor(fake_nvml["segv"])
    assert_contract(r, codes=(1,))
    assert "The NVIDIA driver library crashed" in r.text


def test_doctor_bounds_a_hanging_driver_library(fake_nvml: dict[str, Path]) -> None:
    r = _doctor(fake_nvml["hang"], "--json")
    assert_contract(r, codes=(1,), cap_s=30)
    f = _nvml_finding(r)
    assert "hung" in str(f["title"])


def test_doctor_survives_a_lying_driver_library(fake_nvml: dict[str, Path]) -> None:
    r = _doctor(fake_nvml["garbage"], "--json")
    assert_contract(r, codes=(0, 1))
    doc = json.loads(r.out)
    assert doc["schema_version"] == 1


@pytest.mark.parametrize("variant", ["segv", "abort"])
def test_suggest_survives_a_crashing_driver_library(fake_nvml: dict[str, Path], variant: str) -> None:
    r = run(["suggest", "--json"], env={"LD_LIBRARY_PATH": str(fake_nvml[variant])})
    assert_contract(r, codes=(0, 1))
    assert json.loads(r.out)["schema_version"] == 1


def test_explain_with_doctor_survives_a_crashing_driver_library(fake_nvml: dict[str, Path]) -> None:
    log = b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    r = run(
        ["explain", "--with-doctor", "--json", "-"],
        env={"LD_LIBRARY_PATH": str(fake_nvml["segv"])},
        input=log,
        cap_s=60,
    )
    assert_contract(r, codes=(0, 1), cap_s=60)
    assert json.loads(r.out)["schema_version"] == 1


GUARD_SCRIPT = """
import sys, compat
try:
    compat.guard()
except compat.IncompatibleEnvironment as exc:
    print("INCOMPATIBLE", exc)
    sys.exit(1)
print("OK")
"""


@pytest.mark.parametrize("variant", ["segv", "abort"])
def test_guard_cold_path_survives_a_crashing_driver_library(fake_nvml: dict[str, Path], variant: str) -> None:
    r = run(
        [sys.executable, "-c", GUARD_SCRIPT],
        env={"LD_LIBRARY_PATH": str(fake_nvml[variant])},
        python=False,
    )
    assert_contract(r, codes=(1,))
    assert "INCOMPATIBLE" in r.text and "the NVIDIA driver library crashed" in r.text


def test_guard_warn_mode_only_warns_about_a_crashing_driver_library(fake_nvml: dict[str, Path]) -> None:
    r = run(
        [sys.executable, "-W", "always", "-c", GUARD_SCRIPT],
        env={"LD_LIBRARY_PATH": str(fake_nvml["segv"]), "COMPAT_GUARD": "warn"},
        python=False,
    )
    assert_contract(r, codes=(0,))
    assert "OK" in r.text and "the NVIDIA driver library crashed" in r.err.decode()
