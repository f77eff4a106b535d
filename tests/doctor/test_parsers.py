"""The probes' pure parsers, on recorded real outputs (tests/data/doctor, see its README)."""

from __future__ import annotations

import pytest

from compat.checks.doctor_common import visible_devices
from compat.probes import (
    cudnn,
    driver,
    health,
    nvidia_smi,
    nvml,
    nvml_parse,
    resources,
    toolkits,
)
from compat.probes.frameworks import decode_cudnn, pin_conflicts, tf_facts, torch_facts
from tests.doctor.fakes import FakeNvml, data

# ------------------------------------------------------------------ /proc/driver/nvidia/version


@pytest.mark.parametrize(
    ("name", "version", "flavor", "arch", "gcc"),
    [
        (
            "470.103.01-centos7.txt",
            "470.103.01",
            "proprietary",
            "x86_64",
            "gcc version 4.8.5 20150623 (Red Hat 4.8.5-44) (GCC)",
        ),
        (
            "470.141.03-ubuntu20.txt",
            "470.141.03",
            "proprietary",
            "x86_64",
            "gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.1)",
        ),
        ("525.60.11-open-arch.txt", "525.60.11", "open", "x86_64", "gcc version 12.2.0 (GCC)"),
        ("535.113.01-empty-gcc.txt", "535.113.01", "proprietary", "x86_64", ""),
        (
            "535.161.07-ubuntu22.txt",
            "535.161.07",
            "proprietary",
            "x86_64",
            "gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)",
        ),
        (
            "550.54.15-ubuntu20.txt",
            "550.54.15",
            "proprietary",
            "x86_64",
            "gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2)",
        ),
        ("555.58-open-gentoo.txt", "555.58", "open", "x86_64", None),
        (
            "565.57.01-open-ubuntu24.txt",
            "565.57.01",
            "open",
            "x86_64",
            "gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)",
        ),
        (
            "580.173.02-truenas.txt",
            "580.173.02",
            "proprietary",
            "x86_64",
            "gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)",
        ),
        ("35.3.1-jetson-orin.txt", "35.3.1", "open", "aarch64", "gcc version 9.3.0 (Buildroot 2020.08)"),
    ],
)
def test_proc_version(name: str, version: str, flavor: str, arch: str, gcc: str | None) -> None:
    pv = driver.parse_proc_version(data("proc_version", name))
    assert pv is not None
    assert (pv["version"], pv["flavor"], pv["arch"], pv["gcc"]) == (version, flavor, arch, gcc)
    assert pv["tegra"] is name.startswith("35.")


@pytest.mark.parametrize("text", ["", "NVRM: loading NVIDIA UNIX x86_64 Kernel Module", "garbage\x00\x01"])
def test_proc_version_rejects_other_text(text: str) -> None:
    assert driver.parse_proc_version(text) is None


def test_modules_and_library_versions() -> None:
    mods = "nvidia_uvm 1794048 0 - Live 0x0000000000000000 (POE)\nnouveau 2961408 1 - Live 0x0\nnvidia 56733696 2 nvidia_uvm, Live 0x0 (POE)\n"
    assert driver.parse_modules(mods) == ["nouveau", "nvidia", "nvidia_uvm"]
    assert driver.lib_version("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05") == "535.104.05"
    assert driver.lib_version("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15") == "550.54.15"
    assert driver.lib_version("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1") is None


def test_analyse_detects_the_mismatch_after_an_upgrade() -> None:
    # 550.107.02 still loaded, 550.120 libraries installed (the situation of public code index id 7660795569).
    raw = {
        "proc_version": "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.107.02  Wed Jul 24 23:53:00 UTC 2024\n",
        "modules": ["nvidia", "nvidia_uvm"],
        "dev_nodes": [{"path": "/dev/nvidiactl", "access": True}],
        "pci_gpus": [],
        "libraries": [{"path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.120", "version": "550.120"}],
    }
    a = driver.analyse(raw)
    assert a["kernel_version"] == "550.107.02"
    assert a["userspace_versions"] == ["550.120"]
    assert a["mismatch"] is True
    raw["libraries"] = [{"path": "/usr/lib/libnvidia-ml.so.550.107.02", "version": "550.107.02"}]
    assert driver.analyse(raw)["mismatch"] is False


