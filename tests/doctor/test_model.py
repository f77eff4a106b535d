"""The typed probe results (compat.probes.model) and their one codec: built from recorded real outputs, every probe
type round-trips object -> JSON -> object, and JSON -> object -> JSON gives back exactly the keys it was given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat.checks.doctor import doctor_checks
from compat.facts import load_snapshot, save_snapshot
from compat.probes import gather_facts, health, nvml, nvml_parse
from compat.probes.codec import _fields, _key
from compat.probes.model import (
    DriverState,
    GpuDetails,
    Health,
    NvmlState,
    ProbeFailed,
    ProbeResult,
    Toolkits,
    from_json,
    gpu_details,
    to_json,
)
from compat.probes.probeset import SUBJECTS, ProbeSet
from compat.resolver import resolve
from tests.doctor.fakes import DATA, FakeNvml, FakeNVMLError, data, env_with

RECORDED_NVML = sorted(p.name for p in (DATA / "nvml").glob("*.json"))
KERNEL_LOGS = sorted(p.name for p in (DATA / "kernel_log").glob("*.txt"))


def _recorded_tree(tmp_path: Path) -> Path:
    """A host tree with the recorded files the probes read: a toolkit, its cuDNN header, the driver's version."""
    root = tmp_path / "root"
    tk = root / "usr" / "local" / "cuda-12.4"
    (tk / "include").mkdir(parents=True)
    (tk / "lib64").mkdir()
    (tk / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}')
    (tk / "include" / "cudnn_version.h").write_text(data("cudnn", "8.9.7-cudnn_version.h"))
    (tk / "lib64" / "libcudnn.so.8.9.7").write_text("")
    (root / "usr" / "local" / "cuda").symlink_to("cuda-12.4")
    nv = root / "proc" / "driver" / "nvidia"
    nv.mkdir(parents=True)
    (nv / "version").write_text(data("proc_version", "535.161.07-ubuntu22.txt"))
    return root


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """gather_facts on a recorded H100 (NVML) and a recorded host tree: every probe ran and left a typed result."""
    root = _recorded_tree(tmp_path_factory.mktemp("host"))
    return gather_facts(
        environ=env_with(),
        nvml=FakeNvml.recorded("h100-580.159.04.json"),
        frameworks=False,
        root=str(root),
    )


def test_probes_return_typed_records(recorded: Any) -> None:
    ps = recorded.probes
    assert isinstance(ps, ProbeSet)
    for name, cls in SUBJECTS.items():
        assert isinstance(getattr(ps, name), cls), name
    assert isinstance(ps.nvml, NvmlState) and ps.nvml.driver == "580.159.04" and ps.nvml.device_count == 1
    assert isinstance(ps.toolkits, Toolkits) and dict(ps.toolkits.installed) == {
        "/usr/local/cuda-12.4": "12.4.1"
    }
    assert isinstance(ps.driver, DriverState) and ps.driver.kernel_version == "535.161.07"
    assert ps.malformed() == {}


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_every_probe_type_round_trips(recorded: Any, name: str) -> None:
    rec = getattr(recorded.probes, name)
    assert type(rec).from_json(rec.to_json()) == rec
    assert type(rec).from_json(json.loads(json.dumps(rec.to_json()))).to_json() == rec.to_json()


def test_the_probe_set_round_trips_and_reads_as_its_json(recorded: Any) -> None:
    ps = recorded.probes
    doc = json.loads(json.dumps(ps.to_json()))
    assert ProbeSet.from_json(doc) == ps
    assert dict(ps) == doc and ps["nvml"]["status"] == "ok" and "nope" not in ps


def test_snapshot_round_trips_through_the_one_codec(
    recorded: Any, tmp_path: Path, doctor_matrix: Any
) -> None:
    """`compat doctor --save-snapshot` then `compat check --snapshot`: the same typed probes, the same findings."""
    p = tmp_path / "snap.json"
    save_snapshot(recorded, p)
    back = load_snapshot(p)
    assert isinstance(back.probes, ProbeSet) and back.probes == recorded.probes
    before = resolve(recorded, doctor_matrix, extra_checks=doctor_checks)
    after = resolve(back, doctor_matrix, extra_checks=doctor_checks)
    assert [(f.id, f.title) for f in after.findings] == [(f.id, f.title) for f in before.findings]


@pytest.mark.parametrize("name", RECORDED_NVML)
def test_gpu_details_from_recorded_nvml(name: str) -> None:
    parsed = nvml_parse.parse(nvml.acquire(FakeNvml.recorded(name)))
    assert parsed["gpus"]
    for g in parsed["gpus"]:
        d = gpu_details(g["details"])
        assert isinstance(d, GpuDetails) and d.malformed_paths() == []
        assert d.to_json() == g["details"] and GpuDetails.from_json(d.to_json()) == d
        assert d.health is not None and d.memory_total is not None and d.memory_total > 0


