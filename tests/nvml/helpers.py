"""Helpers for the fake-NVML tests: profiles, child processes, the compat CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.fake_nvml import load

PROFILES = ROOT / "tests" / "data" / "nvml_profiles"
GOLDEN = PROFILES / "golden"


def profile(name: str) -> dict[str, Any]:
    return load(PROFILES / f"{name}.json")


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES.glob("*.json"))


def child(code: str, env: Mapping[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (pynvml loads the library once per process)."""
    e = dict(env)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=timeout, check=False
    )


def child_json(code: str, env: Mapping[str, str], timeout: float = 60) -> Any:
    res = child(code, env, timeout)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def compat(args: list[str], env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The compat CLI in a subprocess: the public entry point, whatever runs NVML inside it."""
    e = dict(env)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-m", "compat", *args],
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def traced(work: Path) -> list[str]:
    p = work / "trace.txt"
    return p.read_text().split() if p.exists() else []


def _sysfs_address(bus_id: str) -> str:
    """NVML's "00000000:07:00.0" -> sysfs's "0000:07:00.0"."""
    dom, rest = bus_id.split(":", 1)
    return f"{int(dom, 16):04x}:{rest.lower()}"


def build_host_root(doc: Mapping[str, Any], root: Path) -> Path:
    """The host files the doctor reads (/proc, /sys, /dev, the driver's user-space library) for a profile."""
    host = doc.get("host") or {}
    root.mkdir(parents=True, exist_ok=True)
    proc = root / "proc"
    (proc / "driver" / "nvidia").mkdir(parents=True, exist_ok=True)
    if host.get("proc_version"):
        (proc / "driver" / "nvidia" / "version").write_text(host["proc_version"])
        (proc / "modules").write_text(
            "nvidia_uvm 1437696 0 - Live 0x0000000000000000\nnvidia 56131584 1 nvidia_uvm, Live 0x0000000000000000\n"
        )
    else:
        (proc / "modules").write_text("ext4 1007616 1 - Live 0x0000000000000000\n")
    dev = root / "dev"
    dev.mkdir(exist_ok=True)
    for node in host.get("dev_nodes") or []:
        (dev / node).write_text("")
    pci = root / "sys" / "bus" / "pci" / "devices"
    pci.mkdir(parents=True, exist_ok=True)
    drivers = root / "sys" / "bus" / "pci" / "drivers" / "nvidia"
    drivers.mkdir(parents=True, exist_ok=True)
    for d in doc.get("devices") or []:
        info = d.get("nvmlDeviceGetPciInfo")
        if not isinstance(info, dict) or "bus_id" not in info:
            continue
        node = pci / _sysfs_address(info["bus_id"])
        node.mkdir(exist_ok=True)
        (node / "vendor").write_text("0x10de\n")
        (node / "class").write_text("0x030200\n")
        (node / "device").write_text("0x0000\n")
        if not (node / "driver").exists():
            os.symlink(drivers, node / "driver")
    driver = (doc.get("system") or {}).get("nvmlSystemGetDriverVersion")
    if isinstance(driver, str) and host.get("proc_version"):
        lib = root / "usr" / "lib" / "x86_64-linux-gnu"
        lib.mkdir(parents=True, exist_ok=True)
        (lib / f"libnvidia-ml.so.{driver}").write_text("")
    return root


def fake_smi_bin(bin_dir: Path) -> Path:
    """A directory holding only `nvidia-smi`: the replaying fake, run by this interpreter."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "nvidia-smi"
    script = ROOT / "tests" / "fake_nvml" / "nvidia_smi.py"
    exe.write_text(
        f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(script)!r}, run_name='__main__')\n"
    )
    exe.chmod(0o755)
    return bin_dir


def node_env(fake: Any, doc: Mapping[str, Any], work: Path, *, smi: bool = True) -> dict[str, str]:
    """The environment of a fake GPU node: the fake NVML library, its host root, the fake nvidia-smi on PATH."""
    # A clean environment: nothing of the test machine's (CUDA_VISIBLE_DEVICES, NCCL_*, LD_PRELOAD, ...) reaches the
    # report, which then depends on the profile alone.
    env = {"LANG": "C.UTF-8", **({"TMPDIR": os.environ["TMPDIR"]} if os.environ.get("TMPDIR") else {})}
    env = fake.env(doc, work, env)
    profile_json = work / "profile.json"
    profile_json.write_text(json.dumps(doc))
    env["FAKE_NVIDIA_SMI_PROFILE"] = str(profile_json)
    env["COMPAT_HOST_ROOT"] = str(build_host_root(doc, work / "root"))
    env["PATH"] = str(fake_smi_bin(work / "bin")) if smi else str(work / "empty-bin")
    env["HOME"] = str(work / "home")
    env["XDG_CACHE_HOME"] = str(work / "cache")
    env["COMPAT_CACHE_DIR"] = str(work / "cache")
    env["NO_COLOR"] = "1"
    return env


def doctor(env: Mapping[str, str], python: str) -> tuple[int, dict[str, Any]]:
    res = compat(["doctor", "--json", "--no-smoke", "--python", python, "--timeout", "10"], env)
    assert res.returncode in (0, 1), f"exit {res.returncode}: {res.stderr[-3000:]}"
    return res.returncode, json.loads(res.stdout)