# ------------------------------------------------------------------ nvidia-smi


def test_nvidia_smi_csv_other_field_list() -> None:
    fields = (
        "power.limit",
        "power.min_limit",
        "power.max_limit",
        "memory.total",
        "vbios_version",
        "driver_version",
        "name",
        "gpu_uuid",
        "power.draw",
        "temperature.gpu",
        "temperature.memory",
        "clocks.current.graphics",
        "clocks.sm",
        "clocks.mem",
        "utilization.gpu",
        "utilization.memory",
        "fan.speed",
        "pcie.link.width.current",
        "pstate",
    )
    rows = nvidia_smi.parse_csv(data("nvidia_smi", "440.64-rtx2080-query.csv"), fields)
    assert rows is not None and len(rows) == 1
    assert rows[0]["name"] == "GeForce RTX 2080"
    assert rows[0]["driver_version"] == "440.64"
    assert rows[0]["temperature.memory"] is None  # "N/A"


def test_nvidia_smi_csv_with_header_and_units() -> None:
    rows = nvidia_smi.parse_csv(
        data("nvidia_smi", "590.48.01-h100-query.csv"),
        ("index", "name", "memory.total", "clocks.current.sm", "driver_version"),
    )
    assert rows is not None
    gpus = nvidia_smi.to_gpus(rows)
    assert gpus[0]["name"] == "NVIDIA H100 80GB HBM3"
    assert gpus[0]["details"]["memory_total"] == 81559 * 1024 * 1024


def test_nvidia_smi_full_query_round_trip() -> None:
    # The line our own FIELDS query produces, built from the H100 values above.
    line = "0, NVIDIA H100 80GB HBM3, GPU-5a1b, 580.159.04, 81559, 0, 81080, 9.0, Enabled, 31, 71.33, 700.00, 00000000:19:00.0\n"
    res = nvidia_smi.parse(
        {"status": "ok", "stdout": line, "output": line, "fields": list(nvidia_smi.FIELDS)}
    )
    assert res["ok"] and res["driver"] == "580.159.04"
    g = res["gpus"][0]
    assert (g["name"], g["cc"]) == ("NVIDIA H100 80GB HBM3", "9.0")
    assert g["details"]["persistence_mode"] is True
    assert g["details"]["health"]["power_limit_w"] == 700.0


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("failed-no-driver.txt", "no-driver"),
        ("failed-no-driver-curly.txt", "no-driver"),
        ("failed-mismatch-580.txt", "version-mismatch"),
    ],
)
def test_nvidia_smi_failure_messages(name: str, kind: str) -> None:
    text = data("nvidia_smi", name)
    res = nvidia_smi.parse({"status": "failed", "stdout": text, "output": text})
    assert not res["ok"] and res["kind"] == kind
    if kind == "version-mismatch":
        assert res["library_version"] == "580.178"


def test_nvidia_smi_banner_is_not_parsed_as_data() -> None:
    text = data("nvidia_smi", "banner-550.40.07-rtx4070.txt")
    res = nvidia_smi.parse({"status": "ok", "stdout": text, "output": text})
    assert res == {"ok": False, "kind": "garbage", "message": res["message"]}
    assert nvidia_smi.parse_csv(text) is None


def test_bad_field_regex_matches_the_recorded_message() -> None:
    m = nvidia_smi._BAD_FIELD_RE.search(data("nvidia_smi", "failed-compute-cap-field.txt"))
    assert m is not None and m.group(1) == "compute_cap"


# ------------------------------------------------------------------ nvcc, toolkit files


