"""The one capped reader for every file compat reads as input (snapshot, Dockerfile, fleet report, matrix file,
build-context requirements, logs), and for standard input.

It counts bytes while reading (a size check with getsize sees 0 for /dev/zero), opens non-blocking and refuses
anything that is not a regular file (a FIFO would hang, a device never ends), and says what is wrong in one
line: an InputError, which the CLI prints as one stderr line with exit 2 (issue 19, items 3 and 6).
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from typing import BinaryIO, Optional

from compat._text import clip

DEFAULT_CAP = 64 << 20
"""Bytes: larger than any real snapshot, Dockerfile, fleet report or matrix file; logs are capped by their reader."""


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"


def _why(exc: OSError) -> str:
    code = exc.errno
    if code == errno.ENOENT:
        return "does not exist"
    if code == errno.ENOTDIR:
        return "a part of its path is not a directory"
    if code == errno.EISDIR:
        return "is a directory, not a file"
    if code == errno.ELOOP:
        return "is a symbolic link loop"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return (exc.strerror or str(exc)).lower()


def kind(mode: int) -> str:
    """What a file that is not a regular file is ("a FIFO (named pipe)"), for a message."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


PSEUDO_FS = frozenset(
    {"proc", "sysfs", "debugfs", "tracefs", "securityfs", "configfs", "bpf", "cgroup", "cgroup2", "pstore"}
    | {"efivarfs", "fusectl", "binfmt_misc", "devpts", "mqueue", "rpc_pipefs", "nsfs"}
)
"""Kernel file systems whose files report no real size: /proc/kmsg blocks and consumes the kernel log,
/proc/self/pagemap never ends (issue 32, item 5). No input compat reads lives there."""


@functools.lru_cache(maxsize=1)
def _mounts() -> dict[int, str]:
    """st_dev -> file system type of every mount this process sees (from /proc/self/mountinfo)."""
    out: dict[int, str] = {}
    try:
        with open("/proc/self/mountinfo", "rb") as f:  # a regular procfs file of our own, bounded below
            data = f.read(4 << 20)
    except OSError:
        return out
    for line in data.decode("utf-8", "replace").splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 3 or ":" not in fields[2] or not right.split():
            continue
        major, _, minor = fields[2].partition(":")
        if major.isdigit() and minor.isdigit():
            out[os.makedev(int(major), int(minor))] = right.split()[0]
    return out


def pseudo_fs(st: os.stat_result) -> Optional[str]:
    """The kernel file system ("proc", "sysfs") a stat result lives on, or None for an ordinary one."""
    fstype = _mounts().get(st.st_dev)
    return fstype if fstype in PSEUDO_FS else None


def refusal(st: os.stat_result) -> Optional[str]:
    """Why a file with this stat is not read as input ("is a FIFO (named pipe), not a regular file"), or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"is {kind(st.st_mode)}, not a regular file"
    fstype = pseudo_fs(st)
    if fstype is not None:
        return f"is a kernel file ({fstype}), not a regular file: its reads can block or never end"
    return None


def read_bytes(path: str, what: str, cap: int = DEFAULT_CAP) -> bytes:
    """The bytes of regular file `path`; InputError naming `what` ("snapshot", "--matrix file") otherwise."""
    from compat.errors import InputError

    shown = clip(path)
    try:
        fd = os.open(path, _NONBLOCK)
    except OSError as exc:
        raise InputError(f"{what} {shown!r}: {_why(exc)}") from None
    try:
        why = refusal(os.fstat(fd))
        if why is not None:
            raise InputError(f"{what} {shown!r} {why}")
        return _read_fd(fd, f"{what} {shown!r}", cap)
    except OSError as exc:
        raise InputError(f"{what} {shown!r}: {_why(exc)}") from None
    finally:
        os.close(fd)


_NONBLOCK = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_stream(path: str, what: str) -> BinaryIO:
    """`path` opened for streaming (a log): a regular file, or a FIFO the user named on purpose (read like a
    pipe on stdin, waiting for its writer); InputError for a device, socket, directory or kernel file."""
    from compat.errors import InputError

    shown = clip(path)
    try:
        named_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
        fd = os.open(path, _NONBLOCK & ~getattr(os, "O_NONBLOCK", 0) if named_fifo else _NONBLOCK)
    except OSError as exc:
        raise InputError(f"cannot read {what} {shown!r}: {_why(exc)}") from None
    try:
        st = os.fstat(fd)
        why = None if named_fifo and stat.S_ISFIFO(st.st_mode) else refusal(st)
        if why is not None:
            raise InputError(f"cannot read {what} {shown!r}: it {why}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_fd(fd: int, name: str, cap: int) -> bytes:
    from compat.errors import InputError

    chunks: list[bytes] = []
    size = 0
    while True:
        data = os.read(fd, min(1 << 20, cap + 1 - size) or 1)
        if not data:
            break
        size += len(data)
        if size > cap:
            raise InputError(f"{name} is larger than {_mib(cap)}: refused")
        chunks.append(data)
    return b"".join(chunks)


def read_text(path: str, what: str, cap: int = DEFAULT_CAP) -> str:
    """read_bytes decoded as UTF-8, with undecodable bytes replaced."""
    return read_bytes(path, what, cap).decode("utf-8", errors="replace")


def stdin_stream() -> BinaryIO:
    """Standard input as bytes; InputError (exit 2) when it is closed (`compat explain - <&-`)."""
    from compat import _runtime
    from compat.errors import InputError

    stream: Optional[BinaryIO] = getattr(sys.stdin, "buffer", None) if sys.stdin is not None else None
    if stream is None or _runtime.STDIN_CLOSED:
        raise InputError("standard input is closed: give a file, or pipe the log in")
    if _endless_device(stream):
        raise InputError(
            "standard input is a device or kernel file that never ends (such as /dev/zero or /proc/kmsg): give a file"
        )
    return stream


def _endless_device(stream: BinaryIO) -> bool:
    """A character or block device on stdin that is neither a terminal nor /dev/null (`< /dev/zero`)."""
    try:
        fd = stream.fileno()
        st = os.fstat(fd)
    except (OSError, ValueError):  # not a real descriptor (tests pass a BytesIO)
        return False
    if stat.S_ISREG(st.st_mode) and pseudo_fs(st) is not None:  # `compat explain < /proc/kmsg`
        return True
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) or os.isatty(fd):
        return False
    try:
        return st.st_rdev != os.stat(os.devnull).st_rdev
    except OSError:
        return True


def read_stdin(what: str, cap: int = DEFAULT_CAP) -> bytes:
    """All of standard input, counted while read; InputError when closed or over the cap."""
    from compat.errors import InputError

    stream = stdin_stream()
    try:
        data = stream.read(cap + 1)
        if len(data) > cap:
            raise InputError(f"{what} is larger than {_mib(cap)}: refused")
        return data
    except OSError as exc:
        raise InputError(f"{what}: {_why(exc)}") from None
