"""The process environment: variables that change how CUDA and the frameworks behave, and where we run
(a container, and whether the NVIDIA container runtime injected the driver; WSL)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compat.probes.host import HostFS, read

VARS = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_CACHE_DISABLE",
    "CUBLAS_WORKSPACE_CONFIG",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "TORCH_CUDA_ARCH_LIST",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "TF_GPU_ALLOCATOR",
    "TF_CPP_MIN_LOG_LEVEL",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    "XLA_FLAGS",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "OMP_NUM_THREADS",
)
PREFIXES = ("NCCL_",)
_CGROUP_MARKERS = ("docker", "kubepods", "containerd", "libpod", "lxc", "crio")


def relevant_vars(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: environ[k] for k in sorted(environ) if k in VARS or k.startswith(PREFIXES)}


def detect_container(fs: HostFS, environ: Mapping[str, str]) -> dict[str, Any]:
    signs = []
    if fs.exists("/.dockerenv"):
        signs.append("/.dockerenv")
    if fs.exists("/run/.containerenv"):
        signs.append("/run/.containerenv")
    if environ.get("container"):
        signs.append(f"container={environ['container']}")
    if environ.get("KUBERNETES_SERVICE_HOST"):
        signs.append("KUBERNETES_SERVICE_HOST")
    cg = read(fs, "/proc/1/cgroup", 65536)
    if cg.ok:
        for m in _CGROUP_MARKERS:
            if m in (cg.text or ""):
                signs.append(f"/proc/1/cgroup mentions {m}")
                break
    return {
        "in_container": bool(signs),
        "signs": signs,
        "nvidia_visible_devices": environ.get("NVIDIA_VISIBLE_DEVICES"),
    }


def detect_wsl(fs: HostFS, environ: Mapping[str, str]) -> dict[str, Any]:
    pv = read(fs, "/proc/version", 4096)
    text = (pv.text or "").lower()
    wsl = "microsoft" in text or "wsl" in text or bool(environ.get("WSL_DISTRO_NAME"))
    out: dict[str, Any] = {"wsl": wsl}
    if wsl:
        # WSL's GPU driver lives on the Windows side; its libcuda.so is mounted at /usr/lib/wsl/lib.
        out["wsl_lib"] = fs.exists("/usr/lib/wsl/lib/libcuda.so") or fs.exists(
            "/usr/lib/wsl/lib/libcuda.so.1"
        )
        out["dxg"] = fs.exists("/dev/dxg")
    return out


def probe(fs: HostFS, environ: Mapping[str, str]) -> dict[str, Any]:
    return {
        "status": "ok",
        "vars": relevant_vars(environ),
        "container": detect_container(fs, environ),
        **detect_wsl(fs, environ),
    }
