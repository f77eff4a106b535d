"""Table-driven answers taken from the official tables the matrix cites.

Driver rows: NVIDIA CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions" and
Table 2 (minor-version compatibility), https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html
Architecture rows: CUDA release notes "Deprecated or Dropped Features" (Kepler gone in 12.0; Maxwell, Pascal,
Volta gone in 13.0) and the GPU table https://developer.nvidia.com/cuda-gpus.
TensorFlow rows: https://www.tensorflow.org/install/source#gpu (tested build configurations).
cuDNN rows: the cuDNN Support Matrix of each release.
"""

from __future__ import annotations

from typing import Optional

import pytest

from compat.checks.arch import TOOLKIT_ARCH as TOOLKIT_ARCH_ID
from compat.checks.arch import WHEEL_ARCH
from compat.checks.context import UNKNOWN_VERSION
from compat.checks.cudnn import CUDNN_ARCH, CUDNN_CUDA, CUDNN_DRIVER
from compat.checks.driver import DRIVER_CUDA as DRIVER_CUDA_ID
from compat.checks.driver import DRIVER_GPU as DRIVER_GPU_ID
from compat.checks.gpu import GPU_REQUIRED
from compat.checks.python import PYTHON_FRAMEWORK
from compat.checks.tensorflow import TF_CUDA as TF_CUDA_ID
from compat.checks.tensorflow import TF_CUDNN, TF_WINDOWS
from tests.core.helpers import check, severity, skipped

# (cuda, os, driver, expected severity of driver.cuda) — Table 3 / Table 2.
DRIVER_CUDA = [
    ("12.1", "linux", "530.30.02", None),  # Table 3: CUDA 12.1 GA >= 530.30.02
    ("12.1", "linux", "535.104.05", None),
    ("12.1", "linux", "525.60.13", "warning"),  # Table 2: 12.x floor 525.60.13 -> minor-version compat
    ("12.1", "linux", "520.61.05", "error"),
    ("12.1", "linux", "470.82.01", "error"),
    ("12.1", "windows", "531.14", None),  # Table 3: 12.1 GA Windows >= 531.14
    ("12.1", "windows", "528.33", "warning"),  # above the 527.41 Windows floor
    ("12.1", "windows", "527.27", "error"),
    ("11.8", "linux", "520.61.05", None),  # Table 3: 11.8 GA >= 520.61.05
    ("11.8", "linux", "450.80.02", "warning"),  # Table 2: 11.x floor 450.80.02
    ("11.8", "linux", "450.51.06", "error"),
    ("11.8", "windows", "520.06", None),
    ("11.8", "windows", "452.39", "warning"),
    ("11.8", "windows", "451.82", "error"),
    ("12.4.1", "linux", "550.54.15", None),  # 12.4 Update 1 >= 550.54.15
    ("12.4.1", "linux", "550.54.14", "warning"),
    ("12.4", "linux", "550.54.14", None),  # 12.4 GA >= 550.54.14
    ("12.8", "linux", "570.26", None),  # 12.8 GA >= 570.26 (Blackwell)
    ("12.8", "linux", "565.57.01", "warning"),
    ("12.9", "windows", "576.02", None),
    ("10.2", "linux", "440.33", None),  # 10.2.89 >= 440.33
    ("10.2", "linux", "418.39", "error"),  # no minor-version compatibility before CUDA 11
    ("10.0", "windows", "411.31", None),
    ("9.0", "linux", "384.81", None),
    ("9.0", "linux", "375.26", "error"),
    ("13.0", "linux", "580.65.06", None),  # 13.0 GA >= 580.65.06
    ("13.0", "linux", "575.57.08", "error"),  # an R575 driver cannot run CUDA 13 at all
    ("13.0.2", "linux", "580.82.07", "warning"),  # 13.0 Update 2 >= 580.95.05
    ("12.2.2", "linux", "535.104.05", None),  # 12.2 Update 2 >= 535.104.05
    ("12.2", "linux", "535.104.05", None),
]


@pytest.mark.parametrize(
    ("cuda", "os", "driver", "expected"), DRIVER_CUDA, ids=[f"cuda{c}-{o}-{d}" for c, o, d, _ in DRIVER_CUDA]
)
def test_driver_vs_cuda(matrix, cuda: str, os: str, driver: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, os=os, cuda=cuda, driver=driver)
    assert severity(report, DRIVER_CUDA_ID) == expected, report.to_json()["findings"]


def test_error_carries_the_required_driver(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, cuda="12.1", driver="470.82.01")
    f = next(f for f in report.findings if f.id == DRIVER_CUDA_ID)
    assert "530.30.02" in f.message and "525.60.13" in f.message
    assert any("530.30.02" in fx.text for fx in f.fixes)


