"""Edge inputs of the resolver: local labels that are not cuXXX, dev builds, free-threaded Python, Tegra
binary compatibility, CUDA 11.0's own driver, mixed GPUs and checks that must be skipped (never silently passed).

Sources: CUDA C Programming Guide "Binary Compatibility" (cubin X.y runs on X.z, z >= y; "Binary compatibility is
supported only for the desktop. It is not supported for Tegra. Also, the binary compatibility between desktop and
Tegra is not supported."), https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility;
CUDA Toolkit Release Notes Table 3 and the footnote to Table 2 ("CUDA 11.0 was released with an earlier driver
version, but by upgrading to Tesla Recommended Drivers 450.80.02 (Linux) / 452.39 (Windows), minor version
compatibility is possible across the CUDA 11.x family"),
https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html;
PyTorch wheel local labels (+cpu.cxx11.abi, +rocmX.Y, +xpu) on https://download.pytorch.org/whl/torch/.
"""

from __future__ import annotations

from typing import Optional

import pytest

from compat.checks.arch import WHEEL_ARCH
from compat.checks.context import build_context
from compat.checks.cudnn import CUDNN_ARCH, CUDNN_DRIVER
from compat.checks.driver import DRIVER_CUDA
from compat.checks.frameworks import CPU_BUILD
from compat.checks.gpu import GPU_REQUIRED
from compat.checks.python import PYTHON_FRAMEWORK
from compat.checks.rules import TEGRA_CCS, arch_support
from compat.checks.tensorflow import TF_WINDOWS as TF_WINDOWS_ID
from compat.checks.torch import TORCH_VARIANT
from compat.facts import Facts, Gpu, apply_flags, make_fact
from compat.resolver import resolve
from compat.suggest import suggest
from compat.versions import CC, parse_arch
from tests.core.helpers import by_id, check, severity, skipped

# (torch, extra flags, check id, expected severity) — local labels other than cuXXX and non-release versions.
LOCAL_LABELS = [
    # A CPU wheel built with the new C++ ABI is a CPU wheel: the variant exists (whl/cpu-cxx11-abi).
    ("2.5.1+cpu.cxx11.abi", {}, TORCH_VARIANT, None),
    ("2.5.1+cpu.cxx11.abi", {"gpu": "NVIDIA GeForce RTX 4090"}, CPU_BUILD, "error"),
    # ROCm / XPU wheels exist on download.pytorch.org but are not listed in the matrix: no "no such build" error.
    ("2.5.1+rocm6.2", {}, TORCH_VARIANT, None),
    ("2.5.1+xpu", {}, TORCH_VARIANT, None),
    # ... but neither can use an NVIDIA GPU.
    ("2.5.1+rocm6.2", {"gpu": "NVIDIA A100-SXM4-80GB"}, CPU_BUILD, "error"),
    ("2.5.1+xpu", {"gpu": "NVIDIA A100-SXM4-80GB"}, CPU_BUILD, "error"),
    # NGC's torch carries a git hash as local label: a CUDA build, never "CPU-only".
    ("2.10.0a0+b4e4ee81d3", {"gpu": "NVIDIA H100 80GB HBM3"}, CPU_BUILD, None),
    # A nightly's +cu128 label names its CUDA runtime even though the release is not in the matrix.
    ("2.8.0.dev20250101+cu128", {"driver": "470.82.01"}, DRIVER_CUDA, "error"),
    ("2.8.0.dev20250101+cu128", {"driver": "560.35.03"}, DRIVER_CUDA, "warning"),
    ("2.8.0.dev20250101+cu128", {"driver": "570.86.15"}, DRIVER_CUDA, None),
    ("2.99.0+cu130", {"driver": "535.104.05"}, DRIVER_CUDA, "error"),  # CUDA 13.x needs >= 580
]


