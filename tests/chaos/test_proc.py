"""The process runner under faulty tools (issue 19, items 2 and 4): answers, caps, kills, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from compat import _proc
from tests.chaos.harness import kill_tagged, tagged


def _tool(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)


def _env(tag: str) -> dict[str, str]:
    return {**os.environ, "COMPAT_CHAOS_TAG": tag}


def _gone(tag: str, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while tagged(tag):
        if time.monotonic() > deadline:
            kill_tagged(tag)
            return False
        time.sleep(0.05)
    return True


def test_answer_is_taken_when_the_child_exits_despite_a_detached_grandchild(tmp_path: Path) -> None:
    # On main: reported as "timeout" after the whole timeout, the answer thrown away.
    tool = _tool(tmp_path, "wrapper", "sleep 300 &\necho 535.104.05\nexit 0\n")
    tag = uuid.uuid4().hex
    t0 = time.monotonic()
    res = _proc.run([tool], 10, environ=_env(tag))
    assert res.status == "ok" and res.stdout.strip() == "535.104.05"
    assert time.monotonic() - t0 < 3
    assert _gone(tag), "the grandchild that held the pipe was not killed"


def test_a_grandchild_in_its_own_session_does_not_delay_the_answer(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "daemonize", "setsid sleep 300 &\necho ok\n")
    tag = uuid.uuid4().hex
    t0 = time.monotonic()
    res = _proc.run([tool], 10, environ=_env(tag))
    try:
        assert res.status == "ok" and res.stdout.strip() == "ok"
        assert time.monotonic() - t0 < 3
    finally:
        kill_tagged(tag)  # it left our process group on purpose: out of any runner's reach


def test_flood_is_capped_head_and_tail(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "flood", "echo FIRST\nhead -c 50000000 /dev/zero | tr '\\0' x\necho\necho LAST\n")
    res = _proc.run([tool], 30, limit=1 << 16)
    assert res.status == "ok" and res.truncated
    assert res.stdout.startswith("FIRST") and res.stdout.rstrip().endswith("LAST")
    assert len(res.stdout) < 3 * (1 << 16)


def test_a_tool_ignoring_term_is_killed_on_timeout(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "stubborn", "trap '' TERM\nsleep 300 &\nwhile :; do sleep 1; done\n")
    tag = uuid.uuid4().hex
    t0 = time.monotonic()
    res = _proc.run([tool], 0.5, environ=_env(tag))
    assert res.status == "timeout"
    assert time.monotonic() - t0 < 4
    assert _gone(tag)


def test_crash_and_garbage_are_results(tmp_path: Path) -> None:
    crash = _tool(tmp_path, "crash", "kill -SEGV $$\n")
    assert _proc.run([crash], 5).status == "crashed"
    garbage = _tool(tmp_path, "garbage", "printf '\\377\\376\\033]0;x\\007'\n")
    res = _proc.run([garbage], 5)
    assert res.status == "ok" and "\ufffd" in res.stdout


def test_children_die_with_compat_on_sigkill() -> None:
    # PR_SET_PDEATHSIG: compat SIGKILLed (no handler can run) still takes its direct children down.
    tag = uuid.uuid4().hex
    code = (
        "import sys, time; from compat import _proc\n"
        "p = _proc.spawn(['sleep', '300'], stdout=None, stderr=None)\n"
        "print(p.pid, flush=True); time.sleep(300)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, env={**_env(tag), "PYTHONPATH": os.getcwd()}
    ) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert child in tagged(tag)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    assert _gone(tag), "a child of a SIGKILLed compat is still running"


def test_kill_all_takes_every_live_group_and_temp_dir(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    p = _proc.spawn(["sh", "-c", "sleep 300 & sleep 300"], stdout=None, stderr=None, env=_env(tag))
    d = _proc.track_dir(str(tmp_path / "work"))
    os.mkdir(d)
    time.sleep(0.2)
    assert len(tagged(tag)) == 3  # sh and its two sleeps
    _proc.kill_all()
    p.wait()
    _proc.forget(p)
    _proc.untrack_dir(d)
    assert _gone(tag) and not os.path.exists(d)
