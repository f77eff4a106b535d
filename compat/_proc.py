"""The one process runner: argv only, a timeout, stdin closed, a new session, whole-group kill, capped output.

Every process compat starts goes through `spawn` (which also records it so that a signal to compat takes it
down: see `compat._signals.install_signal_handlers`) and, for tools whose answer is their output, through `run`.

- `run` takes the answer when the direct child exits, even if a detached grandchild still holds the pipes
  (a wrapper that starts a daemon and exits is not "hung"), and then kills the child's process group.
- On Linux every child gets PR_SET_PDEATHSIG=SIGKILL (prctl(2)): if compat itself is SIGKILLed its direct
  children die with it. Children run in their own session, so a CI cancel or `scancel` that signals compat's
  group never reaches them; `compat._signals` (installed at start-up) kills every live child's group on TERM/HUP/INT, removes
  the temporary directories registered with `track_dir`, and exits 128+signal.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import logging  # noqa: F401 - see below
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, Optional, Union

from compat._valueclass import valueclass

MAX_OUTPUT = 1 << 20
"""Bytes kept from the head and from the tail of each of a command's streams."""
TAIL = 2000
"""Characters of output a probe records for the report."""
PIPE_GRACE_S = 0.5
"""How long, after the direct child exited, the pipes may stay open before the group is killed."""

_File = Union[int, IO[Any], None]

# `logging` registers fork handlers (before: take its lock; after, in the parent: release it). Imported by another
# thread while `spawn` forks (the preexec function makes subprocess run those handlers), the parent releases a lock
# it never took and prints "Exception ignored in: <function _releaseLock ...>" (CPython < 3.13). Importing it here
# registers the handlers before any child can be spawned: `spawn` cannot run before this module finished importing.

# ------------------------------------------------------------------ live children and temp dirs

_LOCK = threading.Lock()
_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_DIRS: set[str] = set()


def _pdeathsig() -> Optional[Callable[[], None]]:
    """A preexec function that asks Linux to SIGKILL the child when compat dies (None elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc symbol
        return None
    pr_set_pdeathsig = 1  # <linux/prctl.h>

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)

    return preexec


_PREEXEC: list[Optional[Callable[[], None]]] = []
"""The preexec function, made on the first spawn (ctypes and libc are loaded then, not at import)."""


def _preexec() -> Optional[Callable[[], None]]:
    with _LOCK:
        if not _PREEXEC:
            _PREEXEC.append(_pdeathsig())
        return _PREEXEC[0]


def spawn(
    argv: Sequence[str],
    *,
    stdout: _File = subprocess.PIPE,
    stderr: _File = subprocess.PIPE,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    stdin: _File = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start argv (never through a shell) with stdin closed (unless a helper child reads a pipe from compat), in
    a new session, dying with compat.

    The child is recorded until `reap` (or `run`) sees it finish, so that `kill_all` can take its group down.
    Raises OSError like subprocess.Popen when it cannot start.
    """
    proc = subprocess.Popen(
        [str(a) for a in argv],
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_preexec(),  # noqa: PLW1509 - only a prctl call: async-signal-safe enough after fork
    )
    with _LOCK:
        _LIVE[proc.pid] = proc
    return proc


def forget(proc: subprocess.Popen[bytes]) -> None:
    """The child has been waited for: `kill_all` no longer needs to know it."""
    with _LOCK:
        _LIVE.pop(proc.pid, None)


