"""build_fleet(): grouping by stack, drift from the majority, health, smoke, unreachable nodes, the text form."""

from __future__ import annotations

import io

import pytest

from compat.fleet.report import NodeInput, build_fleet, fingerprint, render_text
from tests.fleet.helpers import recorded, with_fact

BASE = "cluster-a/gpu-a01.json"


def _node(name: str, doc: dict, status: str = "reported") -> NodeInput:  # type: ignore[type-arg]
    return NodeInput(name=name, source=f"{name}.json", status=status, doc=doc)


def _fleet(*nodes: NodeInput) -> dict:  # type: ignore[type-arg]
    return build_fleet(nodes, source="test")


def test_identical_nodes_make_one_group_and_no_drift() -> None:
    base = recorded(BASE)
    doc = _fleet(*(_node(f"n{i}", base) for i in range(3)))
    assert doc["schema_version"] == 1
    assert doc["drift"] == []
    assert [g["nodes"] for g in doc["groups"]] == [["n0", "n1", "n2"]]
    assert doc["groups"][0]["fingerprint"]["driver"] == "580.159.04"
    assert doc["groups"][0]["fingerprint"]["gpu"] == "8x NVIDIA H100 80GB HBM3"
    assert doc["verdict"] == "ok"


def test_one_node_off_the_majority_is_drift_on_that_fact_only() -> None:
    base = recorded(BASE)
    odd = with_fact(base, "driver", "470.82.01", "470.82.1")
    doc = _fleet(_node("a", base), _node("b", base), _node("c", odd), _node("d", base))
    assert [d["fact"] for d in doc["drift"]] == ["driver"]
    d = doc["drift"][0]
    assert d["has_majority"] and d["majority"] == "580.159.04" and d["majority_count"] == 3
    assert d["nodes"] == ["c"]
    assert {v["value"]: v["nodes"] for v in d["values"]} == {
        "580.159.04": ["a", "b", "d"],
        "470.82.01": ["c"],
    }
    assert [n["drift"] for n in doc["nodes"]] == [[], [], ["driver"], []]
    assert [g["size"] for g in doc["groups"]] == [3, 1]
    assert doc["verdict"] == "error"


def test_a_tie_has_no_majority_and_names_every_node() -> None:
    base = recorded(BASE)
    doc = _fleet(_node("a", base), _node("b", with_fact(base, "cudnn", "9.1.0")))
    (d,) = doc["drift"]
    assert d["fact"] == "cudnn" and not d["has_majority"] and d["majority"] is None
    assert d["nodes"] == ["a", "b"]


def test_a_fact_missing_on_one_node_is_drift() -> None:
    base = recorded(BASE)
    doc = _fleet(_node("a", base), _node("b", base), _node("c", with_fact(base, "cudnn", None)))
    (d,) = doc["drift"]
    assert d["fact"] == "cudnn" and d["nodes"] == ["c"]
    assert {v["missing"] for v in d["values"] if v["nodes"] == ["c"]} == {True}


def test_versions_compare_by_value_not_by_spelling() -> None:
    base = recorded(BASE)
    # The same driver written two ways: the doctor's normalised value decides.
    same = with_fact(base, "driver", "580.159.4", "580.159.4")
    doc = _fleet(_node("a", with_fact(base, "driver", "580.159.04", "580.159.4")), _node("b", same))
    assert doc["drift"] == []


def test_gpu_model_and_count_are_part_of_the_fingerprint() -> None:
    base = recorded(BASE)
    fewer = dict(base, facts={**base["facts"], "gpus": base["facts"]["gpus"][:4]})
    _, shown = fingerprint(fewer)
    assert shown["gpu"] == "4x NVIDIA H100 80GB HBM3"
    doc = _fleet(_node("a", base), _node("b", base), _node("c", fewer))
    assert [(d["fact"], d["nodes"]) for d in doc["drift"]] == [("gpu", ["c"])]