@pytest.mark.parametrize(
    ("torch", "flags", "check_id", "expected"),
    LOCAL_LABELS,
    ids=[f"{t}-{c}-{'-'.join(f.values())}" for t, f, c, _ in LOCAL_LABELS],
)
def test_torch_local_labels(
    matrix,
    torch: str,
    flags: dict[str, str],
    check_id: str,  # type: ignore[no-untyped-def]
    expected: Optional[str],
) -> None:
    report = check(matrix, torch=torch, **flags)  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    assert severity(report, check_id) == expected, report.to_json()["findings"]


def test_nightly_cuda_from_label_is_checked_not_skipped(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch="2.8.0.dev20250101+cu128", driver="470.82.01")
    f = by_id(report, DRIVER_CUDA)[0]
    assert "12.8" in f.title
    assert not skipped(report, DRIVER_CUDA)


def test_unknown_release_skip_names_the_framework(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, torch="2.7.0rc1", driver="570.86.15")
    reasons = [s.reason for s in report.skipped if s.id == DRIVER_CUDA]
    assert reasons and "2.7.0rc1" in reasons[0]


# (python, torch, expected python.framework) — free-threaded CPython ("3.13t") has its own wheels (cp313t).
FREE_THREADED = [
    ("3.13t", "2.5.1", "error"),  # 2.5.1 has cp313 but no cp313t wheels
    ("3.13", "2.5.1", None),
    ("3.13t", "2.6.0", "error"),
    ("3.13t", "2.7.0", None),  # the first release the matrix lists cp313t wheels for
    ("3.13t", "2.12.1", "error"),  # 2.12.1 has no cp313t wheel on PyPI
    ("3.14t", "2.12.1", None),
]


@pytest.mark.parametrize(
    ("python", "torch", "expected"), FREE_THREADED, ids=[f"{p}-{t}" for p, t, _ in FREE_THREADED]
)
def test_free_threaded_python(matrix, python: str, torch: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, torch=torch, python=python), PYTHON_FRAMEWORK) == expected


