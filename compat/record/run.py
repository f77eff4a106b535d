"""`compat run`: the wrapper. The child keeps our stdin; its stdout and stderr go through a relay process that
copies them to ours and to a bounded ring buffer of the last lines here, so the child never depends on compat
staying alive; SIGINT, SIGTERM and SIGHUP are forwarded; the exit status is the child's (128 + signal for a
signal), also when a signal reaches compat after the child has ended."""

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

from compat.record.document import ExitInfo, RunRecord, signal_name
from compat.record.recorder import Recorder
from compat.record.tail import Tail

RING_LINES = 200
LINE_CAP = 4096
CHUNK = 65536
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Tee:
    """Reads one pipe as data arrives, keeping the last lines in `ring`, and copies it to `dst` unless None."""

    def __init__(self, src: int, dst: int | None, ring: collections.deque[str], counter: list[int]) -> None:
        self.src, self.dst, self.ring, self.counter = src, dst, ring, counter
        self._carry = b""
        self._dst_ok = dst is not None
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
        assert self.dst is not None
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

    def close(self) -> None:
        """Close the pipe (after the thread has ended, or been given up on: a grandchild still holds it)."""
        try:
            os.close(self.src)
        except OSError:
            pass

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


class _Signals:
    """compat's TERM, HUP and INT while it runs a child: held until the child exists, then forwarded to it; once
    the child has ended, noted and otherwise ignored (its status is the answer and the record is being written)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.pending: list[int] = []
        self.ended = False
        self.late: list[int] = []
        self.old: dict[signal.Signals, Any] = {}

    def install(self) -> None:
        for s in FORWARDED:
            try:
                self.old[s] = signal.signal(s, self._on)
            except (ValueError, OSError):  # not the main thread
                pass

    def _on(self, signum: int, _frame: FrameType | None) -> None:
        if self.ended:
            self.late.append(signum)
        elif self.pid is None:
            self.pending.append(signum)
        elif not (signum == signal.SIGINT and _terminal_delivers_sigint()):
            _kill(self.pid, signum)

    def started(self, pid: int) -> None:
        self.pid = pid
        for signum in self.pending:
            _kill(pid, signum)

    def restore(self) -> None:
        for signum, h in self.old.items():
            signal.signal(signum, h)


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass


RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relay.py")
RELAY_READY_S = 10.0
"""A relay that has not started by then (a stalled host) is given up: compat copies the output itself."""
READY = b"R"


def _start_relay(dests: Sequence[int]) -> tuple[list[int], list[int], subprocess.Popen[bytes] | None]:
    """Pipes for the child's stdout and stderr, read by the relay process (compat.record.relay), which copies them
    to `dests` and to compat. Returns (the child's ends, compat's ends to read, the relay). Without a relay (it
    could not start), compat reads the child's pipes itself and copies them (the old way)."""
    child_ends: list[int] = []
    mine: list[int] = []
    relay_fds: list[int] = []
    triples: list[str] = []
    for dst in dests:
        r, w = os.pipe()
        fr, fw = os.pipe()
        child_ends.append(w)
        mine.append(fr)
        relay_fds += [r, fw]
        triples.append(f"{r}:{dst}:{fw}")
    relay = None
    if sys.executable and os.path.isfile(RELAY):  # not in a zip app: the relay must be a file to run
        try:
            relay = subprocess.Popen(
                [sys.executable, "-I", "-S", RELAY, *triples],
                stdin=subprocess.DEVNULL,
                stdout=None,
                stderr=None,
                pass_fds=(*relay_fds, *dests),
                close_fds=True,
            )
        except OSError:
            relay = None
    # The relay says it runs (one byte on the first feed) before the child may depend on it: a relay that died
    # at start would give the child a broken pipe on its first write.
    if relay is not None and not _ready(mine[0], RELAY_READY_S):
        relay.kill()
        relay.wait()
        relay = None
    if relay is None:
        for fd in relay_fds[1::2] + mine:
            os.close(fd)
        return child_ends, relay_fds[0::2], None
    for fd in relay_fds:
        os.close(fd)
    return child_ends, mine, relay


def _ready(fd: int, timeout: float) -> bool:
    import select

    try:
        if not select.select([fd], [], [], timeout)[0]:
            return False
        return os.read(fd, 1) == READY
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
    hold_signals: bool = False,
    redact: bool = False,
) -> int:
    """Run `argv` under the recorder; returns the exit status to exit with. `hold_signals` (the CLI, which exits
    next): TERM, HUP and INT stay ignored after the return, so none can replace the answer on the way out."""
    env = dict(os.environ)
    # Unbuffered, so the last lines before a crash reach the ring buffer instead of dying in the child's buffer.
    env.setdefault("PYTHONUNBUFFERED", "1")
    sigs = _Signals()
    sigs.install()  # before the child exists: a signal now is held for it, not a death that leaves it orphaned
    try:
        return _run(
            argv,
            env,
            sigs,
            interval,
            report_dir,
            ring_lines,
            gpu,
            kernel_log,
            keep,
            summary,
            gpu_argv,
            redact,
        )
    finally:
        if not hold_signals:
            sigs.restore()


