"""Explain's fixes that install a library pinned to what the log names: the exact nvidia-cudnn wheel of the cuDNN a
framework was built with, found among the framework pins the matrix stores (never an unpinned reinstall)."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import InvalidVersion, Version

from compat.explain.diagnosis import Diagnosis
from compat.findings import Fix
from compat.installcmd import pin_command
from compat.matrix import Matrix

BUILT_CUDNN_FIX = "Or install the cuDNN version the framework was built with"
"""The start of the cudnn_mismatch fix in signatures.yaml that the pinned one replaces."""

WHEEL_PREFIX = "nvidia-cudnn-cu"


def cudnn_wheels(m: Matrix, cudnn: str) -> list[tuple[str, str]]:
    """(distribution, exact version) of every nvidia-cudnn-cuNN wheel pinned by a torch or TensorFlow release in
    the matrix whose cuDNN is `cudnn` ("8.9.4" matches the wheel 8.9.4.25), newest CUDA major first."""
    try:
        want = Version(cudnn).release
    except InvalidVersion:
        return []
    pins = [p for r in m.tensorflow for p in r.and_cuda.items()]
    pins += [p for r in m.torch for p in r.pypi_requires.items()]
    found: set[tuple[str, str]] = set()
    for name, ver in pins:
        if not name.startswith(WHEEL_PREFIX):
            continue
        try:
            got = Version(ver).release  # a specifier (">=9.1,<10") is no exact pin: skipped
        except InvalidVersion:
            continue
        if len(want) >= 3 and got[: len(want)] == want:
            found.add((name, ver))
    return sorted(found, reverse=True)


def _pinned(built: str, m: Matrix | None) -> tuple[Fix, ...]:
    wheels = cudnn_wheels(m, built) if m is not None else []
    if not wheels:
        where = "in compat's matrix" if m is not None else "here (the matrix was not read)"
        return (
            Fix(
                f"Install cuDNN {built}, the version the framework was built with: a nvidia-cudnn wheel of "
                f"cuDNN {built} is not known {where}, so no pinned command is given (see "
                "https://pypi.org/project/nvidia-cudnn-cu12/#history or NVIDIA's cuDNN archive)"
            ),
        )
    return tuple(
        Fix(
            f"Install cuDNN {built}, the version the framework was built with (the {name} wheel {ver})",
            pin_command(name, ver, no_deps=True, reinstall=True),
        )
        for name, ver in wheels
    )


def pin_fixes(diags: list[Diagnosis], m: Matrix | None) -> list[Diagnosis]:
    """`diags` with each cuDNN mismatch's generic "install the built cuDNN" fix made exact from the log's
    `cudnn_built` fact (or saying that no wheel of it is known)."""
    out: list[Diagnosis] = []
    for d in diags:
        built = d.facts.get("cudnn_built")
        if d.category != "cudnn_mismatch" or not built:
            out.append(d)
            continue
        fixes: list[Fix] = []
        for f in d.fixes:
            fixes += _pinned(str(built), m) if f.text.startswith(BUILT_CUDNN_FIX) else (f,)
        out.append(replace(d, fixes=tuple(fixes)))
    return out