def test_suggest_free_threaded_python(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = apply_flags(
        Facts(values={"os": make_fact("os", "linux", "--os")}),
        {"python": "3.13t", "driver": "570.86.15", "cc": "8.6"},
    )
    s = suggest(facts, matrix)
    assert s.torch is not None
    rel = next(r for r in matrix.torch if r.raw == s.torch.version)
    assert "3.13t" in rel.python


# (archs, cc, expected) — Programming Guide "Binary Compatibility": no cubin compatibility on or with Tegra.
TEGRA = [
    ("sm_86", "8.7", "none"),  # Jetson Orin cannot run desktop Ampere SASS
    ("sm_86 compute_86", "8.7", "ptx"),
    ("sm_87", "8.7", "sass"),
    ("sm_70", "7.2", "none"),  # Jetson Xavier
    ("sm_72", "7.2", "sass"),
    ("sm_87", "8.9", "none"),  # Tegra SASS does not run on a desktop GPU either
    ("sm_86", "8.9", "sass"),  # desktop to desktop: X.y runs on X.z, z >= y
    ("sm_90a", "9.0", "sass"),
    ("sm_90a", "10.0", "none"),
]


@pytest.mark.parametrize(("archs", "cc", "expected"), TEGRA, ids=[f"{a}-{c}" for a, c, _ in TEGRA])
def test_tegra_binary_compatibility(archs: str, cc: str, expected: str) -> None:
    major, minor = (int(x) for x in cc.split("."))
    assert arch_support(tuple(parse_arch(a) for a in archs.split()), CC(major, minor))[0] == expected


def test_every_jetson_in_the_matrix_is_tegra(matrix) -> None:  # type: ignore[no-untyped-def]
    for g in matrix.gpus:
        if g.segment == "jetson":
            assert g.cc in TEGRA_CCS, g.name


def test_desktop_wheel_on_jetson_orin(matrix) -> None:  # type: ignore[no-untyped-def]
    # torch 2.5.1+cu124 ships sm_50..sm_90 SASS for desktop GPUs and no PTX: nothing runs on Orin (8.7).
    assert severity(check(matrix, torch="2.5.1+cu124", cc="8.7"), WHEEL_ARCH) == "error"


# (cuda, os, driver, expected driver.cuda) — Table 3 lists CUDA 11.0.2 GA at >= 450.51.05 / 451.48 and
# 11.0.3 at >= 450.51.06 / 451.82, below the 11.x minor-version floor (450.80.02 / 452.39); the footnote says
# 11.0 was released with that earlier driver.
CUDA_11_0 = [
    ("11.0", "linux", "450.51.05", None),
    ("11.0.3", "linux", "450.51.06", None),
    ("11.0.3", "linux", "450.51.05", "error"),
    ("11.0", "linux", "440.33.01", "error"),
    ("11.0", "windows", "451.48", None),
    ("11.1", "linux", "450.51.06", "error"),  # 11.1 needs the 450.80.02 floor at least
]


@pytest.mark.parametrize(
    ("cuda", "os", "driver", "expected"), CUDA_11_0, ids=[f"cuda{c}-{o}-{d}" for c, o, d, _ in CUDA_11_0]
)
def test_cuda_11_0_with_its_own_driver(
    matrix,
    cuda: str,
    os: str,
    driver: str,  # type: ignore[no-untyped-def]
    expected: Optional[str],
) -> None:
    assert severity(check(matrix, os=os, cuda=cuda, driver=driver), DRIVER_CUDA) == expected


def test_ptx_with_a_driver_too_old_for_the_runtime_is_one_error(matrix) -> None:  # type: ignore[no-untyped-def]
    # TF 2.15 (CUDA 12.2) has compute_80 PTX for sm_86; driver 470 cannot run CUDA 12 at all: that is the one
    # error (driver.cuda); the PTX JIT remark stays a warning instead of a second error for the same cause.
    report = check(matrix, tensorflow="2.15.0", cc="8.6", driver="470.82.01")
    assert severity(report, DRIVER_CUDA) == "error"
    assert severity(report, WHEEL_ARCH) == "warning"
    # Under minor-version compatibility the PTX JIT failure is its own error.
    assert severity(check(matrix, tensorflow="2.15.0", cc="8.6", driver="525.60.13"), WHEEL_ARCH) == "error"


def _snapshot_facts(*gpus: tuple[str, str], **values: str) -> Facts:
    vals = {k: make_fact(k, v, "snapshot") for k, v in values.items()}
    return Facts(
        values=vals, gpus=tuple(Gpu(n, c, "nvml", i) for i, (n, c) in enumerate(gpus)), gpus_source="nvml"
    )


def test_known_issue_for_one_gpu_is_not_hidden_by_an_error_on_another(matrix) -> None:  # type: ignore[no-untyped-def]
    # Tesla M60 (5.2) has no kernels in TF 2.19 (wheel.arch error, which also covers tf217-no-maxwell); the
    # RTX 5090 (12.0) hits a different cause, tf-blackwell-cc120, which must still be reported.
    facts = _snapshot_facts(
        ("Tesla M60", "5.2"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
        os="linux",
        driver="570.86.15",
        tensorflow="2.19.0",
    )
    report = resolve(facts, matrix)
    ids = {f.id for f in report.findings if f.severity == "error"}
    assert "known.tf-blackwell-cc120" in ids
    assert "known.tf217-no-maxwell" not in ids


# cuDNN checks that could not run are listed in "skipped" with a reason.
CUDNN_SKIPS = [
    (
        {"cudnn": "9.10.2", "cc": "8.6", "driver": "535.104.05"},
        (CUDNN_ARCH, CUDNN_DRIVER),
    ),  # two CUDA majors
    (
        {"cudnn": "9.99.0", "cuda": "12.4", "cc": "8.6", "driver": "535.104.05"},
        (CUDNN_ARCH, CUDNN_DRIVER),
    ),
    (
        {"cudnn": "9.20.0", "cuda": "12.4", "cc": "8.6", "driver": "535.104.05"},
        (CUDNN_ARCH, CUDNN_DRIVER),
    ),
]


@pytest.mark.parametrize(("flags", "ids"), CUDNN_SKIPS, ids=[f["cudnn"] for f, _ in CUDNN_SKIPS])
def test_cudnn_checks_without_data_are_skipped(matrix, flags: dict[str, str], ids: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, **flags)  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    for check_id in ids:
        assert skipped(report, check_id) or by_id(report, check_id), (check_id, report.to_json()["skipped"])
        assert skipped(report, check_id), check_id


def test_require_gpu_with_unknown_gpus_is_skipped(matrix) -> None:  # type: ignore[no-untyped-def]
    report = check(matrix, require_gpu=True, torch="2.6.0")
    assert skipped(report, GPU_REQUIRED)


def test_suggest_cpu_reason_reads(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = apply_flags(Facts(values={"os": make_fact("os", "macos", "--os")}), {"python": "3.12"})
    s = suggest(facts, matrix)
    assert s.torch is not None and s.torch.variant == "cpu"
    assert "whose cpu build and" not in s.torch.reason


# (cuda, cc, driver, expected cudnn.arch, expected cudnn.driver) for cuDNN 9.10.2, whose support matrix has two
# CUDA 12.x rows that both list 12.8: "12.8-12.9, driver >= 570.26, SM up to 12.0" and "12.0-12.9, driver
# >= 525.60.13, SM up to 9.0" (https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html).
CUDNN_9_10_2 = [
    ("12.8", "8.6", "560.35.03", None, None),  # the 12.0-12.9 row holds: driver >= 525.60.13 is enough
    ("12.8", "12.0", "560.35.03", None, "error"),  # Blackwell needs the 12.8-12.9 row: driver >= 570.26
    ("12.8", "12.0", "570.86.15", None, None),
    ("12.4", "12.0", "570.86.15", "warning", None),  # only the 12.0-12.9 row holds 12.4: SM up to 9.0
    ("12.8", "8.6", "520.61.05", None, "error"),  # below both rows
]


@pytest.mark.parametrize(
    ("cuda", "cc", "driver", "e_arch", "e_drv"),
    CUDNN_9_10_2,
    ids=[f"cuda{a}-cc{b}-{c}" for a, b, c, *_ in CUDNN_9_10_2],
)
def test_cudnn_package_that_fits_the_machine(
    matrix,
    cuda: str,
    cc: str,
    driver: str,  # type: ignore[no-untyped-def]
    e_arch: Optional[str],
    e_drv: Optional[str],
) -> None:
    report = check(matrix, cudnn="9.10.2", cuda=cuda, cc=cc, driver=driver)
    assert severity(report, CUDNN_ARCH) == e_arch
    assert severity(report, CUDNN_DRIVER) == e_drv


def test_suggest_names_the_lower_driver_for_cuda_11_0(matrix) -> None:  # type: ignore[no-untyped-def]
    from compat.suggest import _driver_need

    ctx = build_context(Facts(values={"os": make_fact("os", "linux", "--os")}), matrix)
    assert "450.51.05" in _driver_need(ctx, "11.0", "linux")


# (tensorflow, expected tensorflow.windows-gpu on native Windows with a GPU) — "TensorFlow 2.10 was the last
# TensorFlow release that supported GPU on native-Windows" (https://www.tensorflow.org/install/pip#windows-native).
TF_WINDOWS = [
    ("2.10.1", None),
    ("2.16.1", "error"),
    ("2.99.0", "error"),  # newer than the matrix: still no native-Windows GPU
]


@pytest.mark.parametrize(("tf", "expected"), TF_WINDOWS, ids=[t for t, _ in TF_WINDOWS])
def test_tf_windows_gpu(matrix, tf: str, expected: Optional[str]) -> None:  # type: ignore[no-untyped-def]
    assert severity(check(matrix, os="windows", tensorflow=tf, cc="8.6"), TF_WINDOWS_ID) == expected
