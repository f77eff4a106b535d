"""compat's own files under attack (issue 32, items 3, 4, 7, 13, 14, 16): special files at every path compat reads
of its own, a cache directory of another user, hostile and huge records, a hanging NVML under the guard, a fleet
merge of a million findings. Never a hang, never a traceback, never exit 3, memory bounded."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.harness import INPUT_MEMORY_CAP_MIB, ROOT, assert_contract, run

CAP_S = 30.0
SNAPSHOT = str(ROOT / "tests" / "data" / "explain" / "snapshot_no_gpu.json")

GUARD_TWICE = """
import sys, time, compat
for i in range(2):
    t0 = time.monotonic()
    try:
        r = compat.guard()
        print("OK", r.cached, round(time.monotonic() - t0, 1))
    except compat.IncompatibleEnvironment as exc:
        print("INCOMPATIBLE", str(exc).replace(chr(10), " | "), round(time.monotonic() - t0, 1))
"""


def _record(outcome_code: int = 3, pid: int = 4242) -> dict[str, Any]:
    sys.path.insert(0, os.environ.get("CHAOS_COMPAT_ROOT") or str(ROOT))
    from compat.record.document import ExitInfo, RunRecord
    from compat.record.verdict import verdict_of

    rec = RunRecord("run", pid, command=["sh", "-c", f"exit {outcome_code}"])
    rec.wall_s = 1.0
    rec.exit = ExitInfo("exited", outcome_code)
    rec.verdict = verdict_of(rec, []).to_json()
    return rec.to_json()


def _cache(tmp_path: Path) -> Path:
    c = tmp_path / "cache"
    (c / "records").mkdir(parents=True, mode=0o700)
    c.chmod(0o700)
    return c


def _put(path: Path, doc: Any, age: float = 0.0) -> None:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    if age:
        t = time.time() - age
        os.utime(path, (t, t))


# ------------------------------------------------------------------ item 4: a FIFO at every path compat reads


@pytest.mark.parametrize("name", ["matrix-cache.json", "matrix-extra-signatures.json"])
def test_guard_with_a_fifo_in_the_cache(tmp_path: Path, name: str) -> None:
    c = _cache(tmp_path)
    os.mkfifo(c / name)
    r = run([sys.executable, "-c", GUARD_TWICE], env={"COMPAT_CACHE_DIR": str(c)}, python=False, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert r.text.count("OK") + r.text.count("INCOMPATIBLE") == 2, r.text


@pytest.mark.parametrize("name", ["matrix-cache.json", "matrix-extra-signatures.json"])
def test_check_and_run_with_a_fifo_in_the_cache(tmp_path: Path, name: str) -> None:
    c = _cache(tmp_path)
    os.mkfifo(c / name)
    env = {"COMPAT_CACHE_DIR": str(c)}
    r = run(["check", "--snapshot", SNAPSHOT], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0, 1), cap_s=CAP_S)
    r = run(["run", "--no-gpu", "--", "true"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)


def test_a_fifo_as_the_newest_record(tmp_path: Path) -> None:
    c = _cache(tmp_path)
    _put(c / "records" / "run-1-4242.json", _record(3), age=60)
    os.mkfifo(c / "records" / "run-2-4243.json")
    env = {"COMPAT_CACHE_DIR": str(c)}
    r = run(["explain", "--last", "--json"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(1,), cap_s=CAP_S)
    assert json.loads(r.out)["pid"] == 4242  # the FIFO is not a record: the one before it is the last
    r = run(["report", "--snapshot", SNAPSHOT, "--no-smoke"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert "exit 3" in r.text


# ------------------------------------------------------------------ item 14: hostile records


HOSTILE = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "deep-object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "wrong-types": {
        "kind": "run",
        "pid": 5,
        "exit": {"status": "exited"},
        "verdict": {"outcome": "failed", "title": 7, "deciding": "x", "findings": [1, 2]},
        "output_tail": [1, {"a": 2}],
    },
    "verdict-a-list": {"kind": "run", "pid": 5, "exit": {"status": "exited"}, "verdict": ["failed"]},
    "exit-a-string": {"kind": "run", "pid": 5, "exit": "exited", "verdict": {"outcome": "failed"}},
    "not-json": '{"kind": "run", "pid": ',
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_newest_record_is_skipped(tmp_path: Path, case: str) -> None:
    c = _cache(tmp_path)
    _put(c / "records" / "run-1-4242.json", _record(3), age=60)
    _put(c / "records" / "run-2-5.json", HOSTILE[case])
    env = {"COMPAT_CACHE_DIR": str(c)}
    r = run(["explain", "--last", "--json"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(1,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert json.loads(r.out)["pid"] == 4242
    assert len(r.err_lines) == 1 and "skipped the damaged record" in r.err_lines[0], r.err
    r = run(["report", "--snapshot", SNAPSHOT, "--no-smoke"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)


# ------------------------------------------------------------------ item 13: a huge run output

BIG = "import sys\nline = 'x' * 3999 + '\\n'\nfor _ in range(25_000): sys.stdout.write(line)\n"


def test_a_huge_output_keeps_a_readable_bounded_record(tmp_path: Path) -> None:
    c = _cache(tmp_path)
    env = {"COMPAT_CACHE_DIR": str(c)}
    out = tmp_path / "out"
    with open(out, "wb") as fh:
        r = run(
            ["run", "--no-gpu", "--tail", "100000", "--", sys.executable, "-c", BIG],
            env=env,
            stdout=fh,
            cap_s=60,
        )
    assert_contract(r, codes=(0,), cap_s=60, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert out.stat().st_size == 25_000 * 4000  # every byte passed through
    records = list((c / "records").glob("run-*.json"))
    assert len(records) == 1 and records[0].stat().st_size < 16 << 20, [p.stat().st_size for p in records]
    r = run(["explain", "--last", "--json"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert json.loads(r.out)["verdict"]["outcome"] == "ok"


# ------------------------------------------------------------------ item 3: another user's cache directory


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to create another user's dir"
)
def test_a_cache_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    c = tmp_path / "cache"
    (c / "records").mkdir(parents=True)
    os.mkfifo(c / "matrix-cache.json")
    for p in (c, c / "records", c / "matrix-cache.json"):
        os.chown(p, 65534, 65534)
        p.chmod(0o777)
    env = {"COMPAT_CACHE_DIR": str(c)}
    r = run([sys.executable, "-c", GUARD_TWICE], env=env, python=False, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    warnings = [ln for ln in r.err_lines if "not using the cache directory" in ln]
    assert len(warnings) == 1, r.err
    r = run(["run", "--no-gpu", "--", "sh", "-c", "echo secret-token-1234"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert (
        list((c / "records").iterdir()) == []
    )  # nothing of the victim's run lands where the other user reads


def test_records_and_caches_are_private(tmp_path: Path) -> None:
    c = tmp_path / "fresh"
    env = {"COMPAT_CACHE_DIR": str(c)}
    r = run(["run", "--no-gpu", "--", "sh", "-c", "echo hello"], env=env, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    r = run([sys.executable, "-c", GUARD_TWICE], env=env, python=False, cap_s=CAP_S)
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    dirs = [c, *[p for p in c.rglob("*") if p.is_dir()]]
    files = [p for p in c.rglob("*") if p.is_file()]
    assert any(p.name.startswith("run-") for p in files) and any(p.name.startswith("guard-") for p in files)
    assert {oct(p.stat().st_mode & 0o777) for p in dirs} == {"0o700"}
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}, [
        (p.name, oct(p.stat().st_mode)) for p in files
    ]


# ------------------------------------------------------------------ item 7: the guard under a hanging NVML


def test_guard_reports_a_hanging_driver_library_and_does_not_cache(fake_nvml: dict[str, Path]) -> None:
    r = run(
        [sys.executable, "-c", GUARD_TWICE],
        env={"LD_LIBRARY_PATH": str(fake_nvml["hang"])},
        python=False,
        cap_s=60,
    )
    assert_contract(r, codes=(0,), cap_s=60)
    lines = r.text.splitlines()
    assert len(lines) == 2 and all(ln.startswith("INCOMPATIBLE") and "NVML hung" in ln for ln in lines), (
        r.text
    )
    assert float(lines[1].rsplit(" ", 1)[1]) >= 2.0  # the second call probed again: no cached OK


# ------------------------------------------------------------------ item 16: fleet merge of a million findings


def _doctor_report() -> dict[str, Any]:
    doc = json.loads((ROOT / "tests" / "data" / "fleet" / "cluster-a" / "gpu-a01.json").read_text())
    assert isinstance(doc, dict)
    return doc


def _write_array(p: Path, doc: dict[str, Any], key: str, element: str, count: int) -> None:
    """`doc` with `key` an array of `count` copies of `element`, written in pieces: a child forked from a large
    pytest process would start its ru_maxrss at the parent's size."""
    head, tail = json.dumps({**doc, key: []}).rsplit(f'"{key}": []', 1)
    piece = ",".join([element] * 10_000)
    with open(p, "w") as fh:
        fh.write(head + f'"{key}": [' + element)
        for _ in range(count // 10_000):
            fh.write("," + piece)
        fh.write("]" + tail)


def test_fleet_merge_of_a_million_findings_stays_small(tmp_path: Path) -> None:
    f = {"id": "x.y", "severity": "error", "title": "t", "message": "m"}
    p = tmp_path / "huge.json"
    _write_array(p, _doctor_report(), "findings", json.dumps(f, separators=(",", ":")), 1_000_000)
    assert p.stat().st_size > 55 << 20
    r = run(["fleet", "merge", str(p)], cap_s=CAP_S)
    assert_contract(r, codes=(2,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert len(r.err_lines) == 1 and str(p) in r.err_lines[0] and "findings" in r.err_lines[0], r.err


@pytest.mark.parametrize("element", ["[]", "1", '"abcdefghijklmnopqrstuvwxyz"', "{}"])
def test_fleet_merge_of_huge_arrays_stays_small(tmp_path: Path, element: str) -> None:
    p = tmp_path / "huge.json"
    _write_array(p, _doctor_report(), "extra", element, (60 << 20) // (len(element) + 1))
    r = run(["fleet", "merge", str(p)], cap_s=CAP_S)
    assert_contract(r, codes=(2,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert len(r.err_lines) == 1 and str(p) in r.err_lines[0], r.err


def test_fleet_merge_of_many_sane_reports_is_still_merged(tmp_path: Path) -> None:
    doc = _doctor_report()
    p = tmp_path / "many.jsonl"
    with open(p, "w") as fh:
        for i in range(400):
            fh.write(json.dumps({**doc, "host": f"node-{i:04d}"}) + "\n")
    r = run(["fleet", "merge", "--json", str(p)], cap_s=60)
    assert_contract(r, codes=(0, 1), cap_s=60, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert len(json.loads(r.out)["nodes"]) == 400


@pytest.mark.parametrize("case", ["deep", "wrong-types", "fifo"])
def test_only_damaged_records_is_exit_2_with_one_line(tmp_path: Path, case: str) -> None:
    c = _cache(tmp_path)
    if case == "fifo":
        os.mkfifo(c / "records" / "run-2-5.json")
    else:
        _put(c / "records" / "run-2-5.json", HOSTILE[case])
    r = run(["explain", "--last"], env={"COMPAT_CACHE_DIR": str(c)}, cap_s=CAP_S)
    assert_contract(r, codes=(2,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert len(r.err_lines) == 1 and "no recorded run" in r.err_lines[0], r.err
