"""Message families: a row or code rule reads every wording of its message (the official strings, one-word NCCL
messages, NVML codes without an error prefix, wrapped pastes) and keeps precision on look-alike lines."""

from __future__ import annotations

from typing import Any

import pytest


def _top(diagnose: Any, text: str) -> Any:
    d = diagnose(text)
    assert d, f"nothing found in {text!r}"
    return d[0]


def _cats(diagnose: Any, text: str) -> set[str]:
    return {d.category for d in diagnose(text)}


def test_one_word_nccl_messages_do_not_claim_other_errors(diagnose: Any) -> None:
    # ncclGetErrorString's "timeout" / "invalid argument" are words any program prints
    top = _top(diagnose, "Timeout waiting for RPC from GSP!\n")
    assert top.category == "hardware_xid" and top.facts.get("xid") == "119"
    assert "nccl_distributed" not in _cats(diagnose, "Timeout waiting for RPC from GSP!\n")
    assert "nccl_distributed" not in _cats(diagnose, "RuntimeError: CUDA error: invalid argument\n")
    assert "nccl_distributed" not in _cats(diagnose, "requests.exceptions.ReadTimeout: timeout\n")
    # the codes themselves, and NCCL's own error line, still name NCCL
    assert _top(diagnose, "ncclInvalidArgument: invalid argument\n").category == "nccl_distributed"
    line = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, invalid argument, NCCL version 2.7.8\n"
    assert _top(diagnose, line).category == "nccl_distributed"


def test_nvml_codes_without_error_prefix(diagnose: Any) -> None:
    top = _top(diagnose, "ABORT: CUDA NVML library initialization failed: NVML_DRIVER_NOT_LOADED\n")
    assert top.category == "no_gpu_visible"
    assert top.facts.get("error_code") == "NVML_ERROR_DRIVER_NOT_LOADED"


@pytest.mark.parametrize(
    ("line", "category", "code"),
    [
        (
            "RuntimeError: CUDA error: too many resources requested for launch",
            "gpu_error",
            "cudaErrorLaunchOutOfResources",
        ),
        ("RuntimeError: CUDA error: invalid device ordinal", "no_gpu_visible", "cudaErrorInvalidDevice"),
        ("error=9 : invalid configuration argument", "gpu_error", "cudaErrorInvalidConfiguration"),
        (
            "Cuda Runtime (operation not permitted when stream is capturing)",
            "gpu_error",
            "cudaErrorStreamCaptureUnsupported",
        ),
        (
            "Error 304: OS call failed or operation not supported on this OS",
            "gpu_error",
            "cudaErrorOperatingSystem",
        ),
        (
            "CUDA error: CUDA-capable device(s) is/are busy or unavailable",
            "no_gpu_visible",
            "cudaErrorDevicesUnavailable",
        ),
    ],
)
def test_official_cuda_error_strings_name_their_code(
    diagnose: Any, line: str, category: str, code: str
) -> None:
    top = _top(diagnose, line + "\n")
    assert (top.category, top.facts.get("error_code")) == (category, code)


def test_wrapped_messages_are_still_read(diagnose: Any) -> None:
    nvrm = (
        "NVRM: API mismatch: the client has the version 390.25, but\n"
        "NVRM: this kernel module has the version 390.12.  Please\n"
        "NVRM: make sure that this kernel module and all NVIDIA driver\n"
    )
    top = _top(diagnose, nvrm)
    assert top.category == "nvml_mismatch" and top.facts.get("driver") == "390.12"
    bus = (
        "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\n"
        "error. It is possible that dataloader's workers are out of shared\n"
        "memory. Please try to raise your shared memory limit.\n"
    )
    assert _top(diagnose, bus).category == "dataloader_shm"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        (
            "WARNING: device: 0. The installed Paddle is compiled with CUDNN 7.6, but CUDNN version in your machine is 7.3, which may cause serious incompatible bug.",
            "cudnn_mismatch",
        ),
        (
            'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
            "no_gpu_visible",
        ),
        ("Process finished with exit code -1073741819 (0xC0000005)", "segfault"),
        ("Error: llama runner process has terminated: exit status 0xc0000409", "segfault"),
        ("RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "gpu_error"),
        ("|   0  ERR!                Off  | 00000000:00:1E.0 Off |                 ERR! |", "hardware_xid"),
        ("RuntimeError: DataLoader worker (pid(s) 76) exited unexpectedly", "dataloader_shm"),
        ("OSError: [Errno 12] Cannot allocate memory", "host_oom"),
        ("ncclCommInitRank failed with error: NCCL error: internal error", "nccl_distributed"),
        (
            "F0504 12:30:02.978602 2662 common.cpp:163] Check failed: error == cudaSuccess (30 vs. 0) unknown error",
            "hardware_xid",
        ),
        ("CUDA failed with error initialization error", "cuda_fork"),
        ("When I run dense_gemm.py I find the error CUDAError InsufficientDriver.", "driver_too_old"),
    ],
)
def test_new_rows(diagnose: Any, text: str, category: str) -> None:
    assert _top(diagnose, text + "\n").category == category


def test_look_alikes_stay_quiet(diagnose: Any) -> None:
    remap = "Remapped Rows\n    Correctable Error : 0\n    Uncorrectable Error : 4\n    Pending : Yes\n"
    assert _top(diagnose, remap).category == "hardware_xid"
    assert "hardware_xid" not in _cats(
        diagnose, "Remapped Rows\n    Pending                           : No\n"
    )
    healthy = "|   0  NVIDIA A100-SXM4-80GB  On   | 00000000:07:00.0 Off |                    0 |\n"
    assert "hardware_xid" not in _cats(diagnose, healthy)
    assert "host_oom" not in _cats(
        diagnose, "If I allocate memory on the GPU I get `cuda error: Cannot allocate memory`\n"
    )
    assert "segfault" not in _cats(diagnose, "step 1073741819/2000000000 loss 0.5\n")
