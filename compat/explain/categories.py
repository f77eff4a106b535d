"""The root-cause categories of `compat explain` (and the smoke job's verdicts): a public contract (JSON
"category"), never renamed. The one copy: the catalogue, the explain API and the smoke job import it."""

from __future__ import annotations

CATEGORIES = (
    "driver_too_old",
    "arch_not_supported",
    "cudnn_mismatch",
    "cuda_libs_missing",
    "gpu_oom",
    "host_oom",
    "dataloader_shm",
    "cuda_fork",
    "nccl_distributed",
    "illegal_memory_access",
    "hardware_xid",
    "no_gpu_visible",
    "nvml_mismatch",
    "segfault",
    "gpu_error",
)
"""gpu_error is "other GPU error": a documented CUDA/cuDNN/cuBLAS/NCCL/NVML code that names no root cause."""
