"""The kernel side of the driver: /proc/driver/nvidia/version, /proc/modules, /dev/nvidia*, NVIDIA PCI devices,
and the user-space libraries (libnvidia-ml.so.X.Y.Z, libcuda.so.X.Y.Z) whose version must match the module."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from compat.probes.host import HostFS, read

NVIDIA_PCI_VENDOR = "0x10de"
# PCI class 0x0300xx (VGA) and 0x0302xx (3D controller): the GPUs, not their audio or USB functions.
GPU_CLASSES = ("0x0300", "0x0302")

LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/wsl/lib",
)

_PROC_RE = re.compile(
    r"NVRM version:\s+NVIDIA UNIX\s+(?:(?P<open>Open) Kernel Module for (?P<arch1>\S+)|(?P<arch2>\S+) Kernel Module)"
    r"\s+(?P<version>\d{1,6}(?:\.\d{1,6}){1,2})\b"  # bounded: int() of a 5000-digit number raises
)
_GCC_RE = re.compile(r"^GCC version:\s*(.*?)\s*$", re.MULTILINE)
_LIB_RE = re.compile(r"^lib(?:nvidia-ml|cuda)\.so\.(\d+\.\d+(?:\.\d+)?)$")


def parse_proc_version(text: str) -> dict[str, Any] | None:
    """/proc/driver/nvidia/version -> {"version", "flavor" (proprietary|open), "arch", "gcc", "tegra"}."""
    m = _PROC_RE.search(text)
    if m is None:
        return None
    version = m.group("version")
    g = _GCC_RE.search(text)
    return {
        "version": version,
        "flavor": "open" if m.group("open") else "proprietary",
        "arch": m.group("arch1") or m.group("arch2"),
        "gcc": g.group(1) if g else None,
        # Jetson (L4T) prints its L4T release here (35.3.1), not a desktop driver branch.
        "tegra": int(version.split(".")[0]) < 100,
    }


def parse_modules(text: str) -> list[str]:
    """Names of the loaded kernel modules (/proc/modules: one per line, name first)."""
    return sorted({line.split()[0] for line in text.splitlines() if line.strip()})


def lib_version(filename: str) -> str | None:
    """libnvidia-ml.so.535.104.05 -> "535.104.05"; the unversioned .so.1 link -> None."""
    m = _LIB_RE.match(os.path.basename(filename))
    if m is None:
        return None
    v = m.group(1)
    return v if v.count(".") >= 1 and int(v.split(".")[0]) >= 100 else None


def _dirs(environ: Mapping[str, str]) -> list[str]:
    out = list(LIB_DIRS)
    for d in (environ.get("LD_LIBRARY_PATH") or "").split(":"):
        if d and d not in out:
            out.append(d)
    return out


def probe(fs: HostFS, environ: Mapping[str, str]) -> dict[str, Any]:
    """Read everything about the kernel driver that needs no library call; raw values only."""
    out: dict[str, Any] = {"status": "ok", "errors": {}}
    pv = read(fs, "/proc/driver/nvidia/version")
    out["proc_version"] = pv.text
    if not pv.ok and pv.error != "absent":
        out["errors"]["/proc/driver/nvidia/version"] = pv.error
    mods = read(fs, "/proc/modules")
    if mods.ok:
        names = parse_modules(mods.text or "")
        out["modules"] = [n for n in names if n.startswith(("nvidia", "nouveau", "nvidiafb", "rivafb"))]
    else:
        out["modules"] = None
        out["errors"]["/proc/modules"] = mods.error
    sm = read(fs, "/sys/module/nvidia/version")
    out["sys_module_version"] = sm.text.strip() if sm.ok and sm.text else None
    # Device nodes: the CUDA driver opens /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN.
    nodes = []
    try:
        paths = fs.glob("/dev/nvidia*")
    except OSError as exc:  # pragma: no cover - glob swallows most errors
        paths = []
        out["errors"]["/dev"] = str(exc)
    for p in paths:
        if fs.is_dir(p):
            continue  # /dev/nvidia-caps
        nodes.append({"path": p, "access": fs.access(p, os.R_OK | os.W_OK)})
    out["dev_nodes"] = nodes
    # PCI: is there an NVIDIA GPU at all, and which kernel driver has claimed it?
    pci = []
    try:
        devs = fs.listdir("/sys/bus/pci/devices")
    except OSError as exc:
        devs = []
        out["errors"]["/sys/bus/pci/devices"] = str(exc.strerror or exc)
    for d in devs:
        base = f"/sys/bus/pci/devices/{d}"
        vendor = read(fs, base + "/vendor", 64)
        if not vendor.ok or (vendor.text or "").strip().lower() != NVIDIA_PCI_VENDOR:
            continue
        cls = (read(fs, base + "/class", 64).text or "").strip().lower()
        if not cls.startswith(GPU_CLASSES):
            continue
        try:
            drv = os.path.basename(fs.readlink(base + "/driver"))
        except OSError:
            drv = None
        pci.append(
            {
                "address": d,
                "device": (read(fs, base + "/device", 64).text or "").strip() or None,
                "class": cls,
                "driver": drv,
            }
        )
    out["pci_gpus"] = pci
    libs = []
    for d in _dirs(environ):
        for pattern in ("libnvidia-ml.so.*", "libcuda.so.*"):
            for p in fs.glob(f"{d}/{pattern}"):
                v = lib_version(p)
                if v:
                    libs.append({"path": p, "version": v})
    out["libraries"] = libs
    if not out["errors"]:
        del out["errors"]
    return out


def analyse(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What the raw driver data means: kernel and user-space versions, nouveau, device nodes, PCI GPUs."""
    pv = parse_proc_version(raw.get("proc_version") or "") if raw.get("proc_version") else None
    kernel = pv["version"] if pv else (raw.get("sys_module_version") or None)
    user = sorted({lib["version"] for lib in raw.get("libraries") or [] if "nvidia-ml" in lib["path"]})
    cuda_libs = sorted({lib["version"] for lib in raw.get("libraries") or [] if "libcuda" in lib["path"]})
    modules = raw.get("modules")
    pci = list(raw.get("pci_gpus") or [])
    nouveau = bool(modules and "nouveau" in modules) or any(p.get("driver") == "nouveau" for p in pci)
    nvidia_loaded = None if modules is None else any(m == "nvidia" for m in modules)
    if pv is not None:
        nvidia_loaded = True
    nodes = raw.get("dev_nodes") or []
    return {
        "kernel_version": kernel,
        "kernel_flavor": pv["flavor"] if pv else None,
        "tegra": bool(pv and pv["tegra"]),
        "userspace_versions": user,
        "libcuda_versions": cuda_libs,
        "mismatch": bool(kernel and user and kernel not in user and not (pv and pv["tegra"])),
        "nouveau": nouveau,
        "nvidia_module_loaded": nvidia_loaded,
        "pci_gpus": pci,
        "pci_readable": "/sys/bus/pci/devices" not in (raw.get("errors") or {}),
        "dev_nodes": [n["path"] for n in nodes],
        "dev_inaccessible": [n["path"] for n in nodes if not n.get("access")],
        "has_nvidiactl": any(n["path"] == "/dev/nvidiactl" for n in nodes),
        "has_uvm": any(n["path"] == "/dev/nvidia-uvm" for n in nodes),
    }