@pytest.mark.parametrize(
    ("name", "release", "build"),
    [
        ("10.1.txt", "10.1", "10.1.243"),
        ("11.0.txt", "11.0", "11.0.194"),
        ("11.1.txt", "11.1", "11.1.105"),
        ("11.5.txt", "11.5", "11.5.119"),
        ("12.1.txt", "12.1", "12.1.105"),
        ("12.4.txt", "12.4", "12.4.131"),
        ("13.0.txt", "13.0", "13.0.88"),
    ],
)
def test_nvcc(name: str, release: str, build: str) -> None:
    assert toolkits.parse_nvcc(data("nvcc", name)) == {"release": release, "build": build}


def test_nvcc_garbage_and_toolkit_version_files() -> None:
    assert toolkits.parse_nvcc("nvcc fatal   : No input files specified") is None
    assert toolkits.parse_version_json('{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}') == "12.4.1"
    assert toolkits.parse_version_json("{not json") is None
    assert toolkits.parse_version_txt("CUDA Version 10.2.89\n") == "10.2.89"
    assert toolkits.soname("libcudnn.so.8.9.7") == ("libcudnn", "8.9.7")
    assert toolkits.soname("/usr/local/cuda-13.0/lib/libcudart.so.13") == ("libcudart", "13")
    assert toolkits.soname("libcublasLt.so.12.4.5.8") == ("libcublasLt", "12.4.5.8")
    assert toolkits.soname("libcudart.so") is None


# ------------------------------------------------------------------ cuDNN


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("8.0.5-cudnn_version.h", "8.0.5"),
        ("8.9.7-cudnn_version.h", "8.9.7"),
        ("9.5.0-cudnn_version.h", "9.5.0"),
        ("9.10.1-cudnn_version.h", "9.10.1"),
        ("9.12.0-cudnn_version.h", "9.12.0"),
    ],
)
def test_cudnn_header(name: str, version: str) -> None:
    assert cudnn.parse_header(data("cudnn", name)) == version


def test_cudnn_header_without_version_and_pip() -> None:
    assert cudnn.parse_header("#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100)") is None
    pip = cudnn.pip_cudnn(
        {"nvidia-cudnn-cu12": "9.1.0.70", "nvidia-cublas-cu12": "12.4.5.8", "torch": "2.5.1"}
    )
    assert pip == [{"dist": "nvidia-cudnn-cu12", "version": "9.1.0.70", "cuda_major": 12}]


def test_cudnn_analyse_prefers_the_system_copy_and_counts_versions() -> None:
    raw = {
        "headers": [{"path": "/usr/include/cudnn_version.h", "version": "8.9.7"}],
        "libraries": [
            {
                "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
                "real_path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
                "version": "8.9.7",
            },
            {
                "path": "/usr/local/cuda-12.4/lib64/libcudnn.so.9",
                "real_path": "/usr/local/cuda-12.4/lib64/libcudnn.so.9.1.0",
                "version": "9.1.0",
            },
        ],
    }
    a = cudnn.analyse(raw, {"nvidia-cudnn-cu12": "9.1.0.70"})
    assert a["chosen"] == {"version": "8.9.7", "source": "/usr/include/cudnn_version.h"}
    assert a["distinct"] == ["8.9", "9.1"]
    only_pip = cudnn.analyse({"headers": [], "libraries": []}, {"nvidia-cudnn-cu12": "9.1.0.70"})
    assert only_pip["chosen"] == {"version": "9.1.0.70", "source": "pip nvidia-cudnn-cu12"}


# ------------------------------------------------------------------ kernel log


