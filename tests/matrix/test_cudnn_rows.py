"""The cuDNN rows of matrix/cudnn.yaml as answers, each read from NVIDIA's support matrix;
unread releases stay unknown (docs/notes/2026-11-27/data21-note.md).

Sources (cited on the rows in matrix/cudnn.yaml):
- cuDNN 8.9.1 support matrix, Table 1: CUDA 12.0-12.1 (>=525.60.13 / >=527.41), CUDA 11.0-11.8
  (>= 450.80.02 / >=452.39), CC 5.0 ... 9.0.
  https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-891/support-matrix/index.html
- cuDNN 9.0.0 support matrix: the second CUDA 11.x row lists 11.7 down to 11.0.
- NVIDIA's redist listing for v8.0.5 holds builds for CUDA 10.1, 10.2, 11.0 and 11.1.
- Releases with no NVIDIA row read (8.0.4, 8.1.0, 8.3.1, 8.3.2, 8.9.3) stay out of the matrix: unknown, so the
  cuDNN checks skip instead of reporting anything.
"""

from __future__ import annotations

from typing import Optional

import pytest
from packaging.version import Version

from compat.checks.cudnn import CUDNN_ARCH, CUDNN_CUDA, CUDNN_DRIVER
from compat.matrix import Matrix
from tests.core.helpers import check, severity, skipped

# (cudnn, cuda, cc, driver, expected cudnn.cuda, cudnn.arch, cudnn.driver)
ROWS = [
    ("8.9.1", "12.1", None, None, None, None, None),  # listed: 12.0-12.1
    ("8.9.1", "12.0", "9.0", "525.60.13", None, None, None),  # H100 on the CUDA 12 floor driver
    ("8.9.1", "12.2", None, None, "warning", None, None),  # newer than the listed 12.1
    ("8.9.1", "11.0", None, None, None, None, None),  # CUDA 11.x row starts at 11.0
    ("8.9.1", "11.8", "8.6", "450.80.02", None, None, None),
    ("8.9.1", "12.1", "3.7", None, None, "error", None),  # lowest listed CC is 5.0 (Maxwell)
    ("8.9.1", "12.1", None, "520.61.05", None, None, "error"),  # CUDA 12 package needs >= 525.60.13
    ("8.9.1", "11.8", None, "450.51.06", None, None, "error"),  # CUDA 11 package needs >= 450.80.02
    ("8.9.1", "10.2", None, None, "error", None, None),  # no CUDA 10 build
    ("8.0.5", "10.2", None, None, None, None, None),  # NVIDIA ships 8.0.5 builds for CUDA 10.1 / 10.2
    ("8.0.5", "11.1", None, None, None, None, None),
    ("8.0.5", "12.1", None, None, "error", None, None),  # no CUDA 12 build
    ("9.0.0", "11.0", None, None, None, None, None),  # 9.0.0's second CUDA 11.x row reaches down to 11.0
]


@pytest.mark.parametrize(
    ("cudnn", "cuda", "cc", "driver", "e_cuda", "e_arch", "e_drv"),
    ROWS,
    ids=[f"cudnn{a}-cuda{b}-cc{c}-drv{d}" for a, b, c, d, *_ in ROWS],
)
def test_filled_rows_answer(
    matrix: Matrix,
    cudnn: str,
    cuda: str,
    cc: Optional[str],
    driver: Optional[str],
    e_cuda: Optional[str],
    e_arch: Optional[str],
    e_drv: Optional[str],
) -> None:
    report = check(matrix, cudnn=cudnn, cuda=cuda, cc=cc, driver=driver)
    assert severity(report, CUDNN_CUDA) == e_cuda
    assert severity(report, CUDNN_ARCH) == e_arch
    assert severity(report, CUDNN_DRIVER) == e_drv


def test_891_cells_as_nvidia_prints_them(matrix: Matrix) -> None:
    rel = matrix.cudnn_release(Version("8.9.1"))
    assert rel is not None
    got = {
        p.cuda_major: (str(p.cuda_min), str(p.cuda_max), dict(p.min_driver), str(p.cc_min), str(p.cc_max))
        for p in rel.packages
    }
    assert got == {
        12: ("12.0", "12.1", {"linux": "525.60.13", "windows": "527.41"}, "5.0", "9.0"),
        11: ("11.0", "11.8", {"linux": "450.80.02", "windows": "452.39"}, "5.0", "9.0"),
    }


def test_900_cuda11_floor(matrix: Matrix) -> None:
    rel = matrix.cudnn_release(Version("9.0.0"))
    assert rel is not None
    (cu11,) = [p for p in rel.packages if p.cuda_major == 11]
    assert (cu11.cuda_min, cu11.cuda_max) == (Version("11.0"), Version("11.8"))


@pytest.mark.parametrize("missing", ["8.0.4", "8.1.0", "8.3.1", "8.3.2", "8.9.3"])
def test_unread_releases_stay_unknown(matrix: Matrix, missing: str) -> None:
    """No NVIDIA table gave these rows' CUDA flavours: not in the matrix, and every cuDNN check skips."""
    assert matrix.cudnn_release(Version(missing)) is None
    report = check(matrix, cudnn=missing, cuda="11.2", cc="8.0", driver="470.82.01")
    for check_id in (CUDNN_CUDA, CUDNN_ARCH, CUDNN_DRIVER):
        assert severity(report, check_id) is None
        assert skipped(report, check_id)
