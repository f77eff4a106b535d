"""Why a smoke run failed: the child's error text through `compat explain`, and signals mapped by hand.

compat.explain.diagnose_text(text) -> list[Diagnosis] is the shared catalogue of causes; it is imported lazily,
and a small built-in table stands in for it when it is missing or fails, so a smoke verdict never depends on it.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable
from typing import Any, Optional

from compat._valueclass import valueclass
from compat.explain.categories import CATEGORIES  # noqa: F401 - re-exported
from compat.findings import Fix

# Signals of a crash in native code: the explain catalogue files these under "segfault".
NATIVE_CRASH_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT)


@valueclass
class Cause:
    """The one cause a smoke result names."""

    category: str
    title: str
    evidence: Optional[str] = None
    explanation: Optional[str] = None
    fixes: tuple[Fix, ...] = ()
    source: str = "compat.explain"
    """compat.explain, builtin (the stand-in table) or signal (mapped from how the child died)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "title": self.title,
            "evidence": self.evidence,
            "explanation": self.explanation,
            "source": self.source,
        }


# The stand-in table: (category, pattern, title). Only used when compat.explain cannot answer.
_BUILTIN: tuple[tuple[str, str, str], ...] = (
    (
        "arch_not_supported",
        r"no kernel image is available for execution on the device|"
        r"is not compatible with the current PyTorch installation|CUDA_ERROR_NO_BINARY_FOR_GPU",
        "The framework has no kernels for this GPU's architecture",
    ),
    (
        "gpu_oom",
        r"CUDA out of memory|OutOfMemoryError: CUDA|CUDA_ERROR_OUT_OF_MEMORY|ResourceExhaustedError|"
        r"RESOURCE_EXHAUSTED|OOM when allocating",
        "The GPU ran out of memory",
    ),
    (
        "driver_too_old",
        r"driver version is insufficient for CUDA runtime version|NVIDIA driver on your system is too old|"
        r"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|forward compatibility was attempted on non supported HW",
        "The NVIDIA driver is too old for this CUDA runtime",
    ),
    (
        "nvml_mismatch",
        r"Driver/library version mismatch",
        "The NVIDIA kernel module and user-space driver differ",
    ),
    (
        "cudnn_mismatch",
        r"CUDNN_STATUS_\w+|cuDNN version incompatibility|Loaded runtime CuDNN library|"
        r"Could not load library libcudnn|libcudnn\S*: cannot open shared object file|cuDNN error",
        "cuDNN is missing or does not match the framework",
    ),
    (
        "cuda_libs_missing",
        r"lib(?:cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|nvrtc|nvJitLink)\S*: cannot open "
        r"shared object file|Could not load dynamic library 'lib(?:cudart|cublas)",
        "CUDA libraries are missing",
    ),
    (
        "illegal_memory_access",
        r"an illegal memory access was encountered|CUDA_ERROR_ILLEGAL_ADDRESS",
        "A kernel made an illegal memory access",
    ),
    ("cuda_fork", r"Cannot re-initialize CUDA in forked subprocess", "CUDA was initialised before a fork"),
    (
        "nccl_distributed",
        r"NCCL (?:error|WARN)|ncclInternalError|ncclSystemError|ProcessGroupNCCL",
        "NCCL (multi-GPU communication) failed",
    ),
    (
        "dataloader_shm",
        r"insufficient shared memory \(shm\)|DataLoader worker \(pid \d+\) is killed by signal: Bus error",
        "Shared memory (/dev/shm) is too small for the data loader",
    ),
    (
        "hardware_xid",
        r"\bXid\b|uncorrectable ECC error|GPU has fallen off the bus",
        "The GPU reported a hardware fault",
    ),
    (
        "no_gpu_visible",
        r"no CUDA-capable device is detected|Found no NVIDIA driver on your system|"
        r"CUDA_ERROR_NO_DEVICE|no CUDA-capable device is visible|torch\.cuda\.is_available\(\) is False|"
        r"Torch not compiled with CUDA enabled",
        "No GPU is visible to the framework",
    ),
    (
        "host_oom",
        r"\bMemoryError\b|std::bad_alloc|DefaultCPUAllocator: can't allocate memory",
        "The host ran out of memory",
    ),
    (
        "segfault",
        r"Segmentation fault|Fatal Python error: (?:Segmentation fault|Aborted|Bus error)",
        "The process crashed in native code",
    ),
)