def test_xid_lines_all_formats() -> None:
    ev = health.parse_log(data("kernel_log", "xid79-rtx5080.txt"))
    assert [(e["code"], e["pci"]) for e in ev["xid"]] == [(79, "0000:2b:00")]
    assert [n["kind"] for n in ev["notes"]] == [
        "fallen-off-bus"
    ]  # the separate "GPU ... fallen off the bus" line
    ev = health.parse_log(data("kernel_log", "xid13-109-gpud.txt"))
    assert [e["code"] for e in ev["xid"]] == [13, 13, 13, 109]
    assert ev["xid"][0]["pid"] is None and ev["xid"][0]["process"] is None
    assert (ev["xid"][3]["pid"], ev["xid"][3]["process"]) == (1797828, "pt_main_thread")
    assert ev["xid"][0]["time"] == "Fri Aug 30 11:43:09 2024"
    assert ev["xid"][3]["message"].startswith("Ch 00000008, errorString CTX SWITCH TIMEOUT")
    ev = health.parse_log(data("kernel_log", "xid31-62-45-chia.txt"))
    assert [e["code"] for e in ev["xid"]] == [31, 62, 45, 45]
    assert ev["xid"][0]["process"] == "cuda_plot_k32_v" and ev["xid"][0]["message"].startswith("Ch 00000010")
    ev = health.parse_log(data("kernel_log", "xid31-535-rtx4090.txt"))
    assert {(e["pid"], e["process"]) for e in ev["xid"]} == {(14292, "python"), (14566, "python")}
    ev = health.parse_log(data("kernel_log", "xid63-row-remap.txt"))
    assert ev["xid"][0]["pci"] == "0000:10:1c" and "Row Remapper" in ev["xid"][0]["message"]
    ev = health.parse_log(data("kernel_log", "xid3-old-format.txt"))
    assert [(e["code"], e["pci"]) for e in ev["xid"]] == [(3, "0000:01:00")]
    ev = health.parse_log(data("kernel_log", "xid45-after-149.txt"))
    assert [e["code"] for e in ev["xid"]] == [45, 45]
    assert ev["xid_total"] == 2


def test_oom_lines() -> None:
    ev = health.parse_log(data("kernel_log", "oom-global-python3.txt"))
    assert ev["oom"] == [
        {
            "time": "2059991.491542",
            "pid": 25315,
            "process": "python3",
            "cgroup": False,
            "anon_rss": 31451456 * 1024,
        }
    ]
    ev = health.parse_log(data("kernel_log", "oom-cgroup-colab.txt"))
    assert ev["oom"][0]["cgroup"] is True and ev["oom"][0]["process"] == "onmt_train"
    ev = health.parse_log(data("kernel_log", "oom-commas-ctime.txt"))
    assert ev["oom"][0]["pid"] == 7899 and ev["oom"][0]["anon_rss"] == 15370088 * 1024


def test_driver_notes_in_the_kernel_log() -> None:
    ev = health.parse_log(data("kernel_log", "api-mismatch-470.txt"))
    assert ev["notes"] == [
        {
            "time": "319.121636",
            "kind": "api-mismatch",
            "client": "470.161.03",
            "kernel": "470.103.01",
            "message": ev["notes"][0]["message"],
        }
    ]
    ev = health.parse_log(data("kernel_log", "nouveau-probe-not-called.txt"))
    assert [n["kind"] for n in ev["notes"]] == ["no-gpu-found", "probe-not-called"]


def test_kmsg_records() -> None:
    assert health.parse_kmsg_record(
        "4,1234,5678901234,-;NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus."
    ) == ("[ 5678.901234] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.")
    assert health.parse_kmsg_record("no separator") is None


# ------------------------------------------------------------------ resources


def test_meminfo_recorded() -> None:
    m = resources.parse_meminfo(data("cgroup", "proc-meminfo-devbox.txt"))
    assert m["MemTotal"] > m["MemAvailable"] > 0
    assert m["MemTotal"] % 1024 == 0


