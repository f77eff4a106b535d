"""Write a file whole or not at all: a temporary file beside it, fsync, rename; the temporary goes on any failure."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from typing import IO


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def write_atomic(path: str, write: Callable[[IO[str]], object], mode: int | None = None) -> None:
    """Call `write(fh)` on a temporary file in `path`'s folder, then rename it over `path`. Raises OSError when any
    step fails, and leaves neither a temporary file nor a partial `path` behind; something other than a regular
    file or a link at `path` is refused, not replaced. `mode`: default, what open() would give (0666 less the
    umask)."""
    folder = os.path.dirname(path) or "."
    # A link is replaced, never followed: a link planted at a predictable name cannot aim the write elsewhere.
    if os.path.lexists(path) and not os.path.islink(path) and not os.path.isfile(path):
        raise OSError(f"{path} is not a regular file")
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, (0o666 & ~_umask()) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself is durable only once the folder is synced
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write_text_atomic(path: str, text: str, mode: int | None = None) -> None:
    write_atomic(path, lambda fh: fh.write(text), mode)
