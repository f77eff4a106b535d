"""Cross-checking diagnoses against a snapshot through the resolver (agrees with `compat check`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.errors import MatrixError
from compat.explain.crosscheck import LOG_SOURCE, merge_log_facts
from compat.facts import Facts, load_snapshot
from tests.explain.helpers import DATA, log


@pytest.fixture(scope="module")
def full_matrix():  # type: ignore[no-untyped-def]
    from compat.matrix import get_matrix

    try:
        return get_matrix()
    except MatrixError as exc:
        pytest.skip(f"the core matrix files are not all present yet: {exc}")


def test_log_facts_fill_only_what_the_machine_lacks() -> None:
    snap = load_snapshot(DATA / "snapshot_old_driver.json")
    merged = merge_log_facts(
        snap, {"driver": "535.104.05", "driver_cuda": "11.4", "gpu": "GeForce GTX 660 Ti", "cc": "3.0"}
    )
    assert merged.get("driver").raw == "470.82.01"  # type: ignore[union-attr]
    assert merged.gpus is not None and merged.gpus[0].name == "NVIDIA A100-SXM4-80GB"
    empty = merge_log_facts(
        Facts(), {"driver_cuda": "11.4", "gpu": "GeForce GTX 660 Ti", "cc": "3.0", "driver": "not-a-version"}
    )
    assert empty.get("driver_cuda").source == LOG_SOURCE  # type: ignore[union-attr]
    assert empty.get("driver") is None  # malformed log values are ignored, never a crash
    assert empty.gpus is not None and empty.gpus[0].cc == "3.0"


def test_without_a_matrix_the_cross_check_says_why(tmp_path: Path, run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from tests.explain.helpers import ROOT

    d = tmp_path / "m"
    d.mkdir()
    shutil.copy(ROOT / "matrix" / "signatures.yaml", d / "signatures.yaml")
    p = tmp_path / "c.log"
    p.write_text(log("fooocus-1313"), encoding="utf-8")
    r = run(
        "--matrix", str(d), "explain", "--json", "--snapshot", str(DATA / "snapshot_old_driver.json"), str(p)
    )
    assert r.code == 0, r.err
    diag = json.loads(r.out)["diagnoses"][0]
    assert diag["category"] == "driver_too_old"
    assert diag["facts"]["cross_check"].startswith("unavailable")


def test_old_driver_is_confirmed_with_concrete_fixes(tmp_path: Path, run, full_matrix) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "c.log"
    p.write_text(log("fooocus-1313"), encoding="utf-8")
    r = run("explain", "--json", "--snapshot", str(DATA / "snapshot_old_driver.json"), str(p))
    assert r.code == 0, r.err
    d = json.loads(r.out)["diagnoses"][0]
    assert d["category"] == "driver_too_old"
    assert d["facts"]["cross_check"] == "confirmed"
    assert (
        "your driver 470.82.01 cannot run the CUDA 12.1 runtime bundled with torch 2.1.0+cu121"
        in d["explanation"]
    )
    assert any(f["text"].startswith("Install NVIDIA driver ≥") for f in d["fixes"])
    # the same stack through `compat check` gives the same error
    chk = run("check", "--json", "--snapshot", str(DATA / "snapshot_old_driver.json"))
    ids = {f["id"] for f in json.loads(chk.out)["findings"] if f["severity"] == "error"}
    assert "driver.cuda" in ids
    need = d["facts"]["min_driver"]
    assert any(need in f["message"] for f in json.loads(chk.out)["findings"] if f["id"] == "driver.cuda")


def test_new_driver_contradicts_the_log(tmp_path: Path, run, full_matrix) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "c.log"
    p.write_text(log("fooocus-1313"), encoding="utf-8")
    plain = json.loads(run("explain", "--json", str(p)).out)["diagnoses"][0]
    r = run("explain", "--json", "--snapshot", str(DATA / "snapshot_new_driver.json"), str(p))
    d = json.loads(r.out)["diagnoses"][0]
    assert d["facts"]["cross_check"] == "contradicted"
    assert d["confidence"] < plain["confidence"]
    assert "can run CUDA 12.1" in d["explanation"]


def test_no_gpu_machine_confirms_no_gpu_visible(tmp_path: Path, run, full_matrix) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "c.log"
    p.write_text(log("cor-gs-23"), encoding="utf-8")
    r = run("explain", "--json", "--snapshot", str(DATA / "snapshot_no_gpu.json"), str(p))
    d = json.loads(r.out)["diagnoses"][0]
    assert d["category"] == "no_gpu_visible"
    assert d["facts"]["cross_check"] == "confirmed"
