"""torch releases before 1.12 (issue 16, "Data"): their CUDA variants and Python range drive real verdicts.

Facts asserted here and where they were read (see also the rows' comments in matrix/pytorch.yaml):
- Python ranges: the CPython tags of the manylinux x86_64 wheels on PyPI (pypi.org/project/torch/<v>/#files),
  e.g. 1.4.0 ships cp27mu/cp27m, cp35m .. cp37m and cp38 wheels and nothing for 3.9; 1.7.1 is the first with cp39.
- PyPI's default build: torch/version.py of those wheels (1.0.0: cuda '9.0.176'; 1.4.0: '10.1';
  1.8.1: __version__ '1.8.1+cu102').
- The cu102 wheel's arch list: the string compiled into torch/lib/libtorch_python.so of the PyPI 1.8.1 wheel
  ("sm_37 sm_50 sm_60 sm_70"), so an sm_86 card (RTX 3090) has no kernels.
- The cu111 build of 1.8.1: PyTorch's previous-versions page (v1.8.1 wheels: cu111, cu102, cu101, cpu).
- CUDA 11.1 GA needs driver 455.23; CUDA 11.x minor-version compatibility starts at 450.80.02 (cuda.yaml, NVIDIA
  CUDA Toolkit release notes, tables 2 and 3).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from packaging.version import Version

from compat.matrix import Matrix


def _check(run: Any, *args: str) -> tuple[int, dict[str, Any]]:
    r = run("check", "--os", "linux", "--json", *args)
    return r.code, json.loads(r.out)


def _ids(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in doc["findings"]}


@pytest.mark.parametrize(
    ("version", "python", "default", "cuda"),
    [
        ("1.0.0", ("2.7", "3.5", "3.6", "3.7"), "cu90", "9.0"),
        ("1.2.0", ("2.7", "3.5", "3.6", "3.7"), "cu100", "10.0"),
        ("1.4.0", ("2.7", "3.5", "3.6", "3.7", "3.8"), "cu101", "10.1"),
        ("1.5.0", ("3.5", "3.6", "3.7", "3.8"), "cu102", "10.2"),
        ("1.7.1", ("3.6", "3.7", "3.8", "3.9"), "cu102", "10.2"),
        ("1.11.0", ("3.7", "3.8", "3.9", "3.10"), "cu102", "10.2"),
    ],
)
def test_old_rows_carry_the_pypi_wheels_facts(
    matrix: Matrix, version: str, python: tuple[str, ...], default: str, cuda: str
) -> None:
    rel = matrix.torch_release(Version(version))
    assert rel is not None
    assert rel.python == python
    assert rel.pypi_default == default
    var = rel.variant(default)
    assert var is not None and var.cuda == cuda
    assert rel.pypi_requires == {}  # CUDA libraries bundled in the wheel before 1.13


def test_every_minor_from_1_0_to_1_11_is_listed(matrix: Matrix) -> None:
    minors = {(r.version.major, r.version.minor) for r in matrix.torch if r.version < Version("1.12")}
    assert minors == {(1, m) for m in range(12)}
    assert matrix.torch_release(Version("1.10.2")) is not None
    assert (
        matrix.torch_release(Version("1.8.2")) is None
    )  # LTS: not on PyPI (download.pytorch.org/whl/lts only)


def test_cu111_build_of_1_8_1_on_a_driver_too_old_for_cuda_11(run: Any) -> None:
    code, doc = _check(run, "--torch", "1.8.1+cu111", "--driver", "440.33", "--python", "3.8")
    assert code == 1
    f = _ids(doc)["driver.cuda"]
    assert f["severity"] == "error"
    assert "455.23" in f["message"] and "450.80.02" in f["message"]
    # the fix offers the cu102 build of the same release, which the previous-versions page lists
    assert any(x["changes"].get("torch") == "1.8.1+cu102" for x in f["fixes"])


def test_cu111_build_of_1_8_1_on_the_cuda_11_floor_is_a_warning(run: Any) -> None:
    code, doc = _check(run, "--torch", "1.8.1+cu111", "--driver", "450.80.02", "--python", "3.8")
    assert code == 0
    f = _ids(doc)["driver.cuda"]
    assert f["severity"] == "warning"  # minor-version compatibility: runs, with limits


def test_cu111_build_of_1_8_1_on_its_ga_driver_is_clean(run: Any) -> None:
    code, doc = _check(run, "--torch", "1.8.1+cu111", "--driver", "455.23", "--python", "3.8")
    assert code == 0
    assert "driver.cuda" not in _ids(doc)


@pytest.mark.parametrize(
    ("torch", "python", "listed"),
    [
        ("1.4.0", "3.9", "2.7, 3.5, 3.6, 3.7, 3.8"),
        ("1.0.0", "3.8", "2.7, 3.5, 3.6, 3.7"),
        ("1.7.0", "3.9", "3.6, 3.7, 3.8"),
    ],
)
def test_python_without_wheels_is_an_error(run: Any, torch: str, python: str, listed: str) -> None:
    code, doc = _check(run, "--torch", torch, "--python", python)
    assert code == 1
    f = _ids(doc)["python.framework"]
    assert f["severity"] == "error"
    assert listed in f["message"]


def test_python_with_wheels_passes(run: Any) -> None:
    code, doc = _check(run, "--torch", "1.7.1", "--python", "3.9")
    assert code == 0
    assert "python.framework" not in _ids(doc)


def test_pypi_1_8_1_has_no_kernels_for_an_sm_86_card(run: Any) -> None:
    code, doc = _check(run, "--torch", "1.8.1", "--gpu", "RTX 3090", "--driver", "460.32.03")
    assert code == 1
    f = _ids(doc)["wheel.arch"]
    assert f["severity"] == "error" and "sm_86" in f["title"]


def test_a_cuda_label_the_release_never_had_is_an_error(run: Any) -> None:
    # torch 1.4.0 (January 2020) predates CUDA 11.1 (September 2020): there is no cu111 build of it
    code, doc = _check(run, "--torch", "1.4.0+cu111")
    assert code == 1
    assert _ids(doc)["torch.variant"]["severity"] == "error"


def test_windows_pypi_wheels_exist_from_1_7_and_are_cpu(run: Any, matrix: Matrix) -> None:
    # PyPI's win_amd64 wheels: none for 1.0.0 .. 1.6.0; 1.7.0 .. 1.11.0 report __version__ 'X+cpu', cuda None
    old = matrix.torch_release(Version("1.4.0"))
    new = matrix.torch_release(Version("1.8.1"))
    assert old is not None and old.variant(old.pypi_default_windows) is None
    assert new is not None and new.pypi_default_windows == "cpu"
    gpu = ("--gpu", "RTX 2080", "--driver", "441.22")
    r = run("check", "--os", "windows", "--json", "--torch", "1.8.1", *gpu)
    assert r.code == 1 and "framework.cpu-build" in _ids(json.loads(r.out))
    # a Windows torch 1.4.0 came from download.pytorch.org: its build is not assumed to be the CPU one
    r = run("check", "--os", "windows", "--json", "--torch", "1.4.0", *gpu)
    assert r.code == 0 and "framework.cpu-build" not in _ids(json.loads(r.out))