def test_cgroup_files_recorded() -> None:
    cg = resources.parse_proc_cgroup(data("cgroup", "v1-proc-self-cgroup-devbox.txt"))
    assert cg["v1"]["memory"] == "/process_api/6149ba7d16d9b8dde18587d855c7feea"
    assert cg["v2"] == "/"
    assert resources.parse_limit(data("cgroup", "v1-memory.limit_in_bytes-devbox.txt")) is None  # "no limit"
    assert resources.parse_limit("max\n") is None
    assert resources.parse_limit("8589934592\n") == 8 * 1024**3
    assert resources.parse_kv(data("cgroup", "v1-memory.oom_control-devbox.txt"))["oom_kill"] == 0
    assert resources.parse_kv(data("cgroup", "v2-memory.events-oom3.txt"))["oom_kill"] == 3
    assert resources.parse_kv(data("cgroup", "v2-memory.events-user-slice.txt")) == {
        "low": 0,
        "high": 0,
        "max": 0,
        "oom": 0,
        "oom_kill": 3,
        "oom_group_kill": 0,
    }
    assert (
        resources.parse_cfs(
            data("cgroup", "v1-cpu.cfs_quota_us-devbox.txt"),
            data("cgroup", "v1-cpu.cfs_period_us-devbox.txt"),
        )
        is None
    )
    assert resources.parse_cfs("150000", "100000") == 1.5
    assert resources.parse_cpu_max("max 100000") is None
    assert resources.parse_cpu_max("200000 100000\n") == 2.0


# ------------------------------------------------------------------ NVML values


def test_nvml_recorded_h100() -> None:
    raw = nvml.acquire(FakeNvml.recorded("h100-580.159.04.json"))
    p = nvml_parse.parse(raw)
    assert p["ok"] and p["driver"] == "580.159.04" and p["driver_cuda"] == "13.0"
    g = p["gpus"][0]
    assert (g["name"], g["cc"]) == ("NVIDIA H100 80GB HBM3", "9.0")
    assert g["details"]["memory_total"] == 81559 * 1024 * 1024
    assert g["details"]["memory_used"] is None
    assert "nvml_errors" not in g["details"]  # "Not Supported" fields are normal, not reported


def test_nvml_recorded_several_generations() -> None:
    p = nvml_parse.parse(nvml.acquire(FakeNvml.recorded("quadro-rtx8000-x10-470.63.01.json")))
    assert p["driver_cuda"] == "11.4" and len(p["gpus"]) == 10
    assert {g["details"]["persistence_mode"] for g in p["gpus"]} == {True}
    assert p["gpus"][1]["details"]["health"]["power_usage_w"] == 13.0
    p = nvml_parse.parse(nvml.acquire(FakeNvml.recorded("rtx4070-550.40.07.json")))
    assert (
        p["driver_cuda"] == "12.4" and p["gpus"][0]["cc"] is None
    )  # NVML's cc not recorded: the matrix names it
    assert p["gpus"][0]["details"]["memory_used"] == 430 * 1024 * 1024
    p = nvml_parse.parse(nvml.acquire(FakeNvml.recorded("v100-535.171.04.json")))
    assert (p["driver_cuda"], p["gpus"][0]["cc"], p["gpus"][0]["details"]["memory_total"]) == (
        "12.2",
        "7.0",
        34079899648,
    )


def test_nvml_value_decoders() -> None:
    assert nvml_parse.cuda_version_from_int(12020) == "12.2"
    assert nvml_parse.cuda_version_from_int(13000) == "13.0"
    assert nvml_parse.cuda_version_from_int(11080) == "11.8"
    assert nvml_parse.cuda_version_from_int(0) is None
    assert nvml_parse.throttle_reasons(0x1 | 0x4 | 0x40) == [
        "gpu_idle",
        "sw_power_cap",
        "hw_thermal_slowdown",
    ]
    assert nvml_parse.throttle_reasons(None) == []


# ------------------------------------------------------------------ frameworks, environment


