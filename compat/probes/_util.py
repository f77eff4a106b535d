"""What every probe shares: a bounded subprocess runner, a host file system that can be re-rooted, and a
runner that executes probes in daemon threads under one deadline (so a hung driver call never hangs compat)."""

from __future__ import annotations

import collections
import contextlib
import errno
import glob as _glob
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

MAX_OUTPUT = 1 << 20  # bytes kept from a command's stdout/stderr
TAIL = 2000  # characters of output a probe records for the report


# ------------------------------------------------------------------ commands


@dataclass(frozen=True)
class CmdResult:
    """The outcome of one external command: never an exception."""

    argv: tuple[str, ...]
    status: str
    """"ok" (exit 0), "failed" (exit != 0), "not-found", "timeout", "crashed" (killed by a signal), "error"."""
    returncode: int | None
    stdout: str
    stderr: str
    error: str | None = None
    seconds: float = 0.0

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


def signal_name(returncode: int | None) -> str:
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


def which(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    return shutil.which(name, path=env.get("PATH", os.defpath))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        with contextlib.suppress(OSError):
            proc.kill()


class _Capture:
    """Drains one pipe in a daemon thread, keeping its first MAX_OUTPUT and its last MAX_OUTPUT bytes.

    A tool that prints without end (or a framework child in a loop) must not fill compat's memory, and the end of a
    long output (the newest kernel-log lines) matters more than its middle. The pipe is always read to its end, so
    a writer is never blocked by a full pipe.
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


def run_command(
    argv: Sequence[str], timeout: float, *, environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> CmdResult:
    """Run argv (never through a shell) with stdin closed and a hard timeout.

    The command gets its own session so that, on timeout, its whole process group is killed: a wrapper script
    whose child keeps the pipes open cannot keep compat waiting. Output is kept bounded (see _Capture).
    """
    args = tuple(str(a) for a in argv)
    env = dict(os.environ if environ is None else environ)
    exe = args[0]
    if os.sep not in exe:
        found = which(exe, env)
        if found is None:
            return CmdResult(args, "not-found", None, "", "", f"{exe} is not on PATH")
        exe = found
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            (exe, *args[1:]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        return CmdResult(args, "not-found", None, "", "", f"{exe} does not exist")
    except OSError as exc:  # permission denied, exec format error, ...
        return CmdResult(args, "error", None, "", "", os_error_text(exc))
    out, err = _Capture(proc.stdout), _Capture(proc.stderr)
    deadline = start + timeout
    try:
        # Done when the process has ended and both pipes are closed (a grandchild may still hold them).
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        for cap in (out, err):
            cap.thread.join(max(0.0, deadline - time.monotonic()))
        if proc.poll() is None or out.thread.is_alive() or err.thread.is_alive():
            _kill_group(proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
            for cap in (out, err):
                cap.thread.join(max(0.0, min(1.0, start + timeout + 1.0 - time.monotonic())))
            return CmdResult(args, "timeout", None, out.text(), err.text(), None, time.monotonic() - start)
    finally:
        if proc.poll() is None:  # pragma: no cover - only if something above raised unexpectedly
            _kill_group(proc)
    rc = proc.returncode
    status = "ok" if rc == 0 else ("crashed" if rc is not None and rc < 0 else "failed")
    return CmdResult(args, status, rc, out.text(), err.text(), None, time.monotonic() - start)


def os_error_text(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return f"{type(exc).__name__}: {exc}"


# ------------------------------------------------------------------ files


class HostFS:
    """The host's files, optionally under another root (tests point it at a recorded tree).

    Paths given and returned are host paths ("/proc/driver/nvidia/version"); errors are OSError as usual.
    """

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)

    def _p(self, path: str) -> str:
        if self.root == "/":
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def real(self, path: str) -> str:
        """The path on this machine's file system for host path `path`."""
        return self._p(path)

    def _host(self, real: str) -> str:
        if self.root == "/":
            return real
        rel = os.path.relpath(real, self.root)
        return "/" + ("" if rel == "." else rel)

    def read_text(self, path: str, limit: int = MAX_OUTPUT) -> str:
        # O_NONBLOCK: a FIFO or a device file that would block answers at once instead of hanging.
        fd = os.open(self._p(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            chunks: list[bytes] = []
            size = 0
            while size < limit:
                try:
                    data = os.read(fd, min(65536, limit - size))
                except BlockingIOError:
                    break
                if not data:
                    break
                chunks.append(data)
                size += len(data)
        finally:
            os.close(fd)
        return b"".join(chunks).decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        return os.path.exists(self._p(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(self._p(path))

    def listdir(self, path: str) -> list[str]:
        return sorted(os.listdir(self._p(path)))

    def glob(self, pattern: str) -> list[str]:
        return sorted(self._host(p) for p in _glob.glob(self._p(pattern)))

    def realpath(self, path: str) -> str:
        real = os.path.realpath(self._p(path))
        if self.root != "/" and not real.startswith(self.root):
            return path  # a link out of the recorded tree: keep the host path as written
        return self._host(real)

    def readlink(self, path: str) -> str:
        return os.readlink(self._p(path))

    def access(self, path: str, mode: int) -> bool:
        return os.access(self._p(path), mode)

    def statvfs(self, path: str) -> os.statvfs_result:
        return os.statvfs(self._p(path))

    def open_kmsg(self, path: str = "/dev/kmsg") -> int:
        return os.open(self._p(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))


@dataclass(frozen=True)
class Read:
    """A file read that never raises: the text, or why there is none."""

    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None


def read(fs: HostFS, path: str, limit: int = MAX_OUTPUT) -> Read:
    try:
        return Read(fs.read_text(path, limit))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return Read(None, "absent")
        return Read(None, os_error_text(exc))
    except Exception as exc:
        return Read(None, f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------ bounded parallel probes


ProbeFn = Callable[[], Any]


def run_bounded(tasks: Mapping[str, ProbeFn], deadline_s: float) -> dict[str, Any]:
    """Run each task in its own daemon thread; after `deadline_s` a task still running is reported as timed out.

    Daemon threads (not a ThreadPoolExecutor, whose workers are joined at interpreter exit) so that a call stuck
    in the driver cannot keep the process alive. A task that raises is reported as an error, never re-raised.
    """
    results: dict[str, Any] = {}
    lock = threading.Lock()

    def wrap(name: str, fn: ProbeFn) -> Callable[[], None]:
        def body() -> None:
            try:
                value = fn()
            except Exception as exc:
                value = {"status": "error", "error": f"probe failed: {type(exc).__name__}: {exc}"}
            with lock:
                results[name] = value

        return body

    threads = {
        name: threading.Thread(target=wrap(name, fn), name=f"compat-probe-{name}", daemon=True)
        for name, fn in tasks.items()
    }
    start = time.monotonic()
    for t in threads.values():
        t.start()
    for t in threads.values():
        t.join(max(0.0, deadline_s - (time.monotonic() - start)))
    out: dict[str, Any] = {}
    with lock:
        for name in tasks:
            out[name] = results.get(
                name, {"status": "timeout", "error": f"probe did not finish within {deadline_s:.0f} s"}
            )
    return out


def call_with_deadline(fn: ProbeFn, timeout: float, what: str) -> Any:
    """fn() in a daemon thread; {"status": "timeout"} when it does not return within `timeout` seconds."""
    return run_bounded({what: fn}, timeout)[what]
