"""Progress: a spinner line on a terminal's stderr after a delay, erased at the end; nothing elsewhere."""

from __future__ import annotations

import io
import os
import pty
import time

import pytest

from compat.progress import Progress, progress_enabled


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return out
        if not chunk:
            return out
        out += chunk


def test_on_a_terminal_it_draws_then_erases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPAT_NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    master, slave = pty.openpty()
    with os.fdopen(slave, "w", closefd=True) as tty:
        with Progress("probing \x1b]0;title\x07 this machine", stream=tty, delay=0.05, interval=0.02) as p:
            time.sleep(0.3)
            p.update("node 2 of 3")
            time.sleep(0.1)
        seen = _drain(master).decode()
    os.close(master)
    assert "probing \\x1b]0;title\\x07 this machine (0 s)" in seen  # the message is made terminal-safe
    assert "node 2 of 3 (0 s)" in seen
    assert seen.endswith("\r")
    assert seen.rstrip("\r").endswith(" " * len("⠋ node 2 of 3 (0 s)"))


def test_a_fast_step_shows_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    master, slave = pty.openpty()
    with os.fdopen(slave, "w", closefd=True) as tty:
        with Progress("quick", stream=tty, delay=1.0):
            pass
        seen = _drain(master)
    os.close(master)
    assert seen == b""


def test_never_on_a_pipe_or_file_or_dumb_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    with Progress("x", stream=buf, delay=0.0, interval=0.01):
        time.sleep(0.05)
    assert buf.getvalue() == ""
    master, slave = pty.openpty()
    with os.fdopen(slave, "w", closefd=True) as tty:
        monkeypatch.setenv("TERM", "dumb")
        assert not progress_enabled(tty)
        monkeypatch.setenv("TERM", "xterm")
        monkeypatch.setenv("COMPAT_NO_PROGRESS", "1")
        assert not progress_enabled(tty)
        monkeypatch.delenv("COMPAT_NO_PROGRESS")
        assert progress_enabled(tty)
    os.close(master)


def test_disabled_by_the_caller() -> None:
    assert Progress("x", enabled=False).active is False