def killpg(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal a whole process group; False when it is already gone or not ours."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError, OSError):
        return False


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group (it leads its own session), or the child alone."""
    if not killpg(proc.pid):
        with contextlib.suppress(OSError):
            proc.kill()


def track_dir(path: str) -> str:
    """Remember a temporary directory so that a signal to compat removes it too; returns `path`."""
    with _LOCK:
        _DIRS.add(path)
    return path


def untrack_dir(path: str) -> None:
    with _LOCK:
        _DIRS.discard(path)


def remove_dir(path: str) -> None:
    """Remove a tracked temporary directory (quietly) and stop tracking it."""
    shutil.rmtree(path, ignore_errors=True)
    untrack_dir(path)


def kill_all() -> None:
    """Kill the process group of every live child and remove every tracked temporary directory."""
    with _LOCK:
        procs = list(_LIVE.values())
        dirs = list(_DIRS)
    for proc in procs:
        killpg(proc.pid)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(kill_all)  # a probe still running in a daemon thread when compat ends goes with it


# ------------------------------------------------------------------ one command, its answer


@valueclass
class CmdResult:
    """The outcome of one external command: never an exception."""

    argv: tuple[str, ...]
    status: str
    """"ok" (exit 0), "failed" (exit != 0), "not-found", "timeout", "crashed" (killed by a signal), "error"."""
    returncode: Optional[int]
    stdout: str
    stderr: str
    error: Optional[str] = None
    seconds: float = 0.0
    truncated: bool = False
    """The output passed MAX_OUTPUT bytes on a stream: its middle was left out."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def output(self) -> str:
        return (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()

    def describe(self) -> str:
        """One line: what happened, for a finding or a skip reason."""
        name = os.path.basename(self.argv[0]) if self.argv else "command"
        if self.status == "not-found":
            return f"{name} not found"
        if self.status == "timeout":
            return f"{name} did not answer within {self.seconds:.1f} s (killed)"
        if self.status == "crashed":
            return f"{name} crashed ({signal_name(self.returncode)})"
        if self.status == "error":
            return f"{name} could not be run: {self.error}"
        if self.status == "failed":
            first = first_line(self.output)
            return f"{name} exited with status {self.returncode}" + (f": {first}" if first else "")
        return f"{name} succeeded"

    def to_json(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "status": self.status,
            "returncode": self.returncode,
            "error": self.error,
            "output": tail(self.output),
        }


def signal_name(returncode: Optional[int]) -> str:
    if returncode is None or returncode >= 0:
        return f"status {returncode}"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def tail(text: str, n: int = TAIL) -> str:
    text = text.strip()
    return text if len(text) <= n else "…" + text[-n:]


def which(name: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    env = os.environ if environ is None else environ
    return shutil.which(name, path=env.get("PATH", os.defpath))


def os_error_text(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return f"{type(exc).__name__}: {exc}"


class Capture:
    """Drains one pipe in a daemon thread, keeping its first `limit` and its last `limit` bytes.

    A tool that prints without end must not fill compat's memory, and the end of a long output (the newest
    kernel-log lines) matters more than its middle. The pipe is read to its end, so a writer never blocks.
    """

    def __init__(self, pipe: Any, limit: int = MAX_OUTPUT) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.dropped = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, args=(pipe,), name="compat-capture", daemon=True)
        self.thread.start()

    def _drain(self, pipe: Any) -> None:
        try:
            fd = pipe.fileno()
            while True:
                data = os.read(fd, 65536)
                if not data:
                    break
                self._keep(data)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                pipe.close()

    def _keep(self, data: bytes) -> None:
        with self.lock:
            room = self.limit - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if not data:
                return
            self.tail.append(data)
            self.tail_size += len(data)
            while self.tail_size - len(self.tail[0]) >= self.limit:
                gone = self.tail.popleft()
                self.tail_size -= len(gone)
                self.dropped += len(gone)

    def text(self) -> str:
        with self.lock:
            gap = f"\n[... {self.dropped} bytes left out ...]\n".encode() if self.dropped else b""
            data = bytes(self.head) + gap + b"".join(self.tail)
        return data.decode("utf-8", errors="replace")


def wait_exit(proc: subprocess.Popen[Any], deadline: float) -> None:
    """proc.wait() until the monotonic `deadline` (TimeoutExpired after it), woken the moment the child exits.

    Popen.wait(timeout) polls with sleeps that double up to 50 ms: a 30 ms child is seen gone after ~64 ms. On
    Linux a pidfd becomes readable when the process exits, so select() wakes at once; elsewhere, the polling wait.
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None and proc.returncode is None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:  # an old kernel (ENOSYS), or the process is already reaped
            fd = None
        if fd is not None:
            import select

            try:
                select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            except (OSError, ValueError):
                pass
            finally:
                os.close(fd)
    proc.wait(timeout=max(0.0, deadline - time.monotonic()))


def run(
    argv: Sequence[str],
    timeout: float,
    *,
    environ: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    limit: int = MAX_OUTPUT,
) -> CmdResult:
    """Run argv with stdin closed and a hard timeout; never raises, never leaves a process of its group behind.

    The answer is taken when the direct child exits: its group is then killed, so a detached grandchild that
    still holds the pipes neither delays the answer nor outlives the call. On timeout the group is killed.
    """
    args = tuple(str(a) for a in argv)
    env = dict(os.environ if environ is None else environ)
    exe = args[0] if args else ""
    if os.sep not in exe:
        found = which(exe, env)
        if found is None:
            return CmdResult(args, "not-found", None, "", "", f"{exe} is not on PATH")
        exe = found
    start = time.monotonic()
    try:
        proc = spawn((exe, *args[1:]), env=env, cwd=cwd)
    except FileNotFoundError:
        return CmdResult(args, "not-found", None, "", "", f"{exe} does not exist")
    except OSError as exc:  # permission denied, exec format error, ...
        return CmdResult(args, "error", None, "", "", os_error_text(exc))
    out, err = Capture(proc.stdout, limit), Capture(proc.stderr, limit)
    deadline = start + timeout
    timed_out = False
    try:
        try:
            wait_exit(proc, deadline)
        except subprocess.TimeoutExpired:
            timed_out = True
        if not timed_out:
            # The child is done; what is still in the pipes arrives at once unless a grandchild holds them.
            for cap in (out, err):
                cap.thread.join(max(0.0, min(PIPE_GRACE_S, deadline + PIPE_GRACE_S - time.monotonic())))
    finally:
        kill_group(proc)  # grandchildren, a hung child, or an exception in here: the whole group goes
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2.0)
        forget(proc)
    for cap in (out, err):
        cap.thread.join(0.5)
    truncated = bool(out.dropped or err.dropped)
    if timed_out:
        return CmdResult(
            args, "timeout", None, out.text(), err.text(), None, time.monotonic() - start, truncated
        )
    rc = proc.returncode
    status = "ok" if rc == 0 else ("crashed" if rc is not None and rc < 0 else "failed")
    return CmdResult(args, status, rc, out.text(), err.text(), None, time.monotonic() - start, truncated)
