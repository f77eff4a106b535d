"""The end of a recording (issue 32): atomic report writes that fail cleanly, a signal held for a child not yet
started, and the verdict of a watched process whose status could not be read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat._atomic import write_text_atomic
from compat.record.conclude import write_report
from compat.record.document import ExitInfo, RunRecord
from compat.record.verdict import verdict_of
from tests.record.conftest import cli_env, run_cli


def _rec(status: str, kind: str = "watch") -> RunRecord:
    rec = RunRecord(kind, 4242, command=None)
    rec.wall_s = 3.0
    rec.exit = ExitInfo(status, source="none")
    rec.cgroup = {"path": "/job", "oom_kill_delta": 0, "oom_kill_before": 0, "oom_kill_after": 0}
    rec.kernel_log = {"readable": True, "reason": "", "events": []}
    return rec


def test_atomic_write_replaces_whole_and_keeps_the_umask_mode(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_text("old")
    write_text_atomic(str(p), "new\n")
    assert p.read_text() == "new\n"
    assert p.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.json"]


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def test_atomic_write_failure_leaves_nothing_and_the_old_file_intact(tmp_path: Path) -> None:
    p = tmp_path / "a.json"
    p.write_text("old")

    def boom(fh: object) -> None:
        raise OSError(28, "No space left on device")

    from compat._atomic import write_atomic

    with pytest.raises(OSError, match="No space"):
        write_atomic(str(p), boom)  # type: ignore[arg-type]
    assert p.read_text() == "old"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.json"]


def test_atomic_write_refuses_a_folder_or_a_device_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        write_text_atomic(str(tmp_path / "d"), "x")
    assert (tmp_path / "d").is_dir()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        write_text_atomic(str(tmp_path / "fifo"), "x")  # never opened: a FIFO would block
    assert sorted(x.name for x in tmp_path.iterdir()) == ["d", "fifo"]


def test_write_report_is_both_files_or_neither(tmp_path: Path) -> None:
    rec = _rec("exited")
    rec.exit = ExitInfo("exited", 0)
    rec.verdict = verdict_of(rec).to_json()
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "report.html").mkdir()  # the second file cannot be written: the first is taken back
    with pytest.raises(OSError):
        write_report(rec, str(rep))
    assert sorted(x.name for x in rep.iterdir()) == ["report.html"]
    (rep / "report.html").rmdir()
    write_report(rec, str(rep))
    assert json.loads((rep / "run.json").read_text())["exit"]["code"] == 0
    assert sorted(x.name for x in rep.iterdir()) == ["report.html", "run.json"]
    with pytest.raises(NotADirectoryError):
        write_report(rec, str(rep / "run.json"))


def test_a_vanished_watched_process_without_evidence_ended_status_unknown() -> None:
    v = verdict_of(_rec("vanished"))
    assert v.outcome == "unknown"
    assert "exit status is unknown" in v.title and "kill" not in v.title
    assert any("no OOM kill in its memory cgroup" in d for d in v.deciding)


def test_a_vanished_process_with_an_oom_kill_counted_is_a_host_oom() -> None:
    rec = _rec("vanished")
    rec.cgroup.update(oom_kill_delta=1, oom_kill_after=1)
    assert verdict_of(rec).outcome == "host_oom"


def test_a_vanished_notebook_kernel_without_its_exit_marker_is_still_killed() -> None:
    assert verdict_of(_rec("vanished", kind="notebook")).outcome == "killed"


def test_an_interrupted_watch_is_not_judged() -> None:
    v = verdict_of(_rec("running"))
    assert v.outcome == "unknown" and "interrupted" in v.title and "still running" in v.title


def test_a_signal_before_the_child_exists_is_held_for_it(tmp_path: Path) -> None:
    """TERM between compat's handlers and the child's start: the child gets it once it exists, and the record is
    kept (on main compat died 143 there, with no record, and a child started just after would be orphaned)."""
    code = (
        "import os, signal, subprocess, sys\n"
        "from compat._signals import install_signal_handlers\n"
        "from compat.record import run\n"
        "install_signal_handlers()\n"
        "real = subprocess.Popen\n"
        "def popen(argv, *a, **k):\n"
        "    if argv[0] == 'sh':\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real(argv, *a, **k)\n"
        "run.subprocess.Popen = popen\n"
        "rc = run.run_command(['sh', '-c', 'exec sleep 20'], interval=0.2, gpu=False, kernel_log=False)\n"
        "print('RC', rc)\n"
    )
    env = cli_env(tmp_path / "cache")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60, cwd=tmp_path)
    assert r.stdout.strip().splitlines()[-1:] == [b"RC 143"], r.stderr[-500:]
    assert b"terminated by SIGTERM" in r.stderr
    (rec,) = (tmp_path / "cache" / "records").glob("run-*.json")
    assert json.loads(rec.read_text())["exit"]["signal"] == 15


def test_atomic_write_replaces_a_link_and_never_writes_through_it(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep")
    (tmp_path / "run.json").symlink_to(tmp_path / "victim")  # planted at a predictable name
    write_text_atomic(str(tmp_path / "run.json"), "new")
    assert not (tmp_path / "run.json").is_symlink() and (tmp_path / "run.json").read_text() == "new"
    assert (tmp_path / "victim").read_text() == "keep"


_MID_REPORT = (
    "import os, signal, subprocess, sys\n"
    "from compat._signals import install_signal_handlers\n"
    "from compat.record import conclude\n"
    "install_signal_handlers()\n"
    "real = conclude.write_report\n"
    "def slow(rec, d, **kw):\n"
    "    os.kill(os.getpid(), signal.SIGTERM)  # in the middle of writing the report\n"
    "    return real(rec, d, **kw)\n"
    "conclude.write_report = slow\n"
)


def test_run_a_signal_while_the_report_is_written_keeps_the_childs_status(tmp_path: Path) -> None:
    code = _MID_REPORT + (
        "from compat.record.run import run_command\n"
        "rc = run_command(['sh', '-c', 'exit 5'], interval=0.2, gpu=False, kernel_log=False,"
        f" report_dir={str(tmp_path / 'rep')!r}, hold_signals=True)\n"
        "print('RC', rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(tmp_path / "c"), capture_output=True, timeout=60
    )
    assert r.stdout.strip().splitlines()[-1:] == [b"RC 5"], r.stderr[-500:]
    doc = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert doc["exit"]["code"] == 5 and (tmp_path / "rep" / "report.html").stat().st_size > 0


def test_watch_a_signal_while_the_report_is_written_keeps_the_answer(tmp_path: Path) -> None:
    code = _MID_REPORT + (
        "from compat.record.watch import watch_pid\n"
        "p = subprocess.Popen(['sleep', '1'])  # our child, not reaped: compat reads its status as a zombie\n"
        "rc = watch_pid(p.pid, interval=0.2, gpu=False, kernel_log=False,"
        f" report_dir={str(tmp_path / 'rep')!r}, hold_signals=True)\n"
        "print('RC', rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(tmp_path / "c"), capture_output=True, timeout=60
    )
    assert r.stdout.strip().splitlines()[-1:] == [b"RC 0"], r.stderr[-500:]
    doc = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert doc["exit"] == {**doc["exit"], "status": "exited", "code": 0, "source": "zombie"}


@pytest.mark.parametrize("relay", ["missing", "dies-at-start"])
def test_without_a_working_relay_compat_copies_the_output_itself(tmp_path: Path, relay: str) -> None:
    """A relay that cannot run (compat in a zip app) or dies before its first byte: the child must not get a
    broken pipe; compat falls back to copying the output itself."""
    dead = tmp_path / "dead.py"
    dead.write_text("raise SystemExit(1)\n")
    path = str(tmp_path / "nope.py") if relay == "missing" else str(dead)
    code = (
        "import sys\nfrom compat.record import run\n"
        f"run.RELAY = {path!r}\n"
        "rc = run.run_command(['sh', '-c', 'i=0; while [ $i -lt 50 ]; do echo line $i; i=$((i+1)); done; exit 3'],"
        " interval=0.2, gpu=False, kernel_log=False, summary=False)\n"
        "print('RC', rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(tmp_path / "c"), capture_output=True, timeout=60
    )
    lines = r.stdout.decode().splitlines()
    assert lines == [f"line {i}" for i in range(50)] + ["RC 3"], r.stderr[-500:]


def test_an_interrupted_notebook_watcher_keeps_no_death_record(tmp_path: Path) -> None:
    """The next kernel shows a stored notebook record as "the previous kernel died": a watcher stopped by TERM
    while its kernel still ran must not leave one."""
    code = (
        "import os, signal, subprocess, threading\n"
        "from compat.record.watch import watch_pid\n"
        "p = subprocess.Popen(['sleep', '30'])\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()\n"
        f"rc = watch_pid(p.pid, interval=0.2, gpu=False, kernel_log=False, kind='notebook', summary=False,"
        f" notebook_base={str(tmp_path / 'c' / 'records' / 'notebook-k-1')!r})\n"
        "p.kill()\n"
        "print('RC', rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(tmp_path / "c"), capture_output=True, timeout=60
    )
    assert r.stdout.strip().splitlines()[-1:] == [b"RC 143"], r.stderr[-500:]
    assert list((tmp_path / "c" / "records").glob("notebook-*.json")) == []


def test_run_report_with_a_long_path_says_so_in_a_short_line(tmp_path: Path) -> None:
    """`compat run --report <100 KB>`: the one line saying the report was not written is clipped, and the exit
    status stays the command's (issue 32, item 18; the one flag the first pass left)."""
    long_dir = str(tmp_path / ("x" * 100_000) / "rep")
    r = run_cli(
        ["run", "--no-gpu", "--no-kernel-log", "--report", long_dir, "--", "true"],
        tmp_path / "cache",
    )
    err = r.stderr.decode()
    assert r.returncode == 0, err[-500:]
    failed = [ln for ln in err.splitlines() if "could not write the report" in ln]
    assert len(failed) == 1, err[-500:]
    assert max(len(ln) for ln in err.splitlines()) <= 400