def test_framework_decoders() -> None:
    assert decode_cudnn(8907) == "8.9.7"
    assert decode_cudnn(90100) == "9.1.0"
    assert decode_cudnn(91000) == "9.10.0"
    assert decode_cudnn(None) is None
    t = torch_facts(
        {
            "version": "2.5.1+cu124",
            "cuda": "12.4",
            "cudnn": 90100,
            "arch_flags": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        }
    )
    assert t == {
        "torch": "2.5.1+cu124",
        "torch_cuda": "12.4",
        "torch_cudnn": "9.1.0",
        "torch_archs": "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        "torch_build": "cuda",
    }
    assert torch_facts({"version": "2.13.0+cpu", "cuda": None})["torch_build"] == "cpu"
    assert torch_facts({"version": "2.4.0+rocm6.1", "hip": "6.1.4"})["torch_build"] == "rocm"
    tf = tf_facts(
        {
            "version": "2.16.1",
            "build_info": {
                "cuda_version": "12.3",
                "cudnn_version": "8",
                "is_cuda_build": True,
                "cuda_compute_capabilities": ["sm_50", "sm_60", "sm_70", "sm_80", "compute_90"],
            },
        }
    )
    assert tf == {
        "tensorflow": "2.16.1",
        "tf_cuda": "12.3",
        "tf_cudnn": "8",
        "tf_archs": "sm_50 sm_60 sm_70 sm_80 compute_90",
        "tf_build": "cuda",
    }
    win = tf_facts(
        {
            "version": "2.10.0",
            "build_info": {"cuda_version": "64_112", "cudnn_version": "64_8", "is_cuda_build": True},
        }
    )
    assert (win["tf_cuda"], win["tf_cudnn"]) == ("11.2", "8")
    assert tf_facts({"version": "2.21.0", "build_info": {"is_cuda_build": False}})["tf_build"] == "cpu"


def test_pin_conflicts_between_torch_and_tensorflow() -> None:
    dists = {
        "torch": "2.5.1",
        "tensorflow": "2.16.1",
        "nvidia-cudnn-cu12": "8.9.7.29",
        "nvidia-cublas-cu12": "12.4.5.8",
    }
    reqs = {
        "torch": [
            'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"',
            'nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux" and platform_machine == "x86_64"',
            "filelock",
        ],
        "tensorflow": [
            'nvidia-cudnn-cu12==8.9.7.29; extra == "and-cuda"',
            'nvidia-cublas-cu12==12.3.4.1; extra == "and-cuda"',
        ],
    }
    got = pin_conflicts(dists, reqs)
    import platform

    pairs = {(c["framework"], c["dist"]) for c in got}
    assert ("tensorflow", "nvidia-cublas-cu12") in pairs
    if platform.system() == "Linux" and platform.machine() == "x86_64":
        assert ("torch", "nvidia-cudnn-cu12") in pairs
    assert ("tensorflow", "nvidia-cudnn-cu12") not in pairs
    # Without any nvidia-* installed the extra was not wanted: no conflict from it.
    assert pin_conflicts({"tensorflow": "2.16.1"}, {"tensorflow": reqs["tensorflow"]}) == []


@pytest.mark.parametrize(
    ("value", "count", "visible", "hides_all", "invalid"),
    [
        (None, 2, None, False, None),
        ("", 2, [], True, ""),
        ("-1", 2, [], True, "-1"),
        ("0,1", 2, ["0", "1"], False, None),
        ("1,5,0", 2, ["1"], False, "5"),
        ("GPU-5a1b", 2, ["GPU-5a1b"], False, None),
        ("NoDevFiles", 1, [], True, "NoDevFiles"),
    ],
)
def test_cuda_visible_devices(
    value: str | None, count: int, visible: list[str] | None, hides_all: bool, invalid: str | None
) -> None:
    got = visible_devices(value, count, ["GPU-5a1b2c3d-0000"])
    assert (got.visible, got.hides_all, got.invalid) == (
        tuple(visible) if visible is not None else None,
        hides_all,
        invalid,
    )
