"""Faults at every probe boundary: hanging, crashing, lying or refusing tools and libraries. Each must end as a
result with its reason, inside its time bound, never as an exception or a hang."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from compat._proc import run as run_command
from compat.probes import driver, frameworks, health, nvidia_smi, nvml, nvml_parse, resources
from compat.probes.host import HostFS, run_bounded
from compat.probes.outcome import describe_child
from tests.doctor.fakes import (
    GPU_IS_LOST,
    LIB_RM_VERSION_MISMATCH,
    NO_PERMISSION,
    DeniedFS,
    FakeBin,
    FakeNvml,
    FakeNVMLError,
    data,
    env_with,
    fake_python,
)

# ------------------------------------------------------------------ the subprocess runner


def test_run_command_kills_the_whole_process_group(fake_bin: FakeBin) -> None:
    # The script's child keeps stdout open: killing only the shell would leave communicate() waiting for it.
    exe = fake_bin("slow", "sleep 30 &\nsleep 30\n")
    t0 = time.monotonic()
    res = run_command([str(exe)], 0.5)
    assert res.status == "timeout"
    assert time.monotonic() - t0 < 5
    assert "did not answer within" in res.describe()


def test_run_command_outcomes(fake_bin: FakeBin, tmp_path: Path) -> None:
    assert (
        run_command(["definitely-not-a-command-compat"], 1, environ=env_with(tmp_path)).status == "not-found"
    )
    crash = fake_bin("crash", "kill -SEGV $$\n")
    res = run_command([str(crash)], 5)
    assert (res.status, res.describe()) == ("crashed", "crash crashed (SIGSEGV)")
    bad = tmp_path / "notexec"
    bad.write_text("#!/bin/sh\necho hi\n")
    res = run_command([str(bad)], 5)
    assert res.status == "error" and res.error == "permission denied"
    garbage = fake_bin("garbage", "printf '\\377\\376\\000 binary'\n")
    res = run_command([str(garbage)], 5)
    assert res.ok and "\ufffd" in res.stdout  # undecodable bytes are replaced, not raised


def test_run_bounded_reports_a_hung_and_a_broken_probe() -> None:
    release = threading.Event()

    def boom() -> dict[str, str]:
        raise RuntimeError("probe bug")

    t0 = time.monotonic()
    out = run_bounded(
        {"hung": lambda: release.wait(30), "broken": boom, "fine": lambda: {"status": "ok"}}, 0.5
    )
    release.set()
    assert time.monotonic() - t0 < 3
    assert out["hung"]["status"] == "timeout"
    assert out["broken"] == {"status": "error", "error": "probe failed: RuntimeError: probe bug"}
    assert out["fine"] == {"status": "ok"}


# ------------------------------------------------------------------ nvidia-smi


def _smi(fake_bin: FakeBin, script: str, timeout: float = 5.0) -> dict[str, object]:
    fake_bin("nvidia-smi", script)
    raw = nvidia_smi.probe(timeout, env_with(fake_bin.dir))  # type: ignore[attr-defined]
    return nvidia_smi.parse(raw)


def test_nvidia_smi_hangs(fake_bin: FakeBin) -> None:
    t0 = time.monotonic()
    res = _smi(fake_bin, "sleep 60\n", timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert res["ok"] is False and res["kind"] == "hang"


def test_nvidia_smi_crashes(fake_bin: FakeBin) -> None:
    res = _smi(fake_bin, "kill -ABRT $$\n")
    assert res["kind"] == "crashed" and "SIGABRT" in str(res["message"])


def test_nvidia_smi_prints_garbage(fake_bin: FakeBin) -> None:
    res = _smi(fake_bin, "echo 'Segmentation fault (core dumped)?? 0x7f'\n")
    assert res["kind"] == "garbage"


def test_nvidia_smi_cannot_talk_to_the_driver(fake_bin: FakeBin, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_text(data("nvidia_smi", "failed-no-driver.txt"))
    res = _smi(fake_bin, f"cat {msg}\nexit 9\n")
    assert res["kind"] == "no-driver"


def test_nvidia_smi_mismatch(fake_bin: FakeBin, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_text(data("nvidia_smi", "failed-mismatch-580.txt"))
    res = _smi(fake_bin, f"cat {msg}\nexit 18\n")
    assert (res["kind"], res["library_version"]) == ("version-mismatch", "580.178")


def test_old_nvidia_smi_without_compute_cap_is_retried(fake_bin: FakeBin, tmp_path: Path) -> None:
    msg = tmp_path / "msg.txt"
    msg.write_text(data("nvidia_smi", "failed-compute-cap-field.txt"))
    fake_bin(
        "nvidia-smi",
        f"""case "$1" in
  *compute_cap*) cat {msg}; exit 2;;
