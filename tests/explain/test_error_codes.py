"""matrix/error_codes.yaml: every code of the official enumerations (CUDA, cuDNN, cuBLAS, NCCL, NVML, absl) is
listed with its source, and a code in a message names its category with its documented meaning."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from compat.explain.diagnosis import verdict_of
from compat.explain.error_codes import ENUMS, validate_codes
from compat.explain.signature import Catalogue
from tests.explain.helpers import ROOT, scan

CODES = ROOT / "matrix" / "error_codes.yaml"
# Enumerator counts in the headers the rows were generated from (CUDA 12.6 driver_types.h / cuda.h, cuDNN
# 8.2 + 9.6, cublas_api.h, nccl.h.in, nvml.h, absl/status/status.h): a row lost is a failure.
ENUM_COUNTS = {
    "cudaError_t": 130,
    "CUresult": 96,
    "cudnnStatus_t": 52,
    "cublasStatus_t": 9,
    "ncclResult_t": 8,
    "nvmlReturn_t": 31,
    "absl::StatusCode": 16,
}


def _doc() -> Any:
    return yaml.safe_load(CODES.read_text(encoding="utf-8"))


def test_error_codes_cover_every_enumeration_with_sources() -> None:
    doc = _doc()
    assert validate_codes(doc) == []
    per = Counter(r["enum"] for r in doc["codes"])
    assert dict(per) == ENUM_COUNTS and set(per) == set(ENUMS)
    for r in doc["codes"]:
        assert r["source"].startswith("https://") and "@" in r["header"], r["name"]
        assert r["meaning"].strip(), r["name"]


def test_error_code_validation_reports_problems() -> None:
    bad = {"updated": "2026-11-23", "codes": [{"enum": "cudaError_t", "name": "x y", "value": "1"}]}
    problems = validate_codes(bad)
    assert any("identifier" in p for p in problems) and any("integer" in p for p in problems)
    assert any("category" in p for p in problems) and validate_codes([]) != []


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("RuntimeError: CUDA error: cudaErrorInsufficientDriver", "driver_too_old"),
        ("jax: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "no_gpu_visible"),
        (
            "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
            "nvml_mismatch",
        ),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            "gpu_oom",
        ),
        (
            "torch.distributed.DistBackendError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "nccl_distributed",
        ),
        (
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
            "gpu_oom",
        ),
        (
            "CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices",
            "nccl_distributed",
        ),
        (
            "RuntimeError: CUDA error: the launch timed out and was terminated cudaErrorLaunchTimeout",
            "gpu_error",
        ),
    ],
)
def test_codes_in_messages_name_a_category(catalogue: Catalogue, line: str, category: str) -> None:
    d = scan(catalogue, line + "\n").diagnoses()
    assert d and d[0].category == category, [x.category for x in d]


def test_every_code_name_is_recognised(catalogue: Catalogue) -> None:
    """No documented code leaves explain silent: each gives its category with its documented meaning."""
    for r in _doc()["codes"]:
        line = f"RuntimeError: failed with {r['name']} in call"
        if r["enum"] == "absl::StatusCode":
            line = f"jaxlib.xla_extension.XlaRuntimeError: {r['name']}: failed"
        d = scan(catalogue, line + "\n").diagnoses()
        assert d, r["name"]
        assert r["category"] in [x.category for x in d], (r["name"], [x.category for x in d])
        assert any(r["name"] in x.explanation for x in d), r["name"]


def test_unknown_cuda_error_is_other_gpu_error_not_silence(catalogue: Catalogue) -> None:
    d = scan(catalogue, "RuntimeError: CUDA error: something nobody documented\n").diagnoses()
    assert [x.category for x in d] == ["gpu_error"] and verdict_of(d) == "inconclusive"
    # a generic "CUDA error" line next to a named cause adds nothing
    d = scan(catalogue, "RuntimeError: CUDA error: out of memory\n").diagnoses()
    assert [x.category for x in d] == ["gpu_oom"]
