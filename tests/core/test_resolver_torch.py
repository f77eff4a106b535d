"""PyTorch answers taken from the published wheels (the arch lists `torch.cuda.get_arch_list()` returns, the
nvidia-* pins in each wheel's METADATA), PyTorch's RELEASE.md compatibility matrix, and NVIDIA's tables."""

from __future__ import annotations

from typing import Optional

import pytest

from compat.checks.arch import WHEEL_ARCH as WHEEL_ARCH_ID
from compat.checks.driver import DRIVER_CUDA
from compat.checks.frameworks import CPU_BUILD
from compat.checks.python import PYTHON_FRAMEWORK
from compat.checks.torch import TORCH_VARIANT
from tests.core.helpers import by_id, check, severity, skipped

# (torch, gpu, expected wheel.arch) — SASS runs on the same major with an equal or higher minor; PTX JITs upward.
WHEEL_ARCH = [
    ("2.6.0", "NVIDIA GeForce RTX 5090", "error"),  # cu124: sm_50..sm_90, no sm_120: "no kernel image"
    ("2.7.0", "NVIDIA GeForce RTX 5090", "error"),  # PyPI default cu126 has no sm_120
    ("2.7.0+cu128", "NVIDIA GeForce RTX 5090", None),  # cu128 adds sm_100, sm_120
    ("2.8.0", "NVIDIA GeForce RTX 5090", None),  # PyPI default cu128
    ("2.1.0", "Tesla K80", "error"),  # cu121 starts at sm_50
    ("2.1.0+cu118", "Tesla K80", None),  # cu118 keeps sm_37
    ("2.8.0", "NVIDIA GeForce GTX 1080", "error"),  # cu128 2.8: sm_70 and newer
    ("2.8.0+cu126", "NVIDIA GeForce GTX 1080", None),  # sm_60 SASS runs on 6.1
    ("2.0.0", "NVIDIA H100 80GB HBM3", "error"),  # cu117 tops at sm_86, no PTX: sm_90 not compatible
    ("2.0.0+cu118", "NVIDIA H100 80GB HBM3", None),
    ("2.5.1", "NVIDIA GeForce RTX 4090", None),  # sm_86 SASS runs on 8.9
    ("2.5.1", "NVIDIA B200", "error"),
    ("2.9.0+cu130", "NVIDIA B200", None),
    ("2.11.0", "Tesla V100-SXM2-16GB", "error"),  # cu130 drops Volta
    ("2.11.0+cu126", "Tesla V100-SXM2-16GB", None),
    ("2.13.0", "Tesla T4", None),
    ("1.12.1", "NVIDIA A100-SXM4-80GB", "error"),  # cu102 tops at sm_70: SASS of major 7 cannot run on 8.0
]


@pytest.mark.parametrize(
    ("torch", "gpu", "expected"), WHEEL_ARCH, ids=[f"torch{t}-{g}" for t, g, _ in WHEEL_ARCH]
)
def test_torch_wheel_arch(matrix, torch: str, gpu: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch=torch, gpu=gpu)
    assert severity(report, WHEEL_ARCH_ID) == expected


def test_no_kernel_image_message_and_fix(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch="2.6.0", gpu="NVIDIA GeForce RTX 5090", driver="570.124.06")
    f = by_id(report, WHEEL_ARCH_ID)[0]
    assert "no kernel image is available" in f.message
    assert "sm_120 is not compatible with the current PyTorch installation" in f.message
    # No 2.6.0 variant has sm_120: the fix is a newer release that does, on a CUDA this driver runs.
    cmds = [x.command for x in f.fixes if x.command]
    assert cmds and "download.pytorch.org/whl/cu128" in cmds[0] and "torch==2." in cmds[0]


def test_ptx_jit_warning_and_error(matrix) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow 2.16.1 ships only compute_90 PTX for Hopper.
    ok = check(matrix, tensorflow="2.16.1", gpu="NVIDIA H100 80GB HBM3", driver="550.54.15")
    assert severity(ok, WHEEL_ARCH_ID) == "warning"
    # Under minor-version compatibility the driver cannot JIT PTX from a newer toolkit.
    bad = check(matrix, tensorflow="2.16.1", gpu="NVIDIA H100 80GB HBM3", driver="535.104.05")
    assert severity(bad, WHEEL_ARCH_ID) == "error"


# (torch, os, driver, expected driver.cuda) — the variant's CUDA vs Table 3/2.
TORCH_DRIVER = [
    ("2.1.0+cu121", "linux", "470.82.01", "error"),
    ("2.1.0+cu118", "linux", "470.82.01", "warning"),  # 11.8 needs 520.61.05; 470 > the 450.80.02 floor
    ("2.7.0", "linux", "535.104.05", "warning"),  # cu126: 12.6 GA needs 560.28.03
    ("2.7.0", "linux", "560.28.03", None),
    ("2.11.0", "linux", "575.57.08", "error"),  # cu130: CUDA 13 needs R580
    ("2.11.0", "linux", "580.65.06", None),
    ("2.4.0", "windows", "470.82.01", None),  # PyPI's Windows wheel is CPU-only: no CUDA runtime
    ("2.4.0+cu121", "windows", "531.14", None),
    ("2.4.0+cu121", "windows", "527.41", "warning"),
]