esac
echo '0, Tesla V100-PCIE-32GB, GPU-1234, 470.141.03, 32510, 0, 32508, Enabled, 34, 25.12, 250.00, 00000000:3B:00.0'
""",
    )
    raw = nvidia_smi.probe(5, env_with(fake_bin.dir))  # type: ignore[attr-defined]
    assert "compute_cap" not in raw["fields"]
    res = nvidia_smi.parse(raw)
    assert res["ok"] and res["driver"] == "470.141.03"
    assert res["gpus"][0]["cc"] is None and res["gpus"][0]["name"] == "Tesla V100-PCIE-32GB"


def test_nvidia_smi_missing(tmp_path: Path) -> None:
    res = nvidia_smi.parse(nvidia_smi.probe(5, env_with(tmp_path, only=True)))
    assert res["kind"] == "missing"


# ------------------------------------------------------------------ NVML


def test_nvml_library_not_found_real_error_class() -> None:
    pynvml = pytest.importorskip("pynvml")
    res = nvml.probe(FakeNvml(init_error=pynvml.NVMLError_LibraryNotFound()), 5)
    p = nvml_parse.parse(res)
    assert (p["ok"], p["kind"]) == (False, "library-not-found")
    assert "Not Found" in p["message"]


def test_real_pynvml_on_a_machine_without_driver() -> None:
    pytest.importorskip("pynvml")
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    p = nvml_parse.parse(nvml.probe(None, 5))
    assert p["ok"] is False and p["kind"] in ("library-not-found", "driver-not-loaded")


def test_nvml_version_mismatch_and_permission() -> None:
    p = nvml_parse.parse(nvml.probe(FakeNvml(init_error=FakeNVMLError(LIB_RM_VERSION_MISMATCH)), 5))
    assert p["kind"] == "version-mismatch"
    p = nvml_parse.parse(nvml.probe(FakeNvml(init_error=FakeNVMLError(NO_PERMISSION)), 5))
    assert p["kind"] == "no-permission"


def test_nvml_hang_is_bounded() -> None:
    release = threading.Event()
    fake = FakeNvml.recorded("h100-580.159.04.json", hang=release)
    t0 = time.monotonic()
    res = nvml.probe(fake, 0.5)
    release.set()
    assert time.monotonic() - t0 < 3
    assert res["status"] == "timeout" and nvml_parse.parse(res)["kind"] == "hang"


def test_nvml_lost_gpu_and_denied_fields_are_recorded() -> None:
    fake = FakeNvml.recorded(
        "rtx4070-550.40.07.json", device_error={"temperature": NO_PERMISSION, "power_usage": GPU_IS_LOST}
    )
    p = nvml_parse.parse(nvml.acquire(fake))
    d = p["gpus"][0]["details"]
    assert d["health"]["temperature"] is None
    assert d["nvml_errors"] == {"power_usage": "GPU is lost", "temperature": "Insufficient Permissions"}
    assert fake.shutdowns == 1
    fake = FakeNvml.recorded("rtx4070-550.40.07.json", device_error={"handle": GPU_IS_LOST})
    p = nvml_parse.parse(nvml.acquire(fake))
    assert p["ok"] and p["gpus"][0]["name"] is None


def test_read_nvml_light_for_the_guard() -> None:
    drv, gpus, why = nvml.read_nvml_light(FakeNvml.recorded("v100-535.171.04.json"), 5)
    assert drv == "535.171.04" and gpus is not None and gpus[0]["cc"] == "7.0" and why == ""
    drv, gpus, why = nvml.read_nvml_light(FakeNvml(init_error=FakeNVMLError(12)), 5)
    assert (drv, gpus) == (None, []) and "not found" in why
    release = threading.Event()
    drv, gpus, why = nvml.read_nvml_light(FakeNvml(hang=release), 0.3)
    release.set()
    assert gpus is None and "did not answer" in why


# ------------------------------------------------------------------ permission denied on /proc, /sys, the kernel log


def test_driver_probe_with_proc_and_sys_denied() -> None:
    fs = DeniedFS("/", ("/proc/modules", "/sys/bus/pci/devices", "/proc/driver/nvidia"))
    raw = driver.probe(fs, {})
    assert raw["errors"]["/proc/modules"] == "permission denied"
    assert raw["modules"] is None and raw["pci_gpus"] == []
    a = driver.analyse(raw)
    assert a["pci_readable"] is False and a["nvidia_module_loaded"] is None


def test_kernel_log_denied_everywhere(fake_bin: FakeBin) -> None:
    fake_bin("dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n")
    fake_bin("journalctl", "echo 'No journal files were found.' >&2\nexit 1\n")
    res = health.probe(DeniedFS("/", ("/dev/kmsg",)), env_with(fake_bin.dir, only=True), 2)  # type: ignore[attr-defined]
    assert res["status"] == "unavailable"
    assert [t["source"] for t in res["tried"]] == ["dmesg", "/dev/kmsg", "journalctl -k"]
    assert "Operation not permitted" in res["error"] and "permission denied" in res["error"]


def test_kernel_log_from_kmsg_when_dmesg_is_denied(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin("dmesg", "exit 1\n")
    (tmp_path / "root" / "dev").mkdir(parents=True)
    (tmp_path / "root" / "dev" / "kmsg").write_text(
        "4,900,14328198504,-;NVRM: Xid (PCI:0000:0a:00): 31, pid=13332, name=python, Ch 00000010\n"
        " SUBSYSTEM=pci\n3,901,14370687545,-;Out of memory: Killed process 77 (python) total-vm:1kB, anon-rss:2048kB\n"
    )
    res = health.probe(HostFS(str(tmp_path / "root")), env_with(fake_bin.dir, only=True), 2)  # type: ignore[attr-defined]
    assert res["source"] == "/dev/kmsg"
    assert [e["code"] for e in res["xid"]] == [31] and res["oom"][0]["pid"] == 77


def test_resources_with_proc_denied() -> None:
    r = resources.probe(DeniedFS("/", ("/proc/meminfo", "/proc/self/cgroup")), {})
    assert r["memory"] == {"error": "/proc/meminfo: permission denied"}
    assert r["cgroup"] == {"error": "/proc/self/cgroup: permission denied"}
    assert isinstance(r["nofile"]["soft"], int)


def test_a_fifo_does_not_block_a_read(tmp_path: Path) -> None:
    import os

    (tmp_path / "proc").mkdir()
    os.mkfifo(tmp_path / "proc" / "meminfo")
    t0 = time.monotonic()
    r = resources.probe(HostFS(str(tmp_path)), {}, cwd="/")
    assert time.monotonic() - t0 < 3
    assert r["memory"]["total"] is None


# ------------------------------------------------------------------ the framework child


@pytest.mark.parametrize(
    ("behaviour", "status"), [("segv", "crashed"), ("hang", "timeout"), ("import-error", "import-error")]
)
def test_framework_child_faults(tmp_path: Path, behaviour: str, status: str) -> None:
    py = fake_python(tmp_path, behaviour)
    t0 = time.monotonic()
    res = frameworks.probe(str(py), env_with(), timeout=1.0)
    assert time.monotonic() - t0 < 8
    child = res["children"]["torch"]
    assert child["status"] == status
    text = describe_child(child)
    if behaviour == "segv":
        assert child["signal"] == "SIGSEGV" and "Segmentation fault" in child["output"]
        assert text == "crashed with SIGSEGV"
    elif behaviour == "hang":
        assert text.startswith("did not finish within 1 s")
    else:
        assert "libcudnn.so.9" in text


def test_failed_imports_are_not_cached(tmp_path: Path) -> None:
    py = fake_python(tmp_path, "segv")
    first = frameworks.probe(str(py), env_with(), timeout=2.0)
    second = frameworks.probe(str(py), env_with(), timeout=2.0)
    assert first["children"]["torch"]["status"] == second["children"]["torch"]["status"] == "crashed"
    assert not second["children"]["torch"].get("cached")


def test_broken_interpreter(tmp_path: Path) -> None:
    from tests.doctor.fakes import write_exe

    py = write_exe(
        tmp_path,
        "python",
        "echo 'error while loading shared libraries: libpython3.10.so.1.0' >&2\nexit 127\n",
    )
    res = frameworks.probe(str(py), env_with(), timeout=2.0)
    assert res["status"] == "error"
    assert "libpython3.10" in res["meta"]["output"]


def test_real_child_script_on_this_interpreter() -> None:
    """The child script itself, run by this interpreter on whatever framework is installed here."""
    import sys

    here = frameworks.installed_here()
    modes = frameworks.framework_modes(here["distributions"])
    if "torch" not in modes:
        child = frameworks.run_child(sys.executable, "meta", 30)
        assert child["status"] == "ok" and child["result"]["python"]
        return
    child = frameworks.run_child(sys.executable, "torch", 60)
    assert child["status"] == "ok", child
    doc = child["result"]
    dist = here["distributions"][
        "torch"
    ]  # PyPI's CUDA wheels: distribution 2.13.0, torch.__version__ 2.13.0+cu130
    assert doc["version"] == dist or doc["version"].startswith(dist + "+")
    assert isinstance(doc["cuda_available"], bool)
    static = here["static"]["torch"]
    assert (
        static["version"] == doc["version"] and static["cuda"] == doc["cuda"]
    )  # version.py read without import
