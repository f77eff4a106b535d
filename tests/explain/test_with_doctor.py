"""--with-doctor: the doctor's kernel log (OOM kills, Xid) and cgroup memory.events settle a bare death; without
probe data the answer stays as the log alone gave it."""

from __future__ import annotations

from compat.explain.diagnosis import Diagnosis, verdict_of
from compat.explain.settle import settle_suspects
from compat.explain.signature import Catalogue
from tests.explain.helpers import scan


def _died(catalogue: Catalogue) -> list[Diagnosis]:
    return scan(catalogue, "The kernel appears to have died. It will restart automatically.\n").diagnoses()


def test_doctor_kernel_log_oom_names_host_memory(catalogue: Catalogue) -> None:
    probes = {
        "health": {
            "status": "ok",
            "oom": [{"time": "2026-11-23T10:00:01", "pid": 4242, "process": "python", "cgroup": True}],
            "xid": [],
        }
    }
    d = settle_suspects(_died(catalogue), probes)
    assert d[0].category == "host_oom" and not d[0].suspected and d[0].confidence >= 0.8
    assert "pid 4242" in d[0].facts["doctor"] and "2026-11-23T10:00:01" in d[0].facts["doctor"]
    assert verdict_of(d) == "diagnosed"


def test_doctor_xid_names_the_gpu_and_latest_event_wins(catalogue: Catalogue) -> None:
    probes = {
        "health": {
            "status": "ok",
            "oom": [{"time": "2026-11-23T09:00:00", "pid": 1, "process": "python"}],
            "xid": [
                {
                    "time": "2026-11-23T10:00:00",
                    "code": 79,
                    "pci": "0000:3b:00",
                    "message": "GPU has fallen off the bus.",
                }
            ],
        }
    }
    d = settle_suspects(_died(catalogue), probes)
    assert [x.category for x in d][:2] == ["hardware_xid", "host_oom"]
    assert "Xid 79" in d[0].facts["doctor"] and "10:00:00" in d[0].facts["doctor"]


def test_doctor_cgroup_memory_events(catalogue: Catalogue) -> None:
    probes = {"health": {"status": "ok", "oom": [], "xid": []}, "resources": {"cgroup": {"oom_kills": 3}}}
    d = settle_suspects(_died(catalogue), probes)
    assert d[0].category == "host_oom" and "oom_kill 3" in d[0].facts["doctor"]


def test_doctor_with_a_clean_kernel_log_moves_the_native_crash_up(catalogue: Catalogue) -> None:
    d = settle_suspects(_died(catalogue), {"health": {"status": "ok", "oom": [], "xid": []}})
    assert d[0].category == "segfault" and all("no OOM kill" in x.facts["doctor"] for x in d)
    # no kernel log read (no probe data): the answer stays as the log alone gave it
    assert [x.category for x in settle_suspects(_died(catalogue), {})] == [
        "host_oom",
        "segfault",
        "hardware_xid",
    ]


def test_with_doctor_facts_through_the_public_api() -> None:
    from compat.explain import diagnose_text
    from compat.facts import Facts

    probes = {"health": {"status": "ok", "oom": [{"time": "t1", "pid": 7, "process": "python"}], "xid": []}}
    d = diagnose_text(
        "The kernel appears to have died. It will restart automatically.\n",
        facts=Facts(values={}, probes=probes),
    )
    assert d[0].category == "host_oom" and not d[0].suspected and verdict_of(d) == "diagnosed"
    assert "pid 7" in d[0].facts["doctor"] and d[0].facts.get("cross_check")