def test_driver_check_skipped_without_driver(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, cuda="12.1")
    assert skipped(report, DRIVER_CUDA_ID) and not any(f.id == DRIVER_CUDA_ID for f in report.findings)


# (cuda, gpu or cc, expected severity of toolkit.arch) — release notes "Deprecated or Dropped Features".
TOOLKIT_ARCH = [
    ("12.0", "Tesla K80", "error"),  # Kepler (sm_37) removed in CUDA 12.0
    ("11.8", "Tesla K80", None),
    ("11.8", "3.5", None),
    ("12.4", "3.5", "error"),
    ("13.0", "Tesla V100-SXM2-16GB", "error"),  # Volta removed in CUDA 13.0
    ("12.9", "Tesla V100-SXM2-16GB", None),
    ("13.0", "Tesla P100-PCIE-16GB", "error"),  # Pascal removed in 13.0
    ("13.0", "NVIDIA GeForce GTX 1080", "error"),
    ("12.8", "NVIDIA GeForce GTX 1080", None),
    ("13.0", "Tesla T4", None),  # Turing stays
    ("11.7", "NVIDIA GeForce RTX 4090", "error"),  # sm_89 first in CUDA 11.8
    ("11.8", "NVIDIA GeForce RTX 4090", None),
    ("11.7", "NVIDIA H100 80GB HBM3", "error"),  # sm_90 first in 11.8
    ("11.8", "NVIDIA H100 80GB HBM3", None),
    ("12.6", "NVIDIA GeForce RTX 5090", "error"),  # sm_120 first in 12.8
    ("12.8", "NVIDIA GeForce RTX 5090", None),
    ("12.6", "NVIDIA B200", "error"),  # sm_100 first in 12.8
    ("12.8", "NVIDIA B200", None),
    ("11.0", "NVIDIA A100-SXM4-80GB", None),  # sm_80 first in 11.0
    ("10.2", "NVIDIA A100-SXM4-80GB", "error"),
    ("11.0", "NVIDIA GeForce RTX 3090", "error"),  # sm_86 first in 11.1
    ("11.1", "NVIDIA GeForce RTX 3090", None),
]


