"""The doctor's checks, each on the probe results of one situation, assembled by the same code gather_facts uses."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compat.checks.doctor import doctor_checks
from compat.facts import Facts
from compat.findings import Finding, Report
from compat.probes import assemble_probes, facts_from_probes, health, nvidia_smi, nvml, nvml_parse
from compat.resolver import resolve
from tests.doctor.fakes import FakeNvml, FakeNVMLError, data

GIB = 1024**3

NO_GPU_NVML = {
    "nvml_raw_status": "error",
    "nvml": {
        "ok": False,
        "kind": "library-not-found",
        "message": "NVML Shared Library Not Found",
        "code": 12,
    },
    "nvidia_smi": {"ok": False, "kind": "missing", "message": "nvidia-smi not found", "status": "not-found"},
}


def healthy_box() -> dict[str, Any]:
    """Raw probe results of a healthy CPU-only Linux box (the shapes the probes return)."""
    return {
        "gpu": copy.deepcopy(NO_GPU_NVML),
        "driver": {
            "status": "ok",
            "proc_version": None,
            "modules": [],
            "sys_module_version": None,
            "dev_nodes": [],
            "pci_gpus": [],
            "libraries": [],
        },
        "toolkits": {
            "status": "ok",
            "nvcc": {"status": "not-found"},
            "cuda_home": {},
            "toolkits": [],
            "ld_library_path_libs": [],
        },
        "cudnn": {"status": "ok", "headers": [], "libraries": []},
        "frameworks": {
            "status": "ok",
            "python": "3.11.7",
            "executable": "/usr/bin/python3",
            "distributions": {},
            "requires": {},
            "conflicts": [],
            "static": {},
            "children": {},
        },
        "resources": {
            "status": "ok",
            "memory": {"total": 64 * GIB, "available": 50 * GIB, "swap_total": 0, "swap_free": 0},
            "cgroup": {"version": 2, "memory_limit": None, "oom_kills": 0, "cpu_quota": None},
            "shm": {"path": "/dev/shm", "total": 32 * GIB, "free": 32 * GIB},
            "nofile": {"soft": 65536, "hard": 65536},
            "cpus": {"count": 16, "affinity": 16},
            "disk": [{"path": "/work", "total": 500 * GIB, "free": 200 * GIB}],
        },
        "health": {
            "status": "ok",
            "source": "dmesg",
            "tried": [],
            "xid": [],
            "oom": [],
            "notes": [],
            "xid_total": 0,
            "oom_total": 0,
        },
        "environment": {
            "status": "ok",
            "vars": {},
            "container": {"in_container": False, "signs": [], "nvidia_visible_devices": None},
            "wsl": False,
        },
    }


def with_gpus(res: dict[str, Any], fake: FakeNvml) -> dict[str, Any]:
    parsed = nvml_parse.parse(nvml.acquire(fake))
    res["gpu"] = {
        "nvml_raw_status": "ok",
        "nvml": parsed,
        "nvidia_smi": {"ok": False, "kind": "skipped", "message": "not needed: NVML answered"},
    }
    res["driver"]["modules"] = ["nvidia", "nvidia_uvm"]
    res["driver"]["dev_nodes"] = [
        {"path": p, "access": True} for p in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm")
    ]
    res["driver"]["proc_version"] = (
        f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {parsed['driver']}  Tue Mar 19 2024\n"
    )
    res["driver"]["libraries"] = [
        {"path": f"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.{parsed['driver']}", "version": parsed["driver"]}
    ]
    return res


def gpu_doc(**dev: Any) -> dict[str, Any]:
    base = {
        "name": "NVIDIA H100 80GB HBM3",
        "cc": [9, 0],
        "uuid": "GPU-5a1b2c3d-0000",
        "pci_bus_id": "00000000:2B:00.0",
        "memory": {"total": 80 * GIB, "used": 1 * GIB, "free": 79 * GIB},
        "processes": [],
        "graphics_processes": [],
        "temperature": 40,
        "temperature_slowdown": 87,
        "clocks_event_reasons": 1,
        "power_usage": 70000,
        "power_limit": 700000,
        "power_default_limit": 700000,
        "ecc_volatile": 0,
        "ecc_aggregate": 0,
        "retired_sbe": [],
        "retired_dbe": [],
        "retired_pending": 0,
        "remapped_rows": [0, 0, 0, 0],
        "pcie": [5, 5, 16, 16],
        "mig_mode": [0, 0],
        "persistence_mode": 1,
    }
    base.update(dev)
    return {"driver_version": "580.159.04", "cuda_driver_version": 13000, "devices": [base]}


def report(res: dict[str, Any], m: Any, *, require_gpu: bool = False) -> Report:
    probes = assemble_probes(res)
    probes["meta"] = {"probes": sorted(k for k in probes if not k.startswith("_"))}
    facts = facts_from_probes(probes)
    return resolve(facts, m, require_gpu=require_gpu, extra_checks=doctor_checks)


def ids(r: Report) -> dict[str, str]:
    return {f.id: f.severity for f in r.findings}


def one(r: Report, cid: str) -> Finding:
    found = [f for f in r.findings if f.id == cid]
    assert len(found) == 1, (cid, [f.id for f in r.findings])
    return found[0]


# ------------------------------------------------------------------ no GPU, no driver, nouveau, containers


def test_cpu_only_box_is_fine(doctor_matrix: Any) -> None:
    r = report(healthy_box(), doctor_matrix)
    assert ids(r) == {"gpu.none": "info"}
    f = one(r, "gpu.none")
    assert "NVML Shared Library Not Found" in f.message and f.group == "driver"
    assert r.verdict == "ok"


def test_cpu_only_box_with_require_gpu(doctor_matrix: Any) -> None:
    r = report(healthy_box(), doctor_matrix, require_gpu=True)
    assert ids(r) == {"gpu.required": "error"}


def test_gpu_on_the_bus_without_driver(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["driver"]["pci_gpus"] = [
        {"address": "0000:01:00.0", "device": "0x2684", "class": "0x030000", "driver": None}
    ]
    r = report(res, doctor_matrix)
    f = one(r, "driver.missing")
    assert f.severity == "error" and "0000:01:00.0" in f.message and "not loaded" in f.message
    assert "gpu.none" not in ids(r)
    assert any(x.command == "sudo ubuntu-drivers install" for x in f.fixes)


def test_nouveau_holds_the_gpu(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["driver"]["modules"] = ["nouveau"]
    res["driver"]["pci_gpus"] = [
        {"address": "0000:01:00.0", "device": "0x1b80", "class": "0x030000", "driver": "nouveau"}
    ]
    r = report(res, doctor_matrix)
    assert ids(r) == {"driver.nouveau": "error"}
    assert "blacklist nouveau" in (one(r, "driver.nouveau").fixes[0].command or "")


def test_container_without_the_nvidia_runtime(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["environment"]["container"] = {
        "in_container": True,
        "signs": ["/.dockerenv"],
        "nvidia_visible_devices": "all",
    }
    r = report(res, doctor_matrix)
    f = one(r, "driver.container")
    assert f.severity == "warning" and "--gpus all" in (f.fixes[0].command or "")
    res["environment"]["container"]["nvidia_visible_devices"] = None
    assert "driver.container" not in ids(report(res, doctor_matrix))  # a plain CPU container: just no GPU


# ------------------------------------------------------------------ driver state


def test_driver_library_mismatch(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["gpu"]["nvml"] = {
        "ok": False,
        "kind": "version-mismatch",
        "message": "RM has detected an NVML/RM version mismatch.",
        "code": 18,
    }
    text = data("nvidia_smi", "failed-mismatch-580.txt")
    res["gpu"]["nvidia_smi"] = {
        **nvidia_smi.parse({"status": "failed", "stdout": text, "output": text}),
        "status": "failed",
    }
    res["driver"].update(
        proc_version=data("proc_version", "580.173.02-truenas.txt"),
        modules=["nvidia"],
        libraries=[{"path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.178.04", "version": "580.178.04"}],
        dev_nodes=[{"path": "/dev/nvidiactl", "access": True}, {"path": "/dev/nvidia-uvm", "access": True}],
    )
    r = report(res, doctor_matrix)
    f = one(r, "driver.mismatch")
    assert f.severity == "error" and "580.173.02" in f.message and "580.178.04" in f.message
    assert "NVML library version 580.178" in f.message
    assert f.fixes[0].command == "sudo reboot"
    assert "gpu.none" not in ids(r) and "driver.missing" not in ids(r)
    assert r.facts["driver"]["raw"] == "580.173.02"  # the running kernel module


def test_dev_nodes_missing_or_denied(doctor_matrix: Any) -> None:
    res = with_gpus(healthy_box(), FakeNvml(gpu_doc()))
    res["driver"]["dev_nodes"] = [
        {"path": "/dev/nvidia0", "access": True},
        {"path": "/dev/nvidiactl", "access": True},
    ]
    f = one(report(res, doctor_matrix), "driver.dev-nodes")
    assert "/dev/nvidia-uvm" in f.title and f.fixes[0].command == "sudo nvidia-modprobe -u -c=0"
    res["driver"]["dev_nodes"] = [
        {"path": "/dev/nvidia0", "access": False},
        {"path": "/dev/nvidiactl", "access": True},
        {"path": "/dev/nvidia-uvm", "access": True},
    ]
    f = one(report(res, doctor_matrix), "driver.dev-nodes")
    assert "No permission" in f.title and "/dev/nvidia0" in f.message


def test_nvml_hang_is_an_error_and_gpus_are_unknown(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["gpu"] = {"status": "timeout", "error": "probe did not finish within 13 s"}
    r = report(res, doctor_matrix)
    assert ids(r)["driver.nvml"] == "error"
    assert r.facts["gpus"] is None
    assert "gpu.required" in ids(report(res, doctor_matrix, require_gpu=True))


def test_nvidia_smi_garbage_when_nvml_fails(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["gpu"]["nvml"] = {"ok": False, "kind": "error", "message": "Unknown Error", "code": 999}
    res["gpu"]["nvidia_smi"] = {
        "ok": False,
        "kind": "garbage",
        "message": "unexpected output from nvidia-smi: 'x'",
    }
    r = report(res, doctor_matrix)
    assert ids(r)["driver.nvidia-smi"] == "warning" and ids(r)["driver.nvml"] == "warning"


def test_cuda_visible_devices(doctor_matrix: Any) -> None:
    res = with_gpus(healthy_box(), FakeNvml(gpu_doc()))
    res["environment"]["vars"] = {"CUDA_VISIBLE_DEVICES": ""}
    assert one(report(res, doctor_matrix), "env.cuda-visible-devices").severity == "error"
    res["environment"]["vars"] = {"CUDA_VISIBLE_DEVICES": "0,3"}
    f = one(report(res, doctor_matrix), "env.cuda-visible-devices")
    assert f.severity == "warning" and "'3'" in f.title
    res["environment"]["vars"] = {"CUDA_VISIBLE_DEVICES": "GPU-5a1b"}
    assert "env.cuda-visible-devices" not in ids(report(res, doctor_matrix))


# ------------------------------------------------------------------ GPUs and their health


def test_healthy_h100(doctor_matrix: Any) -> None:
    r = report(with_gpus(healthy_box(), FakeNvml(gpu_doc())), doctor_matrix)
    assert not [f for f in r.findings if f.group in ("health", "driver")], [f.id for f in r.findings]
    assert r.facts["driver"]["raw"] == "580.159.04" and r.facts["driver_cuda"]["raw"] == "13.0"
    assert r.facts["gpus"][0]["cc"] == "9.0" and r.facts["gpus"][0]["memory_total"] == 80 * GIB


@pytest.mark.parametrize(
    ("dev", "cid", "sev", "needle"),
    [
        ({"temperature": 89, "clocks_event_reasons": 0x40}, "gpu.thermal", "warning", "89 °C"),
        ({"clocks_event_reasons": 0x80}, "gpu.throttle", "warning", "hw_power_brake_slowdown"),
        ({"power_limit": 400000}, "gpu.power", "warning", "400 W"),
        ({"ecc_volatile": 2, "ecc_aggregate": 2}, "gpu.ecc", "error", "2 uncorrectable"),
        ({"ecc_aggregate": 5}, "gpu.ecc", "warning", "lifetime"),
        ({"remapped_rows": [0, 1, 1, 0]}, "gpu.retired-pages", "warning", "reset"),
        ({"retired_pending": 1}, "gpu.retired-pages", "warning", "reset"),
        ({"remapped_rows": [0, 4, 0, 1]}, "gpu.retired-pages", "error", "could not remap"),
        ({"pcie": [4, 5, 8, 16]}, "gpu.pcie", "warning", "x8 of x16"),
        (
            {
                "memory": {"total": 80 * GIB, "used": 70 * GIB, "free": 10 * GIB},
                "processes": [{"pid": 4242, "used": 70 * GIB}],
            },
            "gpu.memory-in-use",
            "warning",
            "pid 4242",
        ),
        ({"mig_mode": [1, 1]}, "gpu.mig", "info", "MIG"),
    ],
)
def test_gpu_health(doctor_matrix: Any, dev: dict[str, Any], cid: str, sev: str, needle: str) -> None:
    r = report(with_gpus(healthy_box(), FakeNvml(gpu_doc(**dev))), doctor_matrix)
    f = one(r, cid)
    assert f.severity == sev
    assert needle in f.title + f.message


def test_idle_pcie_generation_drop_is_normal(doctor_matrix: Any) -> None:
    r = report(with_gpus(healthy_box(), FakeNvml(gpu_doc(pcie=[1, 5, 16, 16]))), doctor_matrix)
    assert "gpu.pcie" not in ids(r)


def test_geforce_without_ecc_is_not_a_problem(doctor_matrix: Any) -> None:
    fake = FakeNvml.recorded("rtx4070-550.40.07.json")
    r = report(with_gpus(healthy_box(), fake), doctor_matrix)
    assert not [f for f in r.findings if f.group == "health"]
    gpu = r.facts["gpus"][0]
    assert gpu["cc"] is None and gpu["name"] == "NVIDIA GeForce RTX 4070"


# ------------------------------------------------------------------ kernel log


def test_xid_events_are_explained_from_the_table(doctor_matrix: Any) -> None:
    res = with_gpus(healthy_box(), FakeNvml(gpu_doc()))
    log = data("kernel_log", "xid79-rtx5080.txt") + data("kernel_log", "xid31-62-45-chia.txt")
    res["health"].update(health.parse_log(log))
    r = report(res, doctor_matrix)
    xids = {f.facts["xid"]: f for f in r.findings if f.id == "gpu.xid"}
    assert set(xids) == {79, 31, 62, 45}
    assert xids[79].severity == "error" and "GPU 0 (0000:2b:00)" in xids[79].title  # mapped to NVML's bus id
    assert "fallen off the bus" in xids[79].title and "Reboot" in xids[79].fixes[0].text
    assert xids[31].severity == "warning" and "cuda_plot_k32_v" in xids[31].message
    assert xids[45].severity == "info" and xids[45].facts["count"] == 2
    assert all(f.group == "health" for f in xids.values())


def test_unknown_xid_code_and_missing_table(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["health"].update(health.parse_log("NVRM: Xid (PCI:0000:01:00): 4242, something new\n"))
    f = one(report(res, doctor_matrix), "gpu.xid")
    assert f.severity == "warning" and "not in compat's Xid table" in f.title


def test_oom_kills(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["health"].update(
        health.parse_log(
            data("kernel_log", "oom-global-python3.txt") + data("kernel_log", "oom-cgroup-colab.txt")
        )
    )
    f = one(report(res, doctor_matrix), "host.oom")
    assert (
        f.severity == "warning" and "python3 (pid 25315" in f.message and "1 of them at a cgroup" in f.message
    )


def test_unreadable_kernel_log_is_a_skip(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["health"] = {
        "status": "unavailable",
        "tried": [],
        "error": "dmesg: dmesg exited with status 1: dmesg: read "
        "kernel buffer failed: Operation not permitted; /dev/kmsg: permission denied",
    }
    r = report(res, doctor_matrix)
    skips = {s.id: s.reason for s in r.skipped}
    assert "Operation not permitted" in skips["gpu.xid"] and "host.oom" in skips


# ------------------------------------------------------------------ resources


@pytest.mark.parametrize(
    ("change", "cid", "sev"),
    [
        (
            {"cgroup": {"version": 2, "memory_limit": 16 * GIB, "oom_kills": 3, "cpu_quota": None}},
            "host.cgroup-oom",
            "warning",
        ),
        ({"shm": {"path": "/dev/shm", "total": 64 * 1024**2, "free": 64 * 1024**2}}, "host.shm", "warning"),
        (
            {"memory": {"total": 64 * GIB, "available": 1 * GIB, "swap_total": 0, "swap_free": 0}},
            "host.memory",
            "warning",
        ),
        (
            {"cgroup": {"version": 1, "memory_limit": 2 * GIB, "oom_kills": 0, "cpu_quota": None}},
            "host.memory",
            "warning",
        ),
        ({"nofile": {"soft": 256, "hard": 4096}}, "host.nofile", "warning"),
        (
            {"cgroup": {"version": 2, "memory_limit": None, "oom_kills": 0, "cpu_quota": 2.0}},
            "host.cpu-quota",
            "info",
        ),
        ({"disk": [{"path": "/work", "total": 100 * GIB, "free": GIB // 2}]}, "host.disk", "warning"),
    ],
)
def test_resources(doctor_matrix: Any, change: dict[str, Any], cid: str, sev: str) -> None:
    res = healthy_box()
    res["resources"].update(change)
    f = one(report(res, doctor_matrix), cid)
    assert f.severity == sev and f.group == "resources"


def test_docker_default_shm_message(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["resources"]["shm"] = {"path": "/dev/shm", "total": 64 * 1024**2, "free": 60 * 1024**2}
    f = one(report(res, doctor_matrix), "host.shm")
    assert "64 MiB" in f.title and "--shm-size" in (f.fixes[0].command or "")


# ------------------------------------------------------------------ toolkits, cuDNN, shadowing


def test_several_toolkits_and_a_path_home_conflict(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["toolkits"].update(
        nvcc={
            "status": "ok",
            "release": "11.8",
            "build": "11.8.89",
            "path": "/usr/local/cuda-11.8/bin/nvcc",
            "real_path": "/usr/local/cuda-11.8/bin/nvcc",
        },
        cuda_home={"CUDA_HOME": "/usr/local/cuda-12.4"},
        toolkits=[
            {
                "path": "/usr/local/cuda-12.4",
                "real_path": "/usr/local/cuda-12.4",
                "version": "12.4.1",
                "source": "version.json",
            },
            {
                "path": "/usr/local/cuda-11.8",
                "real_path": "/usr/local/cuda-11.8",
                "version": "11.8.0",
                "source": "version.json",
            },
        ],
    )
    r = report(res, doctor_matrix)
    f = one(r, "toolkit.multiple")
    assert f.severity == "warning" and "11.8" in f.message and "12.4" in f.message
    assert r.facts["cuda"]["raw"] == "11.8"  # nvcc on PATH is what builds use
    # Issue 13: the fix exports the toolkit's root, never the nvcc binary, and PATH without a stale $CUDA_HOME.
    assert f.fixes[0].command == "export CUDA_HOME=/usr/local/cuda-11.8 PATH=/usr/local/cuda-11.8/bin:$PATH"


def test_ld_library_path_shadowing(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["toolkits"]["ld_library_path_libs"] = [
        {
            "dir": "/usr/local/cuda-11.8/lib64",
            "file": "libcudnn.so.8.9.2",
            "lib": "libcudnn",
            "version": "8.9.2",
        }
    ]
    res["environment"]["vars"] = {"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64:/opt/other"}
    assert "libs.shadowed" not in ids(report(res, doctor_matrix))  # no framework bundles CUDA libraries here
    res["frameworks"]["distributions"] = {"torch": "2.5.1", "nvidia-cudnn-cu12": "9.1.0.70"}
    f = one(report(res, doctor_matrix), "libs.shadowed")
    assert f.severity == "warning" and "libcudnn.so.8.9.2" in f.message
    assert f.fixes[0].command == "export LD_LIBRARY_PATH=/opt/other"
    res["frameworks"]["children"] = {
        "torch": {
            "status": "ok",
            "mode": "torch",
            "result": {
                "stage": "done",
                "version": "2.5.1",
                "cuda": "12.4",
                "libs": ["/usr/local/cuda-11.8/lib64/libcudnn.so.8.9.2"],
            },
        }
    }
    f = one(report(res, doctor_matrix), "libs.shadowed")
    assert f.severity == "error" and "torch loaded /usr/local/cuda-11.8/lib64/libcudnn.so.8.9.2" in f.message


def test_several_system_cudnn(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["cudnn"]["headers"] = [
        {"path": "/usr/include/cudnn_version.h", "version": "8.9.7"},
        {"path": "/usr/local/cuda-12.4/include/cudnn_version.h", "version": "9.1.0"},
    ]
    r = report(res, doctor_matrix)
    assert one(r, "cudnn.multiple").severity == "warning"
    assert r.facts["cudnn"]["raw"] == "8.9.7"


# ------------------------------------------------------------------ frameworks


def _child(status: str, **kw: Any) -> dict[str, Any]:
    return {
        "status": status,
        "mode": "torch",
        "returncode": kw.pop("returncode", -11),
        "signal": kw.pop("signal", None),
        "seconds": 1.0,
        "describe": "",
        "output": kw.pop("output", ""),
        "result": kw.pop("result", None),
        "timeout": 20.0,
        **kw,
    }


def test_framework_import_crash(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["frameworks"]["distributions"] = {"torch": "2.5.1"}
    res["frameworks"]["requires"] = {"torch": ['nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"']}
    res["frameworks"]["children"] = {
        "torch": _child(
            "crashed",
            signal="SIGSEGV",
            output="Fatal Python error: Segmentation fault",
            result={"stage": "cuda-init"},
        )
    }
    r = report(res, doctor_matrix)
    f = one(r, "framework.import-failed")
    assert f.severity == "error" and f.title == "import torch crashed with SIGSEGV (during cuda-init)"
    assert "Segmentation fault" in f.message
    assert r.facts["torch"]["raw"] == "2.5.1" and r.facts["torch"]["source"] == "installed distribution torch"


def test_framework_static_facts_when_the_import_fails(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["frameworks"]["distributions"] = {"torch": "2.5.1+cu121"}
    res["frameworks"]["static"] = {
        "torch": {
            "version": "2.5.1+cu121",
            "cuda": "12.1",
            "hip": None,
            "path": "/site-packages/torch/version.py",
        }
    }
    res["frameworks"]["children"] = {"torch": _child("timeout", returncode=None)}
    r = report(res, doctor_matrix)
    assert r.facts["torch_cuda"] == {
        "raw": "12.1",
        "value": "12.1",
        "source": "/site-packages/torch/version.py (not imported)",
    }
    assert one(r, "framework.import-failed").title.startswith("import torch did not finish within 20 s")


def test_framework_facts_from_the_child(doctor_matrix: Any) -> None:
    res = with_gpus(healthy_box(), FakeNvml(gpu_doc()))
    res["frameworks"]["distributions"] = {"torch": "2.11.0+cu130"}
    res["frameworks"]["children"] = {
        "torch": _child(
            "ok",
            returncode=0,
            result={
                "stage": "done",
                "version": "2.11.0+cu130",
                "cuda": "13.0",
                "cudnn": 91300,
                "arch_flags": "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
                "cuda_available": True,
                "device_count": 1,
            },
        )
    }
    r = report(res, doctor_matrix)
    assert r.facts["torch_cudnn"]["raw"] == "9.13.0" and r.facts["torch_build"]["raw"] == "cuda"
    assert "framework.cuda-unavailable" not in ids(r)


def test_cuda_build_that_sees_no_gpu(doctor_matrix: Any) -> None:
    res = with_gpus(healthy_box(), FakeNvml(gpu_doc()))
    res["frameworks"]["distributions"] = {"torch": "2.11.0+cu130"}
    res["frameworks"]["children"] = {
        "torch": _child(
            "ok",
            returncode=0,
            result={
                "stage": "done",
                "version": "2.11.0+cu130",
                "cuda": "13.0",
                "cuda_available": False,
                "device_count": 0,
                "warnings": [
                    "CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment"
                ],
            },
        )
    }
    f = one(report(res, doctor_matrix), "framework.cuda-unavailable")
    assert f.severity == "error" and "CUDA unknown error" in f.message


def test_cuda_unavailable_explained_by_an_old_driver_is_not_repeated(doctor_matrix: Any) -> None:
    res = with_gpus(
        healthy_box(), FakeNvml(dict(gpu_doc(), driver_version="470.141.03", cuda_driver_version=11040))
    )
    res["frameworks"]["distributions"] = {"torch": "2.5.1+cu124"}
    res["frameworks"]["children"] = {
        "torch": _child(
            "ok",
            returncode=0,
            result={
                "stage": "done",
                "version": "2.5.1+cu124",
                "cuda": "12.4",
                "cuda_available": False,
                "device_count": 0,
            },
        )
    }
    r = report(res, doctor_matrix)
    assert ids(r).get("driver.cuda") == "error"
    assert "framework.cuda-unavailable" not in ids(r)


def test_pin_conflict_finding(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["frameworks"]["conflicts"] = [
        {
            "framework": "tensorflow",
            "framework_version": "2.16.1",
            "dist": "nvidia-cudnn-cu12",
            "requires": "==8.9.7.29",
            "installed": "9.1.0.70",
            "extra": "and-cuda",
        }
    ]
    f = one(report(res, doctor_matrix), "framework.pins-conflict")
    assert f.severity == "error" and "[and-cuda]" in f.message
    assert f.fixes[1].command == "pip install 'nvidia-cudnn-cu12==8.9.7.29'"


def test_broken_interpreter_finding(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["frameworks"] = {
        "status": "error",
        "python_executable": "/opt/py/bin/python",
        "meta": _child("failed", returncode=127, output="libpython3.10.so.1.0: cannot open"),
        "error": "the interpreter /opt/py/bin/python exited with status 127",
    }
    f = one(report(res, doctor_matrix), "python.interpreter")
    assert f.severity == "error" and "libpython3.10" in f.message


# ------------------------------------------------------------------ environment


def test_environment_settings(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["environment"]["vars"] = {
        "CUDA_LAUNCH_BLOCKING": "1",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "NCCL_P2P_DISABLE": "1",
        "NCCL_DEBUG": "INFO",
    }
    r = report(res, doctor_matrix)
    assert one(r, "env.launch-blocking").severity == "warning"
    f = one(r, "env.settings")
    assert f.severity == "info" and "PYTORCH_CUDA_ALLOC_CONF" in f.message and "NCCL_P2P_DISABLE" in f.message
    assert "NCCL_DEBUG" not in f.message


def test_wsl_without_the_driver_bridge(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["environment"].update(wsl=True, wsl_lib=False, dxg=True)
    assert one(report(res, doctor_matrix), "driver.wsl").severity == "warning"


def test_probe_that_died_is_a_skip_not_a_pass(doctor_matrix: Any) -> None:
    res = healthy_box()
    res["resources"] = {"status": "timeout", "error": "probe did not finish within 13 s"}
    r = report(res, doctor_matrix)
    skips = {s.id: s.reason for s in r.skipped}
    assert skips["host.shm"] == "resources probe: probe did not finish within 13 s"
    assert "probe.failed.resources" in skips


def test_checks_on_facts_without_probes_skip(doctor_matrix: Any) -> None:
    r = resolve(Facts(), doctor_matrix, extra_checks=doctor_checks)
    assert not [f for f in r.findings if f.severity != "info"]
    assert {"host.shm", "framework.import-failed", "env.settings"} <= {s.id for s in r.skipped}


def test_nvml_error_class_from_fake_matches_real_codes() -> None:
    assert nvml.error_kind(FakeNVMLError(18).value) == "version-mismatch"


def test_malformed_probe_data_is_a_skip_not_a_crash(doctor_matrix: Any) -> None:
    probes = {
        "health": {"status": "ok", "xid": "not a list of events"},
        "resources": {"status": "ok", "shm": 5},
    }
    r = resolve(Facts(probes=probes), doctor_matrix, extra_checks=doctor_checks)
    skips = {s.id: s.reason for s in r.skipped}
    # The typed model ignores the malformed values (the checks run on the rest) and says which it ignored.
    assert skips["probe.failed.health"] == "unexpected probe data: health.xid ignored"
    assert skips["probe.failed.resources"] == "unexpected probe data: resources.shm ignored"
    assert skips["host.shm"] == "/dev/shm: unknown size"


def test_cpu_container_on_a_gpu_host(doctor_matrix: Any) -> None:
    """/proc/modules shows the host's nvidia module, but no GPU was given to this container: not an error."""
    res = healthy_box()
    res["driver"]["modules"] = ["nvidia", "nvidia_uvm"]
    res["environment"]["container"] = {
        "in_container": True,
        "signs": ["/.dockerenv"],
        "nvidia_visible_devices": None,
    }
    r = report(res, doctor_matrix)
    assert ids(r) == {"gpu.none": "info"}
    res["environment"]["container"]["in_container"] = False
    assert one(report(res, doctor_matrix), "driver.dev-nodes").severity == "error"