def _run(
    argv: Sequence[str],
    env: dict[str, str],
    sigs: _Signals,
    interval: float,
    report_dir: str | None,
    ring_lines: int,
    gpu: bool,
    kernel_log: bool,
    keep: bool,
    summary: bool,
    gpu_argv: Sequence[str] | None,
    redact: bool = False,
) -> int:
    rec = RunRecord("run", 0, command=list(argv))
    dests = [
        sys.stdout.fileno() if _has_fd(sys.stdout) else 1,
        sys.stderr.fileno() if _has_fd(sys.stderr) else 2,
    ]
    try:
        child_ends, mine, relay = _start_relay(dests)
    except OSError as exc:
        sys.stderr.write(
            f"compat: error: cannot run {argv[0]!r}: no pipe for its output: {exc.strerror or exc}\n"
        )
        return 126
    try:
        proc = subprocess.Popen(
            list(argv), stdout=child_ends[0], stderr=child_ends[1], env=env, close_fds=True
        )
    except OSError as exc:
        for fd in child_ends + mine:
            os.close(fd)
        if relay is not None:
            relay.wait()
        if sigs.pending:
            return 128 + sigs.pending[0]
        why = {FileNotFoundError: "command not found", PermissionError: "permission denied"}.get(type(exc))
        sys.stderr.write(f"compat: error: cannot run {argv[0]!r}: {why or exc.strerror or exc}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    for fd in child_ends:
        os.close(fd)
    rec.pid = proc.pid
    rec.started = time.time()
    t0 = time.monotonic()
    sigs.started(proc.pid)
    ring: collections.deque[str] = Tail(ring_lines)  # bounded by lines and by size (issue 32, item 13)
    counter = [0]
    # With a relay compat only reads (the relay writes the terminal); without one compat copies as well.
    tees = [
        Tee(fd, dst if relay is None else None, ring, counter) for fd, dst in zip(mine, dests, strict=True)
    ]
    for t in tees:
        t.thread.start()
    recorder = Recorder(rec, proc.pid, interval=interval, gpu=gpu, kernel_log=kernel_log, gpu_argv=gpu_argv)
    try:
        recorder.start()
    except Exception as exc:
        rec.notes.append(f"the recorder did not start: {exc}")
    try:
        status = _wait(proc.pid)
    finally:
        sigs.ended = True
    proc.returncode = _returncode(status)
    rec.wall_s = time.monotonic() - t0
    rec.exit = ExitInfo.from_wait_status(status)
    for t in tees:
        t.thread.join(timeout=2.0)  # a grandchild may still hold the pipes: do not wait for it
    if relay is not None:
        _end_relay(relay)
    for t in tees:
        t.close()
    recorder.stop()
    if rec.exit.core_dumped:
        from compat.record.host import find_core

        core = find_core(os.getcwd(), proc.pid, rec.started)
        rec.exit = ExitInfo(rec.exit.status, rec.exit.code, rec.exit.signal, True, core, rec.exit.source)
    rec.output_tail = list(ring)
    rec.output_lines = counter[0]
    for signum in dict.fromkeys(sigs.late):
        rec.notes.append(
            f"compat received {signal_name(signum)} after the run had ended: the record was kept"
        )
    from compat.record.conclude import conclude

    name = f"run-{int(rec.started)}-{rec.pid}.json" if keep else None
    failed = None
    try:
        _, failed = conclude(rec, report_dir, name, redact=redact)
    except Exception as exc:  # the child's status must come through whatever happens here
        failed = f"the record could not be written: {type(exc).__name__}: {exc}"[:300]
    if summary:
        from compat.record.summary import summary as render

        try:
            sys.stderr.write(render(rec, None if failed else report_dir))
            sys.stderr.flush()
        except OSError:
            pass
    if failed:
        try:
            sys.stderr.write(f"compat: run: {failed}\n")
            sys.stderr.flush()
        except OSError:
            pass
    return rec.exit.shell_code


def _end_relay(relay: subprocess.Popen[bytes]) -> None:
    """The child has ended and its output has been read: the relay ends at its pipes' end; if a grandchild still
    holds them after a moment, the relay goes (as compat's own copy did: that grandchild's next write fails)."""
    try:
        relay.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        relay.kill()
        relay.wait()


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