@pytest.mark.parametrize(
    ("cuda", "gpu", "expected"), TOOLKIT_ARCH, ids=[f"cuda{c}-{g}" for c, g, _ in TOOLKIT_ARCH]
)
def test_toolkit_vs_gpu(matrix, cuda: str, gpu: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    flags = {"cc": gpu} if gpu[0].isdigit() else {"gpu": gpu}
    report = check(matrix, cuda=cuda, **flags)  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    assert severity(report, TOOLKIT_ARCH_ID) == expected


# (tensorflow, cuda, cudnn, expected tensorflow.cuda, expected tensorflow.cudnn) — tested build configurations.
TF_CUDA = [
    ("2.15.0", "12.2", "8.9.7", None, None),  # tensorflow-2.15.0: CUDA 12.2, cuDNN 8.9
    ("2.15.0", "11.8", "8.9.7", "error", None),  # CUDA 11 libraries cannot serve a CUDA 12 build
    ("2.16.1", "12.3", "8.9.7", None, None),  # tensorflow-2.16.1: CUDA 12.3, cuDNN 8.9
    ("2.16.1", "12.1", "8.9.7", "warning", None),
    ("2.16.1", "12.3", "8.6.0", None, "error"),  # cuDNN minor older than the build's
    ("2.16.1", "12.3", "9.1.0", None, "error"),  # cuDNN major differs
    ("2.13.0", "11.8", "8.6.0", None, None),  # tensorflow-2.13.0: CUDA 11.8, cuDNN 8.6
    ("2.13.0", "11.8", "8.9.7", None, None),  # newer minor of the same major is fine
    ("2.13.0", "12.2", "8.6.0", "error", None),
    ("2.11.0", "11.2", "8.1.1", None, None),  # tensorflow-2.11.0: CUDA 11.2, cuDNN 8.1
    ("2.11.0", "11.8", "8.1.1", None, None),
    ("2.4.0", "11.0", "8.0.5", None, None),  # tensorflow-2.4.0: CUDA 11.0, cuDNN 8.0
    ("2.4.0", "10.1", "8.0.5", "error", None),
    ("2.3.0", "10.1", "7.6.5", None, None),  # tensorflow-2.3.0: CUDA 10.1, cuDNN 7.6
    ("2.3.0", "10.1", "8.0.5", None, "error"),
    ("2.18.0", "12.5", "9.3.0", None, None),  # tensorflow-2.18.0: CUDA 12.5, cuDNN 9.3
    ("2.18.0", "12.5", "8.9.7", None, "error"),
]


@pytest.mark.parametrize(
    ("tf", "cuda", "cudnn", "exp_cuda", "exp_cudnn"),
    TF_CUDA,
    ids=[f"tf{t}-cuda{c}-cudnn{d}" for t, c, d, _, _ in TF_CUDA],
)
def test_tensorflow_cuda_cudnn(
    matrix,
    tf: str,
    cuda: str,
    cudnn: str,
    exp_cuda: Optional[str],  # type: ignore[no-untyped-def]
    exp_cudnn: Optional[str],
) -> None:
    report = check(matrix, tensorflow=tf, cuda=cuda, cudnn=cudnn)
    assert severity(report, TF_CUDA_ID) == exp_cuda
    assert severity(report, TF_CUDNN) == exp_cudnn


@pytest.mark.parametrize(
    ("tf", "expected"), [("2.10.0", None), ("2.10.1", None), ("2.11.0", "error"), ("2.16.1", "error")]
)
def test_tensorflow_native_windows_gpu(matrix, tf: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    # "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows."
    report = check(matrix, os="windows", tensorflow=tf, gpu="NVIDIA GeForce RTX 3090")
    assert severity(report, TF_WINDOWS) == expected
    linux = check(matrix, os="linux", tensorflow=tf, gpu="NVIDIA GeForce RTX 3090")
    assert severity(linux, TF_WINDOWS) is None


# (framework, version, python, expected) — the wheels each release publishes on PyPI.
PYTHON = [
    ("tensorflow", "2.16.1", "3.12", None),
    ("tensorflow", "2.16.1", "3.13", "error"),
    ("tensorflow", "2.15.0", "3.12", "error"),
    ("tensorflow", "2.20.0", "3.13", None),
    ("tensorflow", "2.21.0", "3.9", "error"),
    ("tensorflow", "2.12.0", "3.11", None),
    ("tensorflow", "2.11.0", "3.11", "error"),
    ("tensorflow", "2.2.0", "3.8", None),
    ("tensorflow", "2.1.0", "3.8", "error"),
]


@pytest.mark.parametrize(
    ("fw", "ver", "py", "expected"), PYTHON, ids=[f"{f}{v}-py{p}" for f, v, p, _ in PYTHON]
)
def test_python_vs_framework(matrix, fw: str, ver: str, py: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, python=py, **{fw: ver})  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    assert severity(report, PYTHON_FRAMEWORK) == expected
    if expected:
        f = next(f for f in report.findings if f.id == PYTHON_FRAMEWORK)
        assert (
            f.fixes and (f.fixes[0].command or "").startswith("pip install")
        ) or "Use a Python" in f.fixes[0].text


# (cudnn, cuda, gpu cc, driver, expected cudnn.cuda, cudnn.arch, cudnn.driver) — cuDNN support matrices.
CUDNN = [
    ("9.0.0", "12.3", None, None, None, None, None),  # 9.0.0: CUDA 12.0-12.3 and 11.8
    ("9.0.0", "11.8", None, None, None, None, None),
    ("9.0.0", "10.2", None, None, "error", None, None),  # no CUDA 10 build
    ("8.9.6", "12.4", None, None, "warning", None, None),  # 8.9.6 lists CUDA 12.0-12.2
    ("9.17.0", "12.9", "7.0", None, None, "error", None),  # 9.17.0 supports SM 7.5 and newer
    ("9.17.0", "12.9", "7.5", None, None, None, None),
    ("9.5.0", "12.6", "12.0", None, None, "warning", None),  # 9.5.0 lists up to SM 9.0
    ("9.10.2", "12.8", "12.0", None, None, None, None),  # 9.10.2 for CUDA 12.8-12.9 lists SM 12.0
    ("9.0.0", "12.3", None, "520.61.05", None, None, "error"),  # needs r525.60.13 for CUDA 12
    ("9.0.0", "12.3", None, "525.60.13", None, None, None),
    ("8.9.5", "11.8", None, "450.80.02", None, None, None),
]


@pytest.mark.parametrize(
    ("cudnn", "cuda", "cc", "driver", "e_cuda", "e_arch", "e_drv"),
    CUDNN,
    ids=[f"cudnn{a}-cuda{b}-cc{c}-drv{d}" for a, b, c, d, *_ in CUDNN],
)
def test_cudnn(
    matrix,
    cudnn: str,
    cuda: str,
    cc: Optional[str],
    driver: Optional[str],
    e_cuda: Optional[str],  # type: ignore[no-untyped-def]
    e_arch: Optional[str],
    e_drv: Optional[str],
) -> None:
    report = check(matrix, cudnn=cudnn, cuda=cuda, cc=cc, driver=driver)
    assert severity(report, CUDNN_CUDA) == e_cuda
    assert severity(report, CUDNN_ARCH) == e_arch
    assert severity(report, CUDNN_DRIVER) == e_drv


# TensorFlow's compiled architectures (its .bazelrc release builds) vs the GPU.
TF_ARCH = [
    ("2.17.0", "Tesla K80", "error"),  # sm_60 and newer only
    ("2.17.0", "NVIDIA GeForce RTX 4090", None),  # sm_89 SASS
    ("2.16.1", "NVIDIA H100 80GB HBM3", "warning"),  # only compute_90 PTX for Hopper
    ("2.16.1", "NVIDIA A100-SXM4-80GB", None),
    ("2.14.0", "Tesla K80", None),  # still sm_35 (K80 is 3.7)
]


@pytest.mark.parametrize(("tf", "gpu", "expected"), TF_ARCH, ids=[f"tf{t}-{g}" for t, g, _ in TF_ARCH])
def test_tensorflow_archs(matrix, tf: str, gpu: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, tensorflow=tf, gpu=gpu), WHEEL_ARCH) == expected


def test_unknown_versions_are_info_not_errors(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch="9.9.9", tensorflow="9.9.0", driver="535.104.05")
    ids = {(f.id, f.severity) for f in report.findings}
    assert (UNKNOWN_VERSION, "info") in ids
    assert report.verdict == "ok"
    assert any("newer than the matrix" in f.title for f in report.findings)


def test_nothing_given_skips_everything_with_reasons(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix)
    assert report.findings == [] and report.verdict == "ok"
    assert {s.id for s in report.skipped} >= {DRIVER_CUDA_ID, TOOLKIT_ARCH_ID, WHEEL_ARCH, PYTHON_FRAMEWORK}
    assert all(s.reason for s in report.skipped)


def test_require_gpu_without_gpus(matrix) -> None:  # type: ignore[no-untyped-def]
    from compat.facts import Facts, make_fact
    from compat.resolver import resolve

    facts = Facts(values={"os": make_fact("os", "linux", "x")}, gpus=(), gpus_source="NVML: no NVIDIA driver")
    report = resolve(facts, matrix, require_gpu=True)
    assert severity(report, GPU_REQUIRED) == "error"
    assert severity(resolve(facts, matrix), GPU_REQUIRED) is None


# Only the driver's CUDA version known (nvidia-smi "CUDA Version: 11.4", a log's "found version 11040").
DRIVER_CUDA_ONLY = [
    ("12.1", "11.4", "error"),
    ("11.8", "11.4", "warning"),
    ("11.4", "11.4", None),
    ("12.4", "12.8", None),
    ("13.0", "12.9", "error"),
]


@pytest.mark.parametrize(
    ("cuda", "driver_cuda", "expected"),
    DRIVER_CUDA_ONLY,
    ids=[f"cuda{c}-drivercuda{d}" for c, d, _ in DRIVER_CUDA_ONLY],
)
def test_driver_cuda_version_only(matrix, cuda: str, driver_cuda: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    from compat.facts import Facts, make_fact
    from compat.resolver import resolve

    facts = Facts(
        values={
            "os": make_fact("os", "linux", "x"),
            "cuda": make_fact("cuda", cuda, "x"),
            "driver_cuda": make_fact("driver_cuda", driver_cuda, "log"),
        }
    )
    assert severity(resolve(facts, matrix), DRIVER_CUDA_ID) == expected


# NVIDIA "CUDA Toolkit, Driver, and Architecture Matrix": last driver branch per architecture
# (Kepler R470; Maxwell, Pascal, Volta R580; Fermi R390).
DRIVER_GPU = [
    ("470.82.01", "Tesla K80", None),
    ("535.104.05", "Tesla K80", "error"),
    ("580.65.06", "Tesla V100-SXM2-16GB", None),
    ("590.44.01", "Tesla V100-SXM2-16GB", "error"),
    ("590.44.01", "NVIDIA GeForce GTX 1080", "error"),
    ("590.44.01", "Tesla T4", None),
    ("595.45.04", "NVIDIA H100 80GB HBM3", None),
]


@pytest.mark.parametrize(
    ("driver", "gpu", "expected"), DRIVER_GPU, ids=[f"{d}-{g}" for d, g, _ in DRIVER_GPU]
)
def test_driver_branch_supports_gpu(matrix, driver: str, gpu: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, driver=driver, gpu=gpu)
    assert severity(report, DRIVER_GPU_ID) == expected
    if expected:
        f = next(f for f in report.findings if f.id == DRIVER_GPU_ID)
        assert "R470" in f.fixes[0].text or "R580" in f.fixes[0].text
