"""Issue 18, items 6 and 7 end to end: garbage from NVML is a finding, a hanging nvcc is a finding, the local toolkit
against torch's CUDA and the host compiler, and a toolkit the driver cannot run when nothing runs on it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from compat.probes.sanity import nvml_garbage
from compat.probes.toolchain import parse_compiler
from tests.conftest import DATA
from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import compat, doctor, node_env, profile

NVCC_124 = (DATA / "doctor" / "nvcc" / "12.4.txt").read_text()
# Recorded on this project's development machine (Debian 12): `c++ --version`.
CXX_DEBIAN_12 = "c++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n"


def _exe(bin_dir: Path, name: str, body: str) -> None:
    p = bin_dir / name
    p.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    p.chmod(0o755)


def _ids(rep: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in rep["findings"]}


def test_garbage_from_nvml_is_an_error(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    doc = profile("h100-80gb-hbm3")
    doc["system"]["nvmlSystemGetDriverVersion"] = {"hex": "ff" * 12}
    dev = doc["devices"][0]
    dev["nvmlDeviceGetCudaComputeCapability"] = [-1, 99999]
    dev["nvmlDeviceGetMemoryInfo"] = {"total": 2**64 - 1, "free": 2**64 - 1, "used": 0}
    dev["nvmlDeviceGetTemperature:0"] = 4_000_000_000
    code, rep = doctor(node_env(fake_nvml, doc, tmp_path), bare_python)
    f = _ids(rep)["driver.nvml-garbage"]
    assert code == 1 and f["severity"] == "error"
    fields = {(g["gpu"], g["field"]) for g in f["facts"]["garbage"]}
    assert fields == {(None, "driver_version"), (0, "cc"), (0, "memory.total"), (0, "temperature")}
    assert "-1.99999" in f["message"] and "4000000000" in f["message"]


def test_recorded_profiles_are_not_garbage() -> None:
    """The bounds never flag a real GPU: every recorded profile's values pass (checked on the raw form)."""
    from tests.nvml.helpers import profile_names

    for name in profile_names():
        for dev in profile(name)["devices"]:
            mem = dev.get("nvmlDeviceGetMemoryInfo")
            raw = {
                "status": "ok",
                "driver_version": profile(name)["system"]["nvmlSystemGetDriverVersion"],
                "devices": [
                    {
                        "index": 0,
                        "name": dev["nvmlDeviceGetName"],
                        "cc": dev.get("nvmlDeviceGetCudaComputeCapability"),
                        "memory": mem,
                        "temperature": dev.get("nvmlDeviceGetTemperature:0"),
                        "pcie_width": dev.get("nvmlDeviceGetCurrPcieLinkWidth"),
                        "pcie_gen": dev.get("nvmlDeviceGetCurrPcieLinkGeneration"),
                        "power_usage": dev.get("nvmlDeviceGetPowerUsage"),
                    }
                ],
            }
            raw["devices"][0] = {
                k: v for k, v in raw["devices"][0].items() if not isinstance(v, dict) or k == "memory"
            }
            assert nvml_garbage(raw) == [], name


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"driver_version": "535.104.05\x00\x01"}, "driver_version"),
        ({"driver_version": "NVIDIA"}, "driver_version"),
        ({"cuda_driver_version": -1}, "cuda_driver_version"),
        ({"devices": [{"index": 0, "pcie_width": 7}]}, "pcie_width"),
        ({"devices": [{"index": 0, "power_usage": 2**32 - 1}]}, "power_usage"),
        (
            {"devices": [{"index": 0, "memory": {"total": 1 << 30, "used": 2 << 30, "free": 0}}]},
            "memory.used",
        ),
        ({"devices": [{"index": 0, "ecc_uncorrected_volatile": 2**64 - 1}]}, "ecc_uncorrected_volatile"),
    ],
)
def test_sanity_bounds(raw: dict[str, Any], field: str) -> None:
    assert [g["field"] for g in nvml_garbage({"status": "ok", **raw})] == [field]


