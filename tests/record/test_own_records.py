"""Records as compat's own files (issue 32, items 4, 13, 14 and 15): a FIFO, a damaged or hostile record never
hangs or breaks a reader (one warning, the next newest record instead), what is written can always be read back
(the tail is bounded in size), `%load_ext compat` never raises into the cell, and a kernel's death is told
exactly once, to the next kernel, however soon that kernel loads the extension."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from compat.record import notebook, store
from compat.record.document import ExitInfo, RunRecord
from compat.record.verdict import verdict_of
from tests.core.test_own_files import finishes
from tests.record.conftest import run_cli


def record(code: int = 3, pid: int = 4242, kind: str = "run") -> dict[str, Any]:
    rec = RunRecord(kind, pid, command=["sh", "-c", f"exit {code}"])
    rec.wall_s = 1.0
    rec.exit = ExitInfo("exited", code)
    rec.verdict = verdict_of(rec, []).to_json()
    return rec.to_json()


def put(path: Path, doc: Any, age: float = 0.0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    if age:
        t = time.time() - age
        os.utime(path, (t, t))


class _Stub:
    def __init__(self) -> None:
        self.files: list[Any] = []

    def enable(self, file: Any = None, **kw: Any) -> None:
        self.files.append(file)

    def register(self, fn: Any) -> None:
        pass


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> Any:
    """notebook.load runs in the test process: no faulthandler or atexit hook of ours is left in pytest."""
    getattr(store, "_WARNED", set()).clear()
    stub = _Stub()
    monkeypatch.setattr(notebook, "faulthandler", stub)
    monkeypatch.setattr(notebook, "atexit", stub)
    monkeypatch.setattr(notebook, "_STATE", {})
    yield
    for f in stub.files:
        f.close()


# ------------------------------------------------------------------ item 4: special files as records


def test_a_fifo_as_the_newest_record_is_skipped(cache: Path) -> None:
    put(cache / "records" / "run-1-4242.json", record(), age=60)
    fifo = cache / "records" / "run-2-1.json"
    os.mkfifo(fifo)
    found = finishes(store.latest, fifo)
    assert found is not None and found[1]["pid"] == 4242


def test_records_are_written_0600(cache: Path) -> None:
    path = store.save(record(), "run-1-1.json")
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert oct((cache / "records").stat().st_mode & 0o777) == "0o700"
    assert store.load(path) is not None


# ------------------------------------------------------------------ item 14: hostile records

HOSTILE = {
    "deep list": "[" * 100_000 + "]" * 100_000,
    "deep object": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "deep but parseable": '{"kind": "run", "pid": 1, "exit": {"status": "x"}, "verdict": {"x": '
    + "[" * 500
    + "]" * 500
    + "}}",
    "title a number": {**record(), "verdict": {**record()["verdict"], "title": 7}},
    "deciding a string": {**record(), "verdict": {**record()["verdict"], "deciding": "abc"}},
    "findings of ints": {**record(), "verdict": {**record()["verdict"], "findings": [1, 2]}},
    "tail of dicts": {**record(), "output_tail": [{"a": 1}]},
    "verdict a list": {**record(), "verdict": ["failed"]},
    "exit a string": {**record(), "exit": "exited"},
    "pid a string": {**record(), "pid": "x"},
    "a list": [record()],
    "half written": json.dumps(record())[:100],
    "samples of strings": {**record(), "samples": ["x"]},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_record_is_skipped_with_one_warning(
    cache: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    put(cache / "records" / "run-1-4242.json", record(), age=60)
    put(cache / "records" / "run-2-5.json", HOSTILE[case])
    found = store.latest()
    assert found is not None and found[1]["pid"] == 4242
    store.latest()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "skipped the damaged record" in err[0] and "run-2-5.json" in err[0], err


def test_explain_last_skips_a_deep_record(cache: Path) -> None:
    put(cache / "records" / "run-1-4242.json", record(), age=60)
    put(cache / "records" / "run-2-5.json", HOSTILE["deep list"])
    r = run_cli(["explain", "--last", "--json"], cache)
    assert r.returncode == 1, r.stderr  # the older record's verdict (exit 3: failed), not exit 3 of a crash
    assert json.loads(r.stdout)["pid"] == 4242
    assert r.stderr.decode().count("skipped the damaged record") == 1


def test_the_notebook_extension_never_raises_on_a_bad_record(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notebook, "kernel_key", lambda: "k1")
    monkeypatch.setattr(notebook, "_STATE", {})
    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: started.append(argv))
    for case in ("deep list", "title a number", "findings of ints", "verdict a list"):
        put(cache / "records" / f"notebook-k1-{len(started) + 10}.json", HOSTILE[case])
    out = io.StringIO()
    notebook.load(out=out, pid=os.getpid())
    assert started, out.getvalue()  # the watcher still starts
    assert "watching this kernel" in out.getvalue()


def test_the_notebook_extension_never_raises_on_anything(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("anything")

    monkeypatch.setattr(notebook, "_STATE", {})
    monkeypatch.setattr(notebook, "_report_previous", boom)
    monkeypatch.setattr(notebook, "_start", boom)
    out = io.StringIO()
    notebook.load(out=out, pid=os.getpid())
    assert out.getvalue().count("\n") == 2 and "Traceback" not in out.getvalue()


def test_a_fifo_as_the_fault_file_does_not_hang_the_kernel(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notebook, "kernel_key", lambda: "k2")
    monkeypatch.setattr(notebook, "_STATE", {})
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: None)
    (cache / "records").mkdir(parents=True, mode=0o700)
    fault = cache / "records" / f"notebook-k2-{os.getpid()}.fault"
    os.mkfifo(fault)
    finishes(lambda: notebook.load(out=io.StringIO(), pid=os.getpid()), fault)
    assert fault.is_file() and oct(fault.stat().st_mode & 0o777) == "0o600"


# ------------------------------------------------------------------ item 13: the record is bounded


def test_the_tail_is_bounded_in_size_and_keeps_the_last_lines() -> None:
    from compat.record.tail import Tail

    t = Tail(100_000, max_chars=10_000)
    for i in range(5_000):
        t.append(f"{i:04d}" + "x" * 996)
    assert t.chars <= 10_000 and len(t) == 10 and t[-1].startswith("4999")
    assert sum(len(x) for x in t) == t.chars
    t = Tail(3, max_chars=10_000)
    for i in range(10):
        t.append(str(i))
    assert list(t) == ["7", "8", "9"] and t.chars == 3
    t = Tail(5, max_chars=10)
    t.append("y" * 50)
    assert list(t) == ["y" * 10]  # a giant line: its end is kept


def test_a_record_is_always_readable_after_save(cache: Path) -> None:
    doc = record()
    doc["output_tail"] = ["z" * 4000] * 5000
    path = store.save(doc, "run-9-9.json")
    assert os.path.getsize(path) <= store.MAX_RECORD
    loaded = store.load(path)
    assert loaded is not None and loaded["output_tail"][-1] == "z" * 4000
    big = store.encode(doc, limit=1 << 20)
    assert len(big) <= 1 << 20 and "trimmed" in json.loads(big)["notes"][-1]


def test_run_keeps_a_bounded_tail(cache: Path, tmp_path: Path) -> None:
    code = "import sys\nfor _ in range(3000): sys.stdout.write('q' * 3999 + '\\n')\n"
    r = run_cli(["run", "--no-gpu", "--tail", "100000", "--", sys.executable, "-c", code], cache)
    assert r.returncode == 0 and len(r.stdout) == 3000 * 4000
    doc = store.latest()
    assert doc is not None
    tail = doc[1]["output_tail"]
    assert 0 < sum(len(x) for x in tail) <= 4 << 20 and doc[1]["output_lines"] == 3000


# ------------------------------------------------------------------ item 15: the restart race


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _died(cache: Path, key: str, delay: float | None) -> tuple[int, threading.Thread | None]:
    """A kernel of `key` that loaded the extension and died; its watcher writes the record after `delay` s
    (None: never)."""
    pid = _dead_pid()
    base = cache / "records" / f"notebook-{key}-{pid}"
    base.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    Path(str(base) + notebook.KERNEL).write_text(str(pid))
    doc = record(kind="notebook", pid=pid)
    doc["exit"] = ExitInfo("signaled", None, 9).to_json()
    doc["verdict"] = {**doc["verdict"], "outcome": "failed", "title": "killed by SIGKILL"}
    if delay is None:
        return pid, None
    t = threading.Timer(delay, lambda: store.save(doc, base.name + ".json"))
    t.start()
    return pid, t


def _load(monkeypatch: pytest.MonkeyPatch, key: str, wait_s: float = 5.0) -> str:
    monkeypatch.setattr(notebook, "kernel_key", lambda: key)
    monkeypatch.setattr(notebook, "_STATE", {})
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: None)
    out = io.StringIO()
    notebook.load(out=out, pid=os.getpid(), wait_s=wait_s)  # this (live) process is the new kernel
    return out.getvalue()


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.5, 1.5])
def test_a_death_is_told_once_to_the_next_kernel_whatever_the_timing(
    cache: Path, monkeypatch: pytest.MonkeyPatch, delay: float
) -> None:
    pid, timer = _died(cache, "k3", delay if delay else None)
    if not delay:
        _died_now = record(kind="notebook", pid=pid)
        _died_now["verdict"] = {**_died_now["verdict"], "outcome": "failed", "title": "killed by SIGKILL"}
        store.save(_died_now, f"notebook-k3-{pid}.json")
    first = _load(monkeypatch, "k3")
    assert first.count(f"the previous kernel (pid {pid}) died") == 1, first
    if timer is not None:
        timer.join()
    second = _load(monkeypatch, "k3")  # a later, clean restart
    assert "previous kernel" not in second, second


def test_a_record_later_than_the_wait_is_told_once_and_never_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid, timer = _died(cache, "k4", 1.0)
    first = _load(monkeypatch, "k4", wait_s=0.2)
    assert f"the previous kernel (pid {pid}) ended without a clean exit" in first, first
    assert timer is not None
    timer.join()
    assert "previous kernel" not in _load(monkeypatch, "k4")


def test_a_clean_exit_is_not_waited_for(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t0 = time.monotonic()
    assert "previous kernel" not in _load(monkeypatch, "k5")
    assert time.monotonic() - t0 < 2.0


def test_a_fifo_as_the_watcher_file_does_not_hang_the_next_kernel(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid, _ = _died(cache, "k6", None)
    fifo = cache / "records" / f"notebook-k6-{pid}.watcher"
    os.mkfifo(fifo)
    out = finishes(lambda: _load(monkeypatch, "k6", wait_s=0.3), fifo)
    assert f"the previous kernel (pid {pid}) ended without a clean exit" in out


def test_explain_last_with_only_a_damaged_record_says_it_in_one_line(cache: Path) -> None:
    put(cache / "records" / "run-2-5.json", HOSTILE["deep list"])
    r = run_cli(["explain", "--last"], cache)
    err = r.stderr.decode().strip().splitlines()
    assert r.returncode == 2 and len(err) == 1, err
    assert (
        "no recorded run" in err[0] and "skipped 1 damaged record(s)" in err[0] and "run-2-5.json" in err[0]
    )
