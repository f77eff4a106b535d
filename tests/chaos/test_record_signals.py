"""`compat run` and `compat watch` under signals and failing report writes (issue 32, items 8-12): a signal at every
phase (before the child starts, while it runs, after it ended during the wrap-up), SIGKILL of compat with the
child going on, a watched process reaped by its parent, and reports that cannot be written.
On main: a reaped `sleep` was "killed ... SIGKILL" (exit 1); TERM to watch left nothing (143); TERM during run's
wrap-up replaced the child's 5 with 143 and lost the record; SIGKILL of compat killed the child on its next write;
an unwritable report still printed `report: ...` and left 0-byte and *.tmp files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.harness import compat_env, kill_tagged, tagged

PY = sys.executable


@dataclass
class Result:
    code: int
    out: str
    err: str
    leftovers: list[int]
    cache: Path


def compat(
    argv: Sequence[str],
    tmp: Path,
    *,
    trigger: Callable[[int], bool] | None = None,
    sig: int = signal.SIGTERM,
    repeat: bool = False,
    prefix: Sequence[str] = (),
    cap_s: float = 40.0,
) -> Result:
    """Run `python -m compat argv`; once `trigger(pid)` is true, send `sig` (every 30 ms with `repeat`, until compat
    has exited). Waits up to 5 s for what compat started to finish, then reports what is still alive."""
    tag = uuid.uuid4().hex
    tmpdir = tmp / f"tmp-{tag[:8]}"
    tmpdir.mkdir()
    cache = tmp / f"cache-{tag[:8]}"
    env = compat_env(tag, str(tmpdir), {"COMPAT_CACHE_DIR": str(cache)})
    out_f, err_f = tmp / f"out-{tag[:8]}", tmp / f"err-{tag[:8]}"
    with open(out_f, "wb") as out, open(err_f, "wb") as err:
        p = subprocess.Popen(
            [*prefix, PY, "-m", "compat", *argv],
            env=env,
            cwd=tmpdir,  # not the checkout: `python -m` would import compat from the working directory
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
    done = threading.Event()

    def sender() -> None:
        if trigger is None:
            return
        while not trigger(p.pid) and not done.is_set():
            time.sleep(0.01)
        while not done.is_set():
            try:
                os.kill(p.pid, sig)
            except OSError:
                return
            if not repeat:
                return
            time.sleep(0.03)

    threading.Thread(target=sender, daemon=True).start()
    try:
        p.wait(timeout=cap_s)
    except subprocess.TimeoutExpired:
        kill_tagged(tag)
        p.wait()
        raise AssertionError(f"compat {argv} took over {cap_s} s") from None
    finally:
        done.set()
    deadline = time.monotonic() + 5.0
    left = tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = tagged(tag)
    kill_tagged(tag)
    return Result(
        p.returncode,
        out_f.read_text(errors="replace"),
        err_f.read_text(errors="replace"),
        left,
        cache,
    )


def at(seconds: float) -> Callable[[int], bool]:
    t0 = time.monotonic()
    return lambda _pid: time.monotonic() - t0 >= seconds


def watching(then: Callable[[], object] = lambda: None) -> Callable[[int], bool]:
    """True once compat's recorder thread runs (compat watches by then: its signal handlers are in place); calls
    `then` once at that moment."""

    def ready(pid: int) -> bool:
        try:
            up = len(os.listdir(f"/proc/{pid}/task")) > 1
        except OSError:
            return False
        if up:
            then()
        return up

    return ready


def both(a: Callable[[int], bool], b: Callable[[int], bool]) -> Callable[[int], bool]:
    """`a`, then `b` (each checked until true, in order)."""
    state = [False]

    def ready(pid: int) -> bool:
        state[0] = state[0] or a(pid)
        return state[0] and b(pid)

    return ready


def after(path: Path, delay: float) -> Callable[[int], bool]:
    seen: list[float] = []

    def ready(_pid: int) -> bool:
        if not path.exists():
            return False
        seen.append(seen[0] if seen else time.monotonic())
        return time.monotonic() - seen[0] >= delay

    return ready


def records(cache: Path) -> list[dict[str, Any]]:
    d = cache / "records"
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def leftovers_in(d: Path) -> list[str]:
    return (
        sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp") or p.stat().st_size == 0)
        if d.is_dir()
        else []
    )


class Reaped:
    """A process started (and reaped at once) by the test, as a shell reaps its jobs: compat never sees a zombie."""

    def __init__(self, script: str) -> None:
        self.proc = subprocess.Popen(["sh", "-c", script])
        self.thread = threading.Thread(target=self.proc.wait, daemon=True)
        self.thread.start()

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.thread.join(5)


# ------------------------------------------------------------------ item 8: watch and a normal exit


def test_watch_a_reaped_normal_exit_is_not_a_kill(tmp_path: Path) -> None:
    go = tmp_path / "go"
    job = Reaped(f"while [ ! -e {go} ]; do sleep 0.05; done; sleep 0.5")  # ends normally once compat watches
    try:
        r = compat(
            ["watch", "--pid", str(job.proc.pid), "--no-gpu", "--interval", "0.2"],
            tmp_path,
            trigger=both(watching(go.touch), lambda _pid: False),  # no signal
        )
    finally:
        job.end()
    assert r.code == 0, r.err
    assert "exit status is unknown" in r.err and "nothing recorded shows a failure" in r.err, r.err
    assert "SIGKILL" not in r.err and "killed" not in r.err, r.err
    (doc,) = records(r.cache)
    assert doc["exit"]["status"] == "vanished"
    assert doc["verdict"]["outcome"] == "unknown"


# ------------------------------------------------------------------ item 9: signals to watch


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_watch_interrupted_writes_the_partial_record_and_report(tmp_path: Path, sig: signal.Signals) -> None:
    job = Reaped("sleep 30")
    rep = tmp_path / "rep"
    try:
        r = compat(
            ["watch", "--pid", str(job.proc.pid), "--no-gpu", "--interval", "0.2", "--report", str(rep)],
            tmp_path,
            trigger=both(watching(), at(0.5)),
            sig=sig,
        )
        assert job.proc.poll() is None, "compat watch must never signal the process it watches"
    finally:
        job.end()
    assert r.code == 128 + sig, r.err
    doc = json.loads((rep / "run.json").read_text())
    assert doc["exit"]["status"] == "running"
    assert any(f"interrupted by {sig.name}" in n for n in doc["notes"])
    assert "interrupted" in doc["verdict"]["title"]
    assert (rep / "report.html").stat().st_size > 0
    assert len(records(r.cache)) == 1
    assert f"{rep}/report.html" in r.err


def test_watch_signal_during_the_wrap_up_keeps_the_answer(tmp_path: Path) -> None:
    go, done = tmp_path / "go", tmp_path / "done"
    job = Reaped(f"while [ ! -e {go} ]; do sleep 0.05; done; sleep 0.3; touch {done}")
    rep = tmp_path / "rep"
    try:
        r = compat(
            ["watch", "--pid", str(job.proc.pid), "--no-gpu", "--interval", "0.2", "--report", str(rep)],
            tmp_path,
            trigger=both(watching(go.touch), after(done, 0.05)),
            repeat=True,
        )
    finally:
        job.end()
    assert r.code == 0, r.err
    doc = json.loads((rep / "run.json").read_text())
    assert doc["exit"]["status"] == "vanished" and doc["verdict"]["outcome"] == "unknown"


# ------------------------------------------------------------------ item 10: signals to run at every phase


def test_run_signal_after_the_child_exited_keeps_its_status_and_record(tmp_path: Path) -> None:
    done = tmp_path / "done"
    rep = tmp_path / "rep"
    r = compat(
        [
            "run",
            "--no-gpu",
            "--interval",
            "0.2",
            "--report",
            str(rep),
            "--",
            "sh",
            "-c",
            f"sleep 1; touch {done}; exit 5",
        ],
        tmp_path,
        trigger=after(done, 0.05),
        repeat=True,
    )
    assert r.code == 5, r.err
    (doc,) = records(r.cache)
    assert doc["exit"] == json.loads((rep / "run.json").read_text())["exit"]
    assert doc["exit"]["code"] == 5
    assert any("after the run had ended" in n for n in doc["notes"])
    assert "exited with status 5" in r.err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_run_signal_while_the_child_runs_is_forwarded_and_recorded(
    tmp_path: Path, sig: signal.Signals
) -> None:
    started = tmp_path / "started"
    rep = tmp_path / "rep"
    r = compat(
        ["run", "--no-gpu", "--report", str(rep), "--", "sh", "-c", f"touch {started}; exec sleep 20"],
        tmp_path,
        trigger=after(started, 0.2),
        sig=sig,
    )
    assert r.code == 128 + sig, r.err
    assert not r.leftovers
    doc = json.loads((rep / "run.json").read_text())
    assert doc["exit"]["status"] == "signaled" and doc["exit"]["signal"] == sig
    assert len(records(r.cache)) == 1


def test_run_signal_at_random_early_moments_never_orphans_the_child(tmp_path: Path) -> None:
    """TERM while compat starts (imports, handlers, the relay, the child's start): compat ends 143 (or dies of it
    before its handlers exist) and the child never outlives it."""
    import random

    rng = random.Random(32)
    for delay in sorted(rng.uniform(0.05, 1.2) for _ in range(5)):
        r = compat(["run", "--no-gpu", "--", "sh", "-c", "sleep 8"], tmp_path, trigger=at(delay))
        assert r.code in (143, -15), (delay, r.code, r.err)
        assert not r.leftovers, (delay, r.leftovers)


# ------------------------------------------------------------------ item 11: SIGKILL of compat


CHATTY = "touch {started}; i=0; while [ $i -lt 25 ]; do echo line $i; echo err $i >&2; i=$((i+1)); sleep 0.1; done; echo finished; touch {done}"


def test_sigkill_of_compat_run_leaves_the_child_running_with_its_output(tmp_path: Path) -> None:
    started, done = tmp_path / "started", tmp_path / "done"
    r = compat(
        ["run", "--no-gpu", "--", "sh", "-c", CHATTY.format(started=started, done=done)],
        tmp_path,
        trigger=after(started, 0.4),
        sig=signal.SIGKILL,
    )
    assert r.code == -signal.SIGKILL
    assert done.exists(), "the child died with compat"
    assert r.out.splitlines() == [f"line {i}" for i in range(25)] + ["finished"]
    assert [ln for ln in r.err.splitlines() if ln.startswith("err ")] == [f"err {i}" for i in range(25)]
    assert not r.leftovers, "the relay outlived the child"


# ------------------------------------------------------------------ item 12: reports that cannot be written


def _blocked(kind: str, tmp: Path) -> tuple[str, list[str]]:
    """A --report DIR that cannot be written, and the prefix that runs compat (a file-size limit: a full disk)."""
    if kind == "dev-full":
        return "/dev/full", []
    rep = tmp / "rep"
    rep.mkdir()
    if kind == "dir-in-the-way":
        (rep / "report.html").mkdir()
        return str(rep), []
    if kind == "unwritable-dir":
        if os.geteuid() == 0:
            pytest.skip("root writes into a 0555 folder")
        rep.chmod(0o555)
        return str(rep), []
    # full disk: RLIMIT_FSIZE makes every write past 1000 bytes fail with EFBIG (Python ignores SIGXFSZ)
    limit = "import os,resource,sys; resource.setrlimit(resource.RLIMIT_FSIZE,(1000,1000)); os.execv(sys.argv[1], sys.argv[1:])"
    return str(rep), [PY, "-c", limit]


KINDS = ["dev-full", "dir-in-the-way", "unwritable-dir", "full-disk"]


@pytest.mark.parametrize("kind", KINDS)
def test_run_report_that_cannot_be_written_says_so(tmp_path: Path, kind: str) -> None:
    rep, prefix = _blocked(kind, tmp_path)
    r = compat(
        ["run", "--no-gpu", "--report", rep, "--", "sh", "-c", "echo hi; exit 4"], tmp_path, prefix=prefix
    )
    assert r.code == 4, r.err  # the run's status, whatever happened to the report
    assert r.out == "hi\n"
    assert f"compat: run: could not write the report to {rep}" in r.err, r.err
    assert "report:" not in r.err and "Traceback" not in r.err, r.err
    if kind != "dev-full":
        left = leftovers_in(Path(rep))
        assert left == [], left
        assert not (Path(rep) / "run.json").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_watch_report_that_cannot_be_written_exits_2(tmp_path: Path, kind: str) -> None:
    rep, prefix = _blocked(kind, tmp_path)
    go = tmp_path / "go"
    job = Reaped(f"while [ ! -e {go} ]; do sleep 0.05; done")
    try:
        r = compat(
            ["watch", "--pid", str(job.proc.pid), "--no-gpu", "--interval", "0.2", "--report", rep],
            tmp_path,
            prefix=prefix,
            trigger=both(
                watching(go.touch), lambda _pid: False
            ),  # no signal: the job ends once compat watches
        )
    finally:
        job.end()
    assert r.code == 2, r.err
    assert f"compat: watch: could not write the report to {rep}" in r.err, r.err
    assert "report:" not in r.err and "Traceback" not in r.err, r.err
    if kind != "dev-full":
        assert leftovers_in(Path(rep)) == []
        assert not (Path(rep) / "run.json").exists()