@pytest.mark.parametrize("status", ["unreachable", "failed"])
def test_nodes_without_a_report_are_errors_outside_groups_and_drift(status: str) -> None:
    base = recorded(BASE)
    gone = NodeInput(name="z", source="ray:abc", status=status, reason="no answer within 5 s")
    doc = _fleet(_node("a", base), _node("b", base), gone)
    assert doc["verdict"] == "error"
    assert doc["drift"] == [] and [g["nodes"] for g in doc["groups"]] == [["a", "b"]]
    assert doc[status] == [{"node": "z", "reason": "no answer within 5 s"}]
    assert doc["summary"][status] == 1 and doc["summary"]["reported"] == 2
    z = next(n for n in doc["nodes"] if n["name"] == "z")
    assert z["status"] == status and z["group"] is None and z["fingerprint"] is None


def test_unhealthy_gpus_come_from_the_doctors_health_findings() -> None:
    doc = _fleet(
        _node("a02", recorded("cluster-a/gpu-a02.json")),
        _node("a03", recorded("cluster-a/gpu-a03.json")),
        _node("vm", recorded("real/dev-vm.json")),
    )
    sick = {(g["node"], g["id"], g["severity"]) for g in doc["unhealthy_gpus"]}
    assert sick == {("a02", "gpu.xid", "error"), ("a03", "gpu.thermal", "warning")}
    xid = next(g for g in doc["unhealthy_gpus"] if g["id"] == "gpu.xid")
    assert xid["pci"] == ["0000:2b:00"] and "Xid 79" in xid["title"]
    assert next(g for g in doc["unhealthy_gpus"] if g["id"] == "gpu.thermal")["gpu"] == 5
    # The real machine's OOM-killer note is in the health group but is not a GPU: a warning, not a sick GPU.
    vm = next(n for n in doc["nodes"] if n["name"] == "vm")
    assert vm["unhealthy_gpus"] == [] and "host.oom" in {w["id"] for w in vm["warnings"]}


def test_failed_smoke_runs_are_listed() -> None:
    doc = _fleet(_node("a01", recorded(BASE)), _node("a07", recorded("cluster-a/gpu-a07.json")))
    assert [(s["node"], s["status"], s["cause"]) for s in doc["smoke_failed"]] == [
        ("a07", "crashed", "segfault")
    ]
    assert next(n for n in doc["nodes"] if n["name"] == "a07")["errors"][0]["id"] == "smoke.crashed"


def test_warnings_only_make_a_warning_verdict() -> None:
    doc = _fleet(_node("a03", recorded("cluster-a/gpu-a03.json")))
    assert doc["verdict"] == "warning"


def test_text_names_every_section_and_node() -> None:
    base = recorded(BASE)
    doc = _fleet(
        _node("a01", base),
        _node("a02", recorded("cluster-a/gpu-a02.json")),
        _node("a04", with_fact(base, "driver", "570.172.08", "570.172.8")),
        _node("a07", recorded("cluster-a/gpu-a07.json")),
        NodeInput(name="a09", source="ray:x", status="unreachable", reason="no answer within 9 s"),
    )
    text = render_text(doc, io.StringIO())
    assert text.startswith("compat fleet: ERROR")
    for needle in (
        "Stacks (2 groups)",
        "Drift from the majority",
        "driver: 580.159.04 on 3 of 4 nodes; a04 has 570.172.08",
        "Unhealthy GPUs",
        "Xid 79",
        "Smoke runs that failed",
        "a07: crashed (segfault)",
        "No report",
        "a09: unreachable: no answer within 9 s",
        "Nodes",
    ):
        assert needle in text, needle
    assert "\x1b[" not in text


def test_jax_and_jaxlib_are_part_of_the_fingerprint() -> None:
    # Issue 17: a node whose JAX differs (its CUDA plugin build or jaxlib) is drift like a torch difference.
    base = with_fact(with_fact(recorded(BASE), "jax", "0.10.2+cuda12"), "jaxlib", "0.10.2")
    odd = with_fact(with_fact(base, "jax", "0.10.2"), "jaxlib", "0.9.0")
    doc = _fleet(_node("a", base), _node("b", base), _node("c", odd))
    assert sorted(d["fact"] for d in doc["drift"]) == ["jax", "jaxlib"]
    assert all(d["nodes"] == ["c"] for d in doc["drift"])
    assert [g["size"] for g in doc["groups"]] == [2, 1]
    assert doc["groups"][0]["fingerprint"]["jax"] == "0.10.2+cuda12"
