"""A GPU left unusable (cudart's error 999 after suspend, RmInitAdapter failed) is named hardware_xid, unless a
driver version mismatch explains it; look-alike numbers stay quiet."""

from __future__ import annotations

from typing import Any

import pytest


def _cats(diagnose: Any, text: str) -> list[str]:
    return [d.category for d in diagnose(text)]


@pytest.mark.parametrize(
    "line",
    [
        "cudaSetDevice err: 999",
        'msg="Unable to load cudart" library=/opt/cuda/lib64/libcudart.so.12.6.37 error="cudart init failure: 999"',
        "[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)",
    ],
)
def test_gpu_left_unusable(diagnose: Any, line: str) -> None:
    assert _cats(diagnose, line + "\n")[0] == "hardware_xid"


def test_rminitadapter_yields_to_a_version_mismatch(diagnose: Any) -> None:
    text = (
        "[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but\n"
        "               NVRM: this kernel module has the version 570.144.  Please\n"
        "[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n"
    )
    assert _cats(diagnose, text)[0] == "nvml_mismatch"


@pytest.mark.parametrize(
    "line", ["cudaSetDevice err: 9990", "iteration 999, err: 9991 samples", "failure: 99"]
)
def test_999_look_alikes(diagnose: Any, line: str) -> None:
    assert "hardware_xid" not in _cats(diagnose, line + "\n")