@pytest.mark.parametrize("name", KERNEL_LOGS)
def test_health_from_recorded_kernel_logs(name: str) -> None:
    doc = {"status": "ok", "source": "dmesg", "tried": [], **health.parse_log(data("kernel_log", name))}
    h = Health.from_json(doc)
    assert h.to_json() == doc and h.malformed_paths() == []
    assert Health.from_json(h.to_json()) == h
    assert len(h.xid) + len(h.oom) + len(h.notes) > 0, (
        "each recorded log has an Xid, an OOM kill or a driver note"
    )


def test_nvml_failure_is_a_probe_failed(doctor_matrix: Any) -> None:
    facts = gather_facts(environ=env_with(), nvml=FakeNvml(init_error=FakeNVMLError(12)), frameworks=False)
    assert isinstance(facts.probes, ProbeSet)
    nv = facts.probes.nvml
    assert isinstance(nv, ProbeFailed)
    assert (nv.kind, nv.cause, nv.code) == ("error", "library-not-found", 12)
    assert ProbeFailed.decode(nv.to_json()) == nv
    assert facts.probes["nvml"] == {
        "status": "error",
        "kind": "library-not-found",
        "message": "NVML Shared Library Not Found",
        "code": 12,
    }


def test_a_probe_that_timed_out_is_a_probe_failed() -> None:
    ps = ProbeSet.from_json({"resources": {"status": "timeout", "error": "probe did not finish within 17 s"}})
    assert ps.resources == ProbeFailed("timeout", "probe did not finish within 17 s")
    assert ps.failed("resources") is ps.resources and ps.failed("health") is None
    assert ps.to_json() == {"resources": {"status": "timeout", "error": "probe did not finish within 17 s"}}
    built = ProbeFailed("crashed", "SIGSEGV in libnvidia-ml")
    assert built.to_json() == {"status": "crashed", "error": "SIGSEGV in libnvidia-ml"}
    assert ProbeFailed.decode(built.to_json()) == built


def test_foreign_data_is_kept_and_said() -> None:
    doc = {
        "health": {"status": "ok", "xid": "not a list", "future_key": {"a": 1}},
        "newer_probe": [1, 2],
        "driver": 5,
    }
    ps = ProbeSet.from_json(doc)
    assert ps.to_json() == doc
    assert isinstance(ps.health, Health) and ps.health.xid == () and ps.health.extra["future_key"] == {"a": 1}
    assert ps.malformed() == {"health": ["xid"]}
    assert ps.driver is None and ps["driver"] == 5


# ------------------------------------------------------------------ property: JSON -> object -> JSON is exact

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8,
)
_RECORDS: list[type[ProbeResult]] = [*SUBJECTS.values(), GpuDetails]


def _doc_for(cls: type[ProbeResult]) -> st.SearchStrategy[dict[str, Any]]:
    keys = [_key(f) for f in _fields(cls)] + ["not_modelled"]
    return st.dictionaries(st.sampled_from(keys), _json, max_size=len(keys))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_RECORDS).flatmap(lambda c: st.tuples(st.just(c), _doc_for(c))))
def test_any_json_round_trips_exactly(case: tuple[type[ProbeResult], dict[str, Any]]) -> None:
    cls, doc = case
    rec = from_json(cls, doc)
    assert to_json(rec) == doc
    assert from_json(cls, to_json(rec)) == rec


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from([*SUBJECTS, "other"]), _json, max_size=5))
def test_any_probe_set_round_trips_exactly(doc: dict[str, Any]) -> None:
    assert ProbeSet.from_json(doc).to_json() == doc


# ------------------------------------------------------------------ records built in code, read by the checks


def test_checks_read_records_built_in_code(doctor_matrix: Any) -> None:
    """A ProbeSet built from objects (not JSON): the checks read it, and it encodes every field it has."""
    from compat.facts import Facts
    from compat.probes.model import Cgroup, Cpus, Memory, Nofile, Resources, Shm

    small_shm = Resources(
        status="ok",
        memory=Memory(total=64 << 30, available=50 << 30),
        cgroup=Cgroup(version=2, oom_kills=0),
        shm=Shm(path="/dev/shm", total=64 << 20, free=64 << 20),
        nofile=Nofile(soft=65536, hard=65536),
        cpus=Cpus(count=8, affinity=8),
    )
    kernel_log = {
        "status": "ok",
        "source": "dmesg",
        **health.parse_log(data("kernel_log", "xid79-rtx5080.txt")),
    }
    ps = ProbeSet(resources=small_shm, health=Health.from_json(kernel_log))
    r = resolve(Facts(probes=ps), doctor_matrix, extra_checks=doctor_checks)
    found = {f.id: f for f in r.findings}
    assert found["host.shm"].severity == "warning" and "64 MiB" in found["host.shm"].title
    assert found["gpu.xid"].facts["xid"] == 79
    doc = ps.to_json()
    assert doc["resources"]["shm"] == {"path": "/dev/shm", "total": 64 << 20, "free": 64 << 20, "error": None}
    assert ProbeSet.from_json(doc) == ps