@pytest.mark.parametrize(
    ("torch", "os", "driver", "expected"),
    TORCH_DRIVER,
    ids=[f"torch{t}-{o}-{d}" for t, o, d, _ in TORCH_DRIVER],
)
def test_torch_driver(matrix, torch: str, os: str, driver: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, torch=torch, os=os, driver=driver), DRIVER_CUDA) == expected


def test_old_driver_fix_offers_a_variant_it_runs(matrix) -> None:  # type: ignore[no-untyped-def]
    # Issue 13: a plain `torch==2.1.0` over an installed 2.1.0+cu121 is "Requirement already satisfied"; the fix
    # reinstalls the exact local variant.
    f = by_id(check(matrix, torch="2.1.0+cu121", driver="470.82.01"), DRIVER_CUDA)[0]
    assert (
        f.fixes[0].command
        == "pip install --force-reinstall torch==2.1.0+cu118 --index-url https://download.pytorch.org/whl/cu118"
    )
    assert f.fixes[0].change_map == {"torch": "2.1.0+cu118"} and f.fixes[0].kind == "shell"


# (torch, python, expected) — cp tags of the wheels on PyPI.
TORCH_PYTHON = [
    ("2.5.0", "3.8", "error"),
    ("2.4.0", "3.8", None),
    ("2.15.0", "3.10", "error"),
    ("2.9.0", "3.14", None),
    ("2.2.0", "3.12", None),
    ("2.1.0", "3.12", "error"),
    ("1.13.1", "3.11", None),
    ("1.12.1", "3.11", "error"),
]


@pytest.mark.parametrize(
    ("torch", "py", "expected"), TORCH_PYTHON, ids=[f"torch{t}-py{p}" for t, p, _ in TORCH_PYTHON]
)
def test_torch_python(matrix, torch: str, py: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, torch=torch, python=py), PYTHON_FRAMEWORK) == expected


# Which variant a bare version means (PyPI's Linux wheel, from its nvidia-* pins).
PYPI_DEFAULT = [
    ("1.12.1", "cu102"),
    ("2.0.1", "cu117"),
    ("2.1.0", "cu121"),
    ("2.4.0", "cu121"),
    ("2.5.1", "cu124"),
    ("2.6.0", "cu124"),
    ("2.7.0", "cu126"),
    ("2.8.0", "cu128"),
    ("2.11.0", "cu130"),
]


@pytest.mark.parametrize(("torch", "tag"), PYPI_DEFAULT, ids=[t for t, _ in PYPI_DEFAULT])
def test_torch_bare_version_is_pypi_default(matrix, torch: str, tag: str) -> None:  # type: ignore[no-untyped-def]
    f = by_id(check(matrix, torch=torch), TORCH_VARIANT)
    assert f and f[0].severity == "info" and f"the {tag} build" in f[0].title


def test_unknown_variant_is_an_error(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch="2.5.1+cu999")
    assert severity(report, TORCH_VARIANT) == "error"
    assert "cu124" in by_id(report, TORCH_VARIANT)[0].message


def test_cpu_build_with_gpu(matrix) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, torch="2.5.1+cpu", gpu="RTX 4090"), CPU_BUILD) == "error"
    assert severity(check(matrix, torch="2.5.1", os="windows", gpu="RTX 4090"), CPU_BUILD) == "error"
    assert severity(check(matrix, torch="2.5.1+cpu", require_gpu=True), CPU_BUILD) == "error"
    no_gpu_known = check(matrix, torch="2.5.1+cpu")
    assert severity(no_gpu_known, CPU_BUILD) is None and skipped(no_gpu_known, CPU_BUILD)


def test_one_root_cause_one_error(matrix) -> None:  # type: ignore[no-untyped-def]
    # TF 2.17 on a Maxwell card: wheel.arch names it; the matching known issue must not repeat it.
    report = check(matrix, tensorflow="2.17.0", cc="5.2")
    errors = [f for f in report.findings if f.severity == "error"]
    assert [f.id for f in errors] == [WHEEL_ARCH_ID]


def test_cuda_wheel_on_macos_is_an_error(matrix) -> None:  # type: ignore[no-untyped-def]
    # PyTorch's "Get started" matrix: macOS binaries are CPU/MPS only.
    assert severity(check(matrix, torch="2.5.1+cu124", os="macos"), TORCH_VARIANT) == "error"
    assert severity(check(matrix, torch="2.5.1", os="macos"), TORCH_VARIANT) is None
