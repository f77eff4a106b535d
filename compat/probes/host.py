"""The host as the probes see it: its file system, which tests re-root at a recorded tree, and a runner that
executes probes in daemon threads under one deadline (so a hung driver call never hangs compat)."""

from __future__ import annotations

import errno
import fnmatch
import glob as _glob
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from compat._proc import MAX_OUTPUT, os_error_text
from compat._valueclass import valueclass

# ------------------------------------------------------------------ files


class HostFS:
    """The host's files, optionally under another root (tests point it at a recorded tree).

    Paths given and returned are host paths ("/proc/driver/nvidia/version"); errors are OSError as usual.
    """

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)
        self._names: dict[str, list[str] | None] = {}
        """Directory listings of this run (the probes glob /usr/lib/... for several patterns each)."""
        self._lock = threading.Lock()

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
        """glob.glob's answer (sorted); a pattern with magic only in its last part reads its directory once per run."""
        d, base = os.path.split(pattern)
        if not d or _glob.has_magic(d) or not _glob.has_magic(base):
            return sorted(self._host(p) for p in _glob.glob(self._p(pattern)))
        with self._lock:
            if d not in self._names:
                try:
                    self._names[d] = os.listdir(self._p(d))
                except OSError:
                    self._names[d] = None
            names = self._names[d]
        if names is None:
            return []
        if not base.startswith("."):  # as glob: hidden names only for a pattern that starts with a dot
            names = [n for n in names if not n.startswith(".")]
        return sorted(os.path.join(d, n) for n in fnmatch.filter(names, base))

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


@valueclass
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
