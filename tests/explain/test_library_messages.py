"""Libraries' own failure lines are read: ptxas's bf16 target error, bitsandbytes' compute-capability warning,
CTranslate2's cuDNN loader message, Caffe's device allocation failure, old PyTorch's cuBLAS handle failure,
NCCL's socket creation failure, dlib's initialization error; their look-alikes stay quiet."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(
    ("line", "category"),
    [
        (
            "ptxas /tmp/compile-ptx-src-f5ac42, line 48; error   : Feature '.bf16' requires .target sm_80 or higher",
            "arch_not_supported",
        ),
        (
            "UserWarning: WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for your GPU!",
            "arch_not_supported",
        ),
        (
            "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}",
            "cuda_libs_missing",
        ),
        ("ERROR: Out of memory: failed to allocate 58080000 bytes on device 0", "gpu_oom"),
        (
            "RuntimeError: cublas runtime error : library not initialized at ..\\aten\\src\\THC\\THCGeneral.cpp:216",
            "gpu_oom",
        ),
        (
            "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
            "nccl_distributed",
        ),
        (
            "RuntimeError: Error while calling cudaGetDevice(&the_device_id) in file gpu_data.cpp:178. "
            "code: 3, reason: initialization error",
            "cuda_fork",
        ),
    ],
)
def test_the_real_line_is_read(diagnose: Any, line: str, category: str) -> None:
    d = diagnose(line + "\n")
    assert d and d[0].category == category, [x.category for x in d]


@pytest.mark.parametrize(
    "line",
    [
        "The kernel requires .target sm_80 in the docs, see the PTX ISA",
        "bitsandbytes: compute capability 8.6 detected, using fast int8 matmul",
        "Unable to load any of the plugins in ./plugins",
        "warning: failed to allocate 1024 bytes in the host cache, retrying",
        "cublas runtime initialised in 12 ms",
        "Socket creation succeeded on eth0",
        "code: 3, reason: file not found",
    ],
)
def test_look_alikes_stay_quiet(diagnose: Any, line: str) -> None:
    d = diagnose(line + "\n")
    assert not d or d[0].category not in {
        "arch_not_supported",
        "cuda_libs_missing",
        "gpu_oom",
        "nccl_distributed",
        "cuda_fork",
    }, [(x.category, x.title) for x in d]
