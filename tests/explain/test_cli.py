"""`compat explain` on the command line: exit codes, JSON contract, text output, stdin."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from compat.explain.categories import CATEGORIES
from tests.explain.helpers import DATA, log

KEYS = {"category", "confidence", "title", "evidence", "explanation", "facts", "fixes"}
KEYS_14 = {"confirm", "evidence_lines", "suspected"}  # added by issue 14


def _write(tmp_path: Path, text: str, name: str = "crash.log") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_json_contract(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    r = run("explain", "--json", _write(tmp_path, log("yolov5-2389") + "\n" + log("cor-gs-23")))
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert set(doc) == {"schema_version", "status", "diagnoses"}
    assert doc["schema_version"] == 1 and doc["status"] == "diagnosed"
    cats = [d["category"] for d in doc["diagnoses"]]
    assert cats[0] == "driver_too_old" and "no_gpu_visible" in cats
    for d in doc["diagnoses"]:
        assert set(d) == KEYS | KEYS_14
        assert d["category"] in CATEGORIES
        assert 0.0 <= d["confidence"] <= 1.0
        assert isinstance(d["evidence"], list) and d["evidence"]
        assert all(set(f) == {"text", "command", "kind", "changes"} for f in d["fixes"])
    assert doc["diagnoses"][0]["facts"]["driver_cuda"] == "10.1"


def test_nothing_recognised(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, "step 1 loss 2.3\nstep 2 loss 2.1\n")
    r = run("explain", "--json", path)
    assert r.code == 0 and json.loads(r.out) == {
        "schema_version": 1,
        "status": "nothing-found",
        "diagnoses": [],
    }
    r = run("explain", path)
    assert r.code == 0
    assert "no known failure signature" in r.out and "compat doctor" in r.out


def test_text_output_root_cause_first_with_fix_commands(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    r = run("explain", _write(tmp_path, log("pytorch-16417")))
    assert r.code == 0
    assert r.out.splitlines()[0].startswith("compat explain: root cause found in")
    assert "GPU out of memory" in r.out
    assert "$ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in r.out
    assert "Tried to allocate 22.00 MiB" in r.out
    assert "\x1b[" not in r.out  # not a TTY / NO_COLOR: plain text


def test_other_diagnoses_listed_after_the_root_cause(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    r = run("explain", _write(tmp_path, log("cor-gs-23") + "\n" + log("yolov5-2389")))
    out = r.out
    assert out.index("NVIDIA driver too old") < out.index("Also found") < out.index("No GPU visible")


@pytest.mark.parametrize("arg", [None, "-"])
def test_stdin(monkeypatch, run, arg) -> None:  # type: ignore[no-untyped-def]
    data = log("pytorch-unet-258").encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    args = ["explain", "--json"] + ([arg] if arg else [])
    r = run(*args)
    assert r.code == 0, r.err
    assert json.loads(r.out)["diagnoses"][0]["category"] == "illegal_memory_access"


def test_notebook_file(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    nb = {
        "nbformat": 4,
        "cells": [
            {
                "cell_type": "code",
                "outputs": [
                    {
                        "output_type": "error",
                        "ename": "OutOfMemoryError",
                        "evalue": "CUDA out of memory.",
                        "traceback": [
                            "\u001b[0;31mOutOfMemoryError\u001b[0m: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
                            "has a total capacity of 23.65 GiB of which 1.06 GiB is free."
                        ],
                    }
                ],
            }
        ],
    }
    r = run("explain", "--json", _write(tmp_path, json.dumps(nb), "nb.ipynb"))
    d = json.loads(r.out)["diagnoses"][0]
    assert d["category"] == "gpu_oom"
    assert d["facts"]["requested"] == "2.00 GiB" and d["facts"]["capacity"] == "23.65 GiB"


def test_with_doctor_and_snapshot_are_exclusive(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    r = run(
        "explain",
        "--with-doctor",
        "--snapshot",
        str(DATA / "snapshot_old_driver.json"),
        _write(tmp_path, "x"),
    )
    assert r.code == 2 and "not both" in r.err


def test_bad_snapshot_is_exit_2(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    bad = _write(tmp_path, "{not json", "snap.json")
    r = run("explain", "--snapshot", bad, _write(tmp_path, log("pytorch-16417")))
    assert r.code == 2 and r.err.startswith("compat: error: snapshot")


def test_with_doctor_uses_the_machine_facts(tmp_path: Path, run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import compat.commands.explain as cmd
    from compat.facts import load_snapshot

    snap = load_snapshot(DATA / "snapshot_no_gpu.json")
    monkeypatch.setattr(cmd, "_machine_facts", lambda: (snap, "test"))
    r = run("explain", "--json", "--with-doctor", _write(tmp_path, log("cor-gs-23")))
    assert r.code == 0, r.err
    d = json.loads(r.out)["diagnoses"][0]
    assert d["category"] == "no_gpu_visible"
    assert "cross_check" in d["facts"]


def test_machine_facts_fall_back_without_probes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import compat.commands.explain as cmd

    monkeypatch.setitem(sys.modules, "compat.probes", None)
    facts, origin = cmd._machine_facts()
    assert origin == "compat.installed.installed_facts"
    assert facts.get("python") is not None


def test_matrix_validate_runs_the_signature_validator(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from tests.explain.helpers import ROOT

    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    text = (d / "signatures.yaml").read_text(encoding="utf-8")
    (d / "signatures.yaml").write_text(
        text.replace("category: gpu_oom", "category: gpu_melted", 1), encoding="utf-8"
    )
    r = run("matrix", "validate", str(d))
    assert r.code == 2
    assert "gpu_melted" in r.err


def test_a_last_line_without_newline_is_counted(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Issue 19 item 11: a one-line log without a final newline said "0 lines read".
    log = tmp_path / "one.log"
    log.write_bytes(b"RuntimeError: CUDA error: no kernel image is available for execution on the device")
    r = run("explain", str(log))
    assert "(1 line read)" in r.out.splitlines()[0]
    two = tmp_path / "two.log"
    two.write_bytes(b"step 1\nstep 2")
    assert "(2 lines read)" in run("explain", str(two)).out.splitlines()[0]
