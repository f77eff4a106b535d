"""`compat fleet merge`: recorded doctor reports in, the fleet report out; malformed input is exit 2, one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.errors import InputError
from compat.fleet.merge import iter_documents, merge_inputs
from tests.fleet.helpers import CLUSTER_A, DATA


def _merge(run, *args: str):  # type: ignore[no-untyped-def]
    res = run("fleet", "merge", "--json", *args)
    return res, (json.loads(res.out) if res.out else None)


def test_cluster_report_groups_drift_health_and_smoke(run) -> None:  # type: ignore[no-untyped-def]
    res, doc = _merge(run, *map(str, CLUSTER_A))
    assert res.code == 1, res.err
    assert res.err == ""
    assert set(doc) >= {"schema_version", "nodes", "groups", "drift", "verdict"}
    assert doc["verdict"] == "error" and doc["source"] == "files"
    assert [n["name"] for n in doc["nodes"]] == [f"gpu-a0{i}" for i in range(1, 9)]
    assert {d["fact"]: d["nodes"] for d in doc["drift"]} == {"driver": ["gpu-a04"], "cudnn": ["gpu-a06"]}
    assert [(g["size"], g["nodes"][0]) for g in doc["groups"]] == [
        (6, "gpu-a01"),
        (1, "gpu-a04"),
        (1, "gpu-a06"),
    ]
    sick = sorted((g["node"], g["id"]) for g in doc["unhealthy_gpus"])
    assert sick == [("gpu-a02", "gpu.xid"), ("gpu-a03", "gpu.thermal"), ("gpu-a05", "gpu.xid")]
    assert [s["node"] for s in doc["smoke_failed"]] == ["gpu-a07"]
    assert {n["name"] for n in doc["nodes"] if n["errors"]} == {"gpu-a02", "gpu-a05", "gpu-a07"}


def test_text_form(run) -> None:  # type: ignore[no-untyped-def]
    res = run("fleet", "merge", *map(str, CLUSTER_A))
    assert res.code == 1
    assert res.out.startswith("compat fleet: ERROR  (8 nodes: 8 reported; 2 drifting facts, 3 unhealthy GPUs")
    assert "gpu-a04 has 570.172.08" in res.out and "gpu-a06 has 9.1.0" in res.out


def test_concatenated_documents_in_one_file(run) -> None:  # type: ignore[no-untyped-def]
    res, doc = _merge(run, str(DATA / "srun-all.json"))
    assert res.code == 0, res.err
    assert [n["name"] for n in doc["nodes"]] == ["gpu-b01", "gpu-b02"]
    assert all(n["source"].startswith(str(DATA / "srun-all.json") + ":") for n in doc["nodes"])


def test_json_lines(run) -> None:  # type: ignore[no-untyped-def]
    res, doc = _merge(run, str(DATA / "nodes.jsonl"))
    assert res.code == 0, res.err
    assert [n["name"] for n in doc["nodes"]] == ["gpu-c01", "gpu-c02"]
    assert [n["source"] for n in doc["nodes"]] == [f"{DATA / 'nodes.jsonl'}:1", f"{DATA / 'nodes.jsonl'}:2"]


def test_a_report_without_host_is_named_after_its_file(run) -> None:  # type: ignore[no-untyped-def]
    res, doc = _merge(run, str(DATA / "no-host" / "rack7-node3.json"), str(DATA / "real" / "dev-vm.json"))
    assert res.code in (0, 1), res.err
    assert sorted(n["name"] for n in doc["nodes"]) == sorted(
        ["rack7-node3", json.loads((DATA / "real" / "dev-vm.json").read_text())["host"]]
    )


def test_a_duplicate_node_is_a_warning_and_the_first_report_wins(run) -> None:  # type: ignore[no-untyped-def]
    first, rerun = str(DATA / "cluster-a" / "gpu-a01.json"), str(DATA / "dup" / "gpu-a01-rerun.json")
    res, doc = _merge(run, first, rerun, str(DATA / "cluster-a" / "gpu-a08.json"))
    assert res.code == 0, res.err
    assert doc["verdict"] == "warning"
    assert doc["duplicates"] == [{"name": "gpu-a01", "sources": [first, rerun]}]
    # The re-run's other driver is ignored: no drift.
    assert doc["drift"] == [] and [n["name"] for n in doc["nodes"]] == ["gpu-a01", "gpu-a08"]
    assert run("fleet", "merge", "--fail-on", "warning", first, rerun).code == 1
    text = run("fleet", "merge", first, rerun).out
    assert "Duplicate reports (the first one is used)" in text and "gpu-a01-rerun.json" in text


def _bad_files(tmp: Path) -> dict[str, Path]:
    good = (DATA / "cluster-a" / "gpu-a01.json").read_text()
    doc = json.loads(good)
    files = {
        "truncated": good[: len(good) // 2],
        "empty": "",
        "blank": " \n\n",
        "list": "[1, 2]",
        "schema2": json.dumps({**doc, "schema_version": 2}),
        "nofacts": json.dumps({k: v for k, v in doc.items() if k != "facts"}),
        "fleet": json.dumps(
            {"schema_version": 1, "verdict": "ok", "facts": {}, "findings": [], "nodes": [], "groups": []}
        ),
        "trailing-garbage": good + "\nsrun: error: gpu-a09: task 8: Exited with exit code 1\n",
    }
    out = {}
    for name, text in files.items():
        p = tmp / f"{name}.json"
        p.write_text(text)
        out[name] = p
    return out


@pytest.mark.parametrize(
    "which",
    [
        "truncated",
        "empty",
        "blank",
        "list",
        "schema2",
        "nofacts",
        "fleet",
        "trailing-garbage",
        "missing",
        "directory",
    ],
)
def test_a_malformed_file_is_exit_2_with_one_line(run, tmp_path: Path, which: str) -> None:  # type: ignore[no-untyped-def]
    files = _bad_files(tmp_path)
    files["missing"] = tmp_path / "nope.json"
    files["directory"] = tmp_path
    bad = files[which]
    res = run("fleet", "merge", "--json", str(DATA / "cluster-a" / "gpu-a01.json"), str(bad))
    assert res.code == 2
    assert res.out == ""  # every file is checked before anything is reported
    assert res.err.count("\n") == 1 and res.err.startswith("compat: error: ")
    assert str(bad) in res.err


def test_no_file_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    res = run("fleet", "merge")
    assert res.code == 2 and res.out == ""


def test_documents_back_to_back_without_whitespace() -> None:
    assert [d for _, d in iter_documents('{"a":1}{"b":2}\n[3]', "x")] == [{"a": 1}, {"b": 2}, [3]]
    with pytest.raises(InputError, match="x: not JSON at line 2"):
        list(iter_documents('{"a":1}\n{"b":', "x"))


def test_merge_inputs_keeps_every_node_once() -> None:
    inputs, dups = merge_inputs([str(p) for p in CLUSTER_A] + [str(CLUSTER_A[0])])
    assert len(inputs) == 8 and [d["name"] for d in dups] == ["gpu-a01"]
