"""`compat run`: the wrapper. The child keeps our stdin; its stdout and stderr are passed through as they come
(and tee'd into a bounded ring buffer of the last lines); SIGINT, SIGTERM and SIGHUP are forwarded; the exit
status is the child's (128 + signal for a signal)."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType
from typing import Any

from compat.record.document import ExitInfo, RunRecord
from compat.record.recorder import Recorder
from compat.record.tail import Tail

RING_LINES = 200
LINE_CAP = 4096
CHUNK = 65536
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Tee:
    """Copies one pipe to one of our file descriptors as data arrives, keeping the last lines in `ring`."""

    def __init__(self, src: int, dst: int, ring: collections.deque[str], counter: list[int]) -> None:
        self.src, self.dst, self.ring, self.counter = src, dst, ring, counter
        self._carry = b""
        self._dst_ok = True
        self.thread = threading.Thread(target=self._run, name="compat-tee", daemon=True)

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self.src, CHUNK)
            except OSError:
                break
            if not data:
                break
            self._write(data)
            self._keep(data)
        if self._carry:
            self._line(self._carry)
            self._carry = b""

    def _write(self, data: bytes) -> None:
        if not self._dst_ok:
            return  # our stdout went away (a closed pipe): keep draining the child so it never blocks
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.dst, view)
            except InterruptedError:
                continue
            except OSError:
                self._dst_ok = False
                return
            view = view[n:]

    def _keep(self, data: bytes) -> None:
        buf = self._carry + data
        parts = buf.split(b"\n")
        self._carry = parts.pop()[-LINE_CAP:]
        for p in parts:
            self._line(p)

    def _line(self, raw: bytes) -> None:
        self.counter[0] += 1
        # progress bars redraw with CR: keep the last state of the line
        last = raw.rstrip(b"\r").rsplit(b"\r", 1)[-1]
        self.ring.append(last[-LINE_CAP:].decode("utf-8", "replace"))


def _terminal_delivers_sigint() -> bool:
    """Ctrl-C in a terminal reaches the whole foreground process group, the child included: forwarding it again
    would interrupt the child twice."""
    try:
        return os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        return False


def run_command(
    argv: Sequence[str],
    *,
    interval: float = 1.0,
    report_dir: str | None = None,
    ring_lines: int = RING_LINES,
    gpu: bool = True,
    kernel_log: bool = True,
    keep: bool = True,
    summary: bool = True,
    gpu_argv: Sequence[str] | None = None,
) -> int:
    """Run `argv` under the recorder; returns the exit status to exit with."""
    rec = RunRecord("run", 0, command=list(argv))
    env = dict(os.environ)
    # Unbuffered, so the last lines before a crash reach the ring buffer instead of dying in the child's buffer.
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, close_fds=True
        )
    except FileNotFoundError:
        sys.stderr.write(f"compat: error: cannot run {argv[0]!r}: command not found\n")
        return 127
    except PermissionError:
        sys.stderr.write(f"compat: error: cannot run {argv[0]!r}: permission denied\n")
        return 126
    except OSError as exc:
        sys.stderr.write(f"compat: error: cannot run {argv[0]!r}: {exc.strerror or exc}\n")
        return 126
    rec.pid = proc.pid
    rec.started = time.time()
    t0 = time.monotonic()
    ring: collections.deque[str] = Tail(ring_lines)  # bounded by lines and by size (issue 32, item 13)
    counter = [0]
    assert proc.stdout is not None and proc.stderr is not None
    tees = [
        Tee(proc.stdout.fileno(), sys.stdout.fileno() if _has_fd(sys.stdout) else 1, ring, counter),
        Tee(proc.stderr.fileno(), sys.stderr.fileno() if _has_fd(sys.stderr) else 2, ring, counter),
    ]
    old: dict[signal.Signals, Any] = {}

    def forward(signum: int, _frame: FrameType | None) -> None:
        if signum == signal.SIGINT and _terminal_delivers_sigint():
            return
        try:
            os.kill(proc.pid, signum)
        except OSError:
            pass

    for s in FORWARDED:
        try:
            old[s] = signal.signal(s, forward)
        except (ValueError, OSError):  # not the main thread
            pass
    for t in tees:  # after the handlers: a child that prints "ready" can already be signalled through us
        t.thread.start()
    recorder = Recorder(rec, proc.pid, interval=interval, gpu=gpu, kernel_log=kernel_log, gpu_argv=gpu_argv)
    try:
        recorder.start()
    except Exception as exc:
        rec.notes.append(f"the recorder did not start: {exc}")
    try:
        status = _wait(proc.pid)
    finally:
        for signum, h in old.items():
            signal.signal(signum, h)
    proc.returncode = _returncode(status)
    rec.wall_s = time.monotonic() - t0
    rec.exit = ExitInfo.from_wait_status(status)
    for t in tees:
        t.thread.join(timeout=2.0)  # a grandchild may still hold the pipes: do not wait for it
    for pipe in (proc.stdout, proc.stderr):
        try:
            pipe.close()
        except OSError:
            pass
    recorder.stop()
    if rec.exit.core_dumped:
        from compat.record.host import find_core

        core = find_core(os.getcwd(), proc.pid, rec.started)
        rec.exit = ExitInfo(rec.exit.status, rec.exit.code, rec.exit.signal, True, core, rec.exit.source)
    rec.output_tail = list(ring)
    rec.output_lines = counter[0]
    from compat.record.conclude import conclude

    name = f"run-{int(rec.started)}-{rec.pid}.json" if keep else None
    try:
        conclude(rec, report_dir, name)
    except Exception as exc:  # the child's status must come through whatever happens here
        sys.stderr.write(f"compat: run: the record could not be written: {type(exc).__name__}: {exc}\n")
    if summary:
        from compat.record.summary import summary as render

        try:
            sys.stderr.write(render(rec, report_dir))
            sys.stderr.flush()
        except OSError:
            pass
    return rec.exit.shell_code


def _has_fd(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False


def _wait(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return status
        except ChildProcessError:
            return 0
        except InterruptedError:  # pragma: no cover - PEP 475 retries, kept for clarity
            continue


def _returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)