@pytest.mark.slow  # bounded-time/hang case: ~2-3 s of waiting; .ci/run's slow step runs it
def test_hanging_nvcc_is_a_finding_not_silently_replaced(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile("l40s")
    env = node_env(fake_nvml, doc, tmp_path)
    _exe(tmp_path / "bin", "nvcc", "time.sleep(600)")
    # Another toolkit the probe falls back to: /usr/local/cuda under the host root.
    tk = tmp_path / "root" / "usr" / "local" / "cuda"
    tk.mkdir(parents=True)
    (tk / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}')
    res = compat(
        ["doctor", "--json", "--no-smoke", "--python", bare_python, "--timeout", "2"], env, timeout=120
    )
    import json

    rep = json.loads(res.stdout)
    f = _ids(rep)["toolkit.nvcc-broken"]
    assert f["severity"] == "warning" and "did not answer" in f["title"]
    assert "12.8.1" in f["message"] and "/usr/local/cuda" in f["message"]


def _with_toolchain(tmp_path: Path, gcc_dump: str, banner: str = CXX_DEBIAN_12) -> None:
    _exe(tmp_path / "bin", "nvcc", f"sys.stdout.write({NVCC_124!r})")
    _exe(
        tmp_path / "bin",
        "c++",
        f"sys.stdout.write({gcc_dump + chr(10)!r} if '-dumpversion' in sys.argv else {banner!r})",
    )


def test_host_compiler_inside_and_outside_the_toolkit_range(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    env = node_env(fake_nvml, profile("l40s"), tmp_path / "ok")
    _with_toolchain(tmp_path / "ok", "12.2.0")
    _, rep = doctor(env, bare_python)
    assert rep["probes"]["toolchain"]["version"] == "12.2.0" and "toolkit.host-compiler" not in _ids(rep)
    env = node_env(fake_nvml, profile("l40s"), tmp_path / "new")
    _with_toolchain(tmp_path / "new", "14.2.0")  # the same banner, a GCC 14 version: synthetic, not recorded
    _, rep = doctor(env, bare_python)
    f = _ids(rep)["toolkit.host-compiler"]
    assert (
        f["severity"] == "warning"
        and f["title"] == "gcc 14.2.0 is newer than CUDA 12.4 supports (>= 6.0.0, < 14.0)"
    )


def test_toolkit_major_differs_from_torch(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    env = node_env(fake_nvml, profile("l40s"), tmp_path)
    _with_toolchain(tmp_path, "12.2.0")
    env["COMPAT_OVERRIDE_TORCH"] = "2.5.1+cu118"
    _, rep = doctor(env, bare_python)
    f = _ids(rep)["toolkit.torch-mismatch"]
    assert f["severity"] == "warning" and "CUDA 12.4 toolkit" in f["title"] and "(CUDA 11.8)" in f["title"]


def test_toolkit_the_driver_cannot_run_is_a_warning_when_nothing_runs_on_it(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    env = node_env(fake_nvml, profile("t4"), tmp_path)  # driver 515.105.01: no CUDA 12.x
    _with_toolchain(tmp_path, "12.2.0")
    env["COMPAT_OVERRIDE_TORCH"] = "2.5.1+cu118"
    _, rep = doctor(env, bare_python)
    tk = [f for f in rep["findings"] if f["id"] == "driver.cuda" and "toolkit" in f["title"]]
    assert len(tk) == 1 and tk[0]["severity"] == "warning"
    assert "CUDA extensions" in tk[0]["message"] and "torch 2.5.1+cu118" in tk[0]["message"]
    assert not [f for f in rep["findings"] if f["id"] == "driver.cuda" and f["severity"] == "error"]


def test_the_same_toolkit_alone_stays_an_error(matrix: Any) -> None:
    """A what-if check (no live probes) or a toolkit with nothing else: the driver cannot run what it builds."""
    from compat.facts import Facts, make_fact
    from compat.resolver import resolve

    facts = Facts(
        values={
            "driver": make_fact("driver", "515.105.01", "--driver"),
            "cuda": make_fact("cuda", "12.4", "--cuda"),
            "os": make_fact("os", "linux", "--os"),
        }
    )
    found = [f for f in resolve(facts, matrix).findings if f.id == "driver.cuda"]
    assert [f.severity for f in found] == ["error"]


def test_parse_compiler() -> None:
    assert parse_compiler(CXX_DEBIAN_12, "12.2.0\n") == {
        "family": "gcc",
        "version": "12.2.0",
        "banner": "c++ (Debian 12.2.0-14+deb12u1) 12.2.0",
    }
    clang = parse_compiler("Ubuntu clang version 18.1.3 (1ubuntu1)\nTarget: x86_64-pc-linux-gnu\n", "")
    assert clang is not None and clang["version"] == "18.1.3"
    assert parse_compiler("\xff\xfe garbage", "12") is None
