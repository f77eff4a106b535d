"""The paths around NVML, on recorded profiles: the nvidia-smi and /proc fallbacks, the guard's live GPU-count and
free-memory checks through the real pynvml, and `compat fleet merge` over a fleet of fake nodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_nvml import FakeNvmlLib
from tests.nvml.helpers import child, compat, doctor, node_env, profile, traced


def test_nvidia_smi_replaces_a_failing_nvml(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    doc = profile("h100-80gb-hbm3")
    doc["init"] = "UNKNOWN"  # "Failed to initialize NVML: Unknown Error" from pynvml
    _, rep = doctor(node_env(fake_nvml, doc, tmp_path), bare_python)
    assert rep["probes"]["nvml"]["status"] == "error"
    assert rep["facts"]["driver"]["raw"] == "590.48.01" and rep["facts"]["driver"]["source"] == "nvidia-smi"
    (g,) = rep["gpus"]
    assert g["source"] == "nvidia-smi" and g["name"] == "NVIDIA H100 80GB HBM3" and g["cc"] == "9.0"
    assert g["memory_total"] == 81559 * 2**20
    assert traced(tmp_path) == ["nvmlInitWithFlags"]


def test_old_nvidia_smi_without_compute_cap_is_retried(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile("quadro-p400-driver-418")
    doc["init"] = "UNKNOWN"
    _, rep = doctor(node_env(fake_nvml, doc, tmp_path), bare_python)
    (g,) = rep["gpus"]
    assert g["source"] == "nvidia-smi" and g["name"] == "Quadro P400" and g["cc"] is None
    assert "compute_cap" not in rep["probes"]["nvidia_smi"]["fields"]


def test_proc_version_when_nothing_else_answers(
    fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path
) -> None:
    doc = profile("l40s")
    doc["init"] = "UNKNOWN"
    _, rep = doctor(node_env(fake_nvml, doc, tmp_path, smi=False), bare_python)
    assert rep["facts"]["driver"]["raw"] == "595.80"
    assert rep["facts"]["driver"]["source"] == "/proc/driver/nvidia/version"


def test_missing_device_nodes_are_a_finding(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    doc = profile("l40s")
    doc["host"]["dev_nodes"] = ["nvidia0"]  # no /dev/nvidiactl, no /dev/nvidia-uvm
    _, rep = doctor(node_env(fake_nvml, doc, tmp_path), bare_python)
    assert any(f["id"] == "driver.dev-nodes" for f in rep["findings"]), rep["findings"]


GUARD = """
import json, compat
try:
    r = compat.guard(min_gpus={gpus}, min_free_gpu_memory={free!r}, ignore={ignore!r})
    print(json.dumps({{"raised": False, "ids": [f.id for f in r.findings]}}))
except compat.IncompatibleEnvironment as e:
    print(json.dumps({{"raised": True, "ids": [f.id for f in e.findings], "msg": str(e)}}))
"""


def _guard(env: dict[str, str], gpus: int, free: str, ignore: list[str] | None = None) -> dict[str, object]:
    res = child(GUARD.format(gpus=gpus, free=free, ignore=ignore or []), env)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_guard_live_gpu_count_and_free_memory(fake_nvml: FakeNvmlLib, tmp_path: Path) -> None:
    env = node_env(fake_nvml, profile("rtx-pro-6000-blackwell-maxq"), tmp_path)
    # 31531 MiB (30.8 GiB) free on the one GPU of the capture. What the test machine's own frameworks give
    # (a CPU torch on a GPU node) is the baseline, ignored below: only the live checks are under test.
    base = [str(i) for i in _guard(env, 1, "20GiB")["ids"]]  # type: ignore[attr-defined]
    assert not [i for i in base if i.startswith("guard.")]
    assert _guard(env, 1, "20GiB", base) == {"raised": False, "ids": []}
    out = _guard(env, 1, "40GiB", base)
    assert out["raised"] and out["ids"] == ["guard.min-free-memory"] and "30.8 GiB free" in str(out["msg"])
    out = _guard(env, 2, "1GiB", base)
    assert out["raised"] and out["ids"] == ["guard.min-gpus"]
    assert "nvmlDeviceGetMemoryInfo" in traced(tmp_path)


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_fleet_of_fake_nodes(fake_nvml: FakeNvmlLib, bare_python: str, tmp_path: Path) -> None:
    reports = []
    env: dict[str, str] = {}
    nodes = [
        ("gpu-a", "h100-80gb-hbm3"),
        ("gpu-b", "h100-80gb-hbm3"),
        ("gpu-c", "h100-x4-one-degraded"),
        ("gpu-d", "l40s"),
    ]
    for host, name in nodes:
        env = node_env(fake_nvml, profile(name), tmp_path / host)
        _, rep = doctor(env, bare_python)
        rep["host"] = host  # each node's own host name (the test machine has one)
        p = tmp_path / host / "report.json"
        p.write_text(json.dumps(rep))
        reports.append(str(p))
    res = compat(["fleet", "merge", "--json", *reports], env)
    assert res.returncode == 1, res.stderr[-2000:]
    fleet = json.loads(res.stdout)
    drift = {d["fact"]: d for d in fleet["drift"]}
    assert drift["driver"]["nodes"] == ["gpu-d"] and drift["driver"]["majority"] == "590.48.01"
    by_node = {n["name"]: n for n in fleet["nodes"]}
    assert {u["gpu"] for u in by_node["gpu-c"]["unhealthy_gpus"]} == {2}  # one entry per finding on it
    assert [e["id"] for e in by_node["gpu-c"]["errors"]] == ["gpu.ecc"]
    assert all(not by_node[n]["unhealthy_gpus"] for n in ("gpu-a", "gpu-b", "gpu-d"))