_OWN_FIXES: dict[str, tuple[Fix, ...]] = {
    "host_oom": (
        Fix(
            "Lower the batch size, or give the process more memory (the container's or cgroup's memory limit, "
            "other processes on the host)"
        ),
        Fix("See what the kernel's OOM killer killed", "dmesg | grep -i -E 'killed process|oom-kill'"),
    ),
    "segfault": (
        Fix(
            "See where it crashed: Python's fault handler prints the stack on a native crash",
            "python -X faulthandler your_training_script.py",
        ),
        Fix(
            "Look for mixed CUDA/cuDNN libraries (pip wheels next to a system CUDA, two framework builds)",
            "pip list 2>/dev/null | grep -i -E 'nvidia|torch|tensorflow'",
        ),
    ),
    "gpu_oom": (
        Fix(
            "Lower the batch size, or use mixed precision; see how large a batch fits",
            "compat smoke --amp --find-max-batch",
        ),
    ),
    # The rest only back up the stand-in table; compat.explain carries the full fixes for these.
    "arch_not_supported": (
        Fix("Install a framework build compiled for this GPU's architecture", "compat doctor"),
    ),
    "cudnn_mismatch": (
        Fix(
            "Use the cuDNN the framework was built with (the pip wheels bring their own: keep a system "
            "cuDNN out of LD_LIBRARY_PATH)",
            "compat doctor",
        ),
    ),
    "cuda_libs_missing": (Fix("Install the framework together with its CUDA libraries", "compat doctor"),),
    "driver_too_old": (
        Fix("Install a newer NVIDIA driver, or a framework build for an older CUDA", "compat doctor"),
    ),
    "nvml_mismatch": (Fix("Reboot (or reload the nvidia kernel modules) after a driver update"),),
    "illegal_memory_access": (
        Fix(
            "Re-run with synchronous kernel launches to find the failing kernel",
            "CUDA_LAUNCH_BLOCKING=1 compat smoke",
        ),
    ),
    "cuda_fork": (
        Fix("Start worker processes with the 'spawn' method, not 'fork', once CUDA is initialised"),
    ),
    "nccl_distributed": (Fix("Re-run with NCCL's own diagnostics", "NCCL_DEBUG=INFO compat smoke"),),
    "dataloader_shm": (
        Fix("Give the container more shared memory (docker run --shm-size=8g, or --ipc=host)"),
    ),
    "hardware_xid": (Fix("Look for Xid errors in the kernel log", "dmesg | grep -i xid"),),
    "no_gpu_visible": (
        Fix(
            "Check that the GPU is visible here (driver loaded, CUDA_VISIBLE_DEVICES, a container's "
            "--gpus flag)",
            "nvidia-smi",
        ),
    ),
}


def _text(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, Iterable):
        return "\n".join(str(v) for v in value)
    return str(value)


def _fixes(value: Any) -> tuple[Fix, ...]:
    out: list[Fix] = []
    for f in value or ():
        if isinstance(f, Fix):
            out.append(f)
        elif isinstance(f, str):
            out.append(Fix(f))
        elif isinstance(f, dict):
            kind = f.get("kind") if f.get("kind") in ("shell", "python", "config", "manual") else ""
            out.append(Fix(str(f.get("text", "")), f.get("command"), str(kind or "")))
        elif hasattr(f, "text"):
            out.append(Fix(str(f.text), getattr(f, "command", None), getattr(f, "kind", "")))
    return tuple(out)


def own_fixes(category: str) -> tuple[Fix, ...]:
    return _OWN_FIXES.get(category, ())


def builtin_cause_of(text: str) -> Optional[Cause]:
    """The stand-in: first matching row of a small table."""
    for category, pattern, title in _BUILTIN:
        m = re.search(pattern, text)
        if m:
            line = next((ln.strip() for ln in text.splitlines() if m.group(0) in ln), m.group(0))
            return Cause(category, title, evidence=line[:500], fixes=own_fixes(category), source="builtin")
    return None


def cause_of(text: str) -> Optional[Cause]:
    """The most confident cause compat.explain finds in the text (the stand-in table without it), or None."""
    if not text.strip():
        return None
    from compat.explain import diagnose_text

    try:
        found = list(diagnose_text(text))
    except Exception:  # a bug in explain must not cost the smoke verdict
        return builtin_cause_of(text)
    if not found:
        return None
    # explain lists the most likely first: the root cause, deeper causes suppressing symptoms. A ranked suspect
    # of an inconclusive answer (a bare death) is not a cause the smoke verdict may state as found.
    named = [d for d in found if not getattr(d, "suspected", False)]
    if not named:
        return None
    best = named[0]
    category = str(getattr(best, "category", "") or "")
    if not category:
        return builtin_cause_of(text)
    return Cause(
        category,
        str(getattr(best, "title", "") or category),
        evidence=_text(getattr(best, "evidence", None)),
        explanation=_text(getattr(best, "explanation", None)),
        fixes=_fixes(getattr(best, "fixes", ())) or own_fixes(category),
    )


def signal_cause(signum: int, oom_confirmed: Optional[bool]) -> Optional[Cause]:
    """What a fatal signal says by itself: SIGKILL is the OOM killer only when confirmed; native crashes."""
    name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
    if signum == signal.SIGKILL:
        if oom_confirmed:
            return Cause(
                "host_oom",
                "The kernel's out-of-memory killer killed the training process",
                evidence=None,
                fixes=own_fixes("host_oom"),
                source="signal",
            )
        return None
    if signum in NATIVE_CRASH_SIGNALS:
        what = "aborted" if signum == signal.SIGABRT else "crashed in native code"
        return Cause(
            "segfault", f"The training process {what} ({name})", fixes=own_fixes("segfault"), source="signal"
        )
    return None
