"""Pure rules over the matrix that several checks and the solver share: which driver runs which CUDA, which
GPU runs which compiled architectures."""

from __future__ import annotations

from packaging.version import Version

from compat.matrix import CudaRelease, Matrix
from compat.versions import CC, Arch

# Tegra (Jetson) compute capabilities: cubins are not binary compatible across minor revisions on Tegra, nor
# between desktop and Tegra ("Binary compatibility is supported only for the desktop. It is not supported for
# Tegra."): https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility. 3.2 TK1, 5.3 TX1/Nano,
# 6.2 TX2, 7.2 Xavier, 8.7 Orin, 10.1 Thor (CUDA 12.x; 11.0 from CUDA 13): https://developer.nvidia.com/cuda-gpus
TEGRA_CCS = frozenset({CC(3, 2), CC(5, 3), CC(6, 2), CC(7, 2), CC(8, 7), CC(10, 1), CC(11, 0)})


def driver_requirement(
    m: Matrix, cuda: Version, os_name: str
) -> tuple[str | None, str | None, CudaRelease | None]:
    """(minor-compat floor, the release's own minimum driver, the release row) for running `cuda`."""
    rel = m.cuda_release(cuda)
    floor_row = m.minor_compat.get(cuda.release[0])
    floor = floor_row.floor.get(os_name) if floor_row else None
    own = rel.min_driver.get(os_name) if rel else None
    if floor is None and own is not None and floor_row is None:
        floor = own  # before CUDA 11 there is no minor-version compatibility
    return floor, own, rel


def driver_can_run(m: Matrix, driver: Version, cuda: Version, os_name: str) -> str | None:
    """'ok', 'minor' (runs under minor-version compatibility), 'no', or None when unknown."""
    floor, own, _ = driver_requirement(m, cuda, os_name)
    if floor is None and own is None:
        return None
    if own is not None and driver >= Version(own):
        # A driver that meets the release's own minimum runs it, even below its major's minor-version floor
        # (CUDA 11.0 shipped with 450.51.05 < the 11.x floor 450.80.02: footnote to Table 2 of the release notes).
        return "ok"
    if floor is not None and driver < Version(floor):
        return "no"
    if own is not None and driver < Version(own):
        return "minor"
    return "ok"


def arch_support(archs: tuple[Arch, ...], cc: CC) -> tuple[str, Arch | None]:
    """How `cc` runs code built for `archs`: ('sass', a), ('ptx', a) or ('none', None).

    SASS (sm_XY) runs on the same major with an equal or higher minor; sm_XYa only on exactly XY; on Tegra
    (and between Tegra and desktop GPUs) SASS runs only on exactly XY.
    PTX (compute_XY) is JIT-compiled by the driver for any GPU of compute capability >= X.Y.
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility
    """
    for a in archs:
        if a.kind != "sm":
            continue
        if a.cc == cc:
            return "sass", a
        if (
            a.suffix != "a"
            and a.cc.major == cc.major
            and a.cc.minor <= cc.minor
            and a.cc not in TEGRA_CCS
            and cc not in TEGRA_CCS
        ):
            return "sass", a
    ptx = [a for a in archs if a.kind == "compute" and a.suffix == "" and a.cc <= cc]
    if ptx:
        return "ptx", max(ptx, key=lambda a: a.cc)
    return "none", None


def archs_text(archs: tuple[Arch, ...]) -> str:
    return ", ".join(str(a) for a in archs) if archs else "none"
