"""The one cache: where it lives (one directory) and how an entry is stored (one format), for the guard's verdicts
and the doctor's framework imports.

Light on purpose: the guard's warm path imports this module, so no pathlib, re, typing, json or dataclasses.

Directory: ``COMPAT_CACHE_DIR`` if set (made absolute); else the platform's user cache directory: on Linux the
XDG rule (``$XDG_CACHE_HOME/compat`` or ``~/.cache/compat``, written out here as platformdirs does it, because
importing platformdirs pulls in pathlib and re, milliseconds the guard's warm path must not pay); elsewhere
``platformdirs.user_cache_dir("compat")`` (Windows known folders, macOS Library/Caches). Never a relative path:
with no usable home directory (``docker run -u 12345``: no HOME, no passwd entry, so ``~`` stays ``~``) the cache
goes to a per-user folder in the temporary directory, never to a folder literally named ``~`` in the user's
repository (issue 19, item 8).

Format: ``MAGIC``, the CRC-32 of the payload (4 bytes, big-endian), then a ``marshal`` payload of plain dicts,
lists and strings. marshal is not safe on damaged data (7 random bytes can make it allocate 16 GB), so only a
payload whose checksum matches is unmarshalled. Reads are capped and refuse anything but a regular file (a FIFO
named like the cache file must not hang compat).

Trust (issue 32): every file compat keeps for itself (this cache, the matrix cache, run records, the notebook's
side files) is read through `read_own` and written through `write_private`. A directory owned by another user is
refused (one warning, then no cache: whoever created `$TMPDIR/compat-cache-<uid>` first could plant files there
or read what compat writes); directories are made 0700 and files 0600, and a file not owned by this user, or not a
regular file, is never read.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Optional

CACHE_ENV = "COMPAT_CACHE_DIR"
MAGIC = b"compat-cache\n"
MAX_BYTES = 4 << 20
"""A cache file larger than this is not ours: ignored."""


def _fallback(environ: Mapping[str, str]) -> str:
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"compat-cache-{uid}")


def cache_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    """The absolute path of compat's cache directory (it may not exist yet)."""
    env = os.environ if environ is None else environ
    explicit = env.get(CACHE_ENV)
    if explicit:
        return os.path.abspath(explicit)
    home = os.path.expanduser("~")
    if sys.platform.startswith("linux") or not sys.platform.startswith(("win", "darwin")):
        xdg = (env.get("XDG_CACHE_HOME") or "").strip()
        if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is invalid and ignored
            return os.path.join(xdg, "compat")
        if not os.path.isabs(home) or home == "/":
            return _fallback(env)
        return os.path.join(home, ".cache", "compat")
    if not os.path.isabs(home):
        return _fallback(env)
    import platformdirs

    path = platformdirs.user_cache_dir("compat", appauthor=False)
    return path if os.path.isabs(path) else _fallback(env)


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


_WARNED: set[str] = set()


def _warn(directory: str, why: str) -> None:
    if directory in _WARNED:
        return
    _WARNED.add(directory)
    try:
        sys.stderr.write(
            f"compat: warning: not using the cache directory {directory}: {why}; running without it\n"
        )
    except (OSError, ValueError, AttributeError):  # no stderr (pythonw, a closed stream): the warning is lost
        pass


def private_dir(directory: str, create: bool = True) -> bool:
    """True when compat may keep its files in `directory`: created 0700 when absent, a directory owned by this
    user; one writable by group or others is tightened to 0700 (umask 002 made older caches 0775). A directory
    of another user (or a symlink to one) is refused with one warning on stderr per process; False then."""
    try:
        if create:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.stat(directory)
    except OSError:
        return False
    euid = _euid()
    if not stat.S_ISDIR(st.st_mode):
        _warn(directory, "not a directory")
        return False
    if euid >= 0 and st.st_uid != euid:
        _warn(directory, f"owned by uid {st.st_uid}, not by this user (uid {euid})")
        return False
    if st.st_mode & 0o022:
        try:
            os.chmod(directory, 0o700)
        except OSError:
            _warn(directory, "writable by other users")
            return False
    return True


def _open_flags() -> int:
    return os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_own(path: str, limit: int = MAX_BYTES) -> Optional[bytes]:
    """`read_regular` for compat's own files: also None when the file or its directory is not this user's (a
    file planted by someone else is never read) or the file is a symlink."""
    if not private_dir(os.path.dirname(path) or ".", create=False):
        return None
    return read_regular(path, limit, own=True)


def read_regular(path: str, limit: int = MAX_BYTES, *, own: bool = False) -> Optional[bytes]:
    """The bytes of a regular file of at most `limit` bytes, or None (absent, not a regular file, too big; with
    `own`, also a symlink or a file of another user).

    Opened non-blocking, so that a FIFO or a device named like the file answers at once instead of hanging.
    """
    flags = _open_flags() | (getattr(os, "O_NOFOLLOW", 0) if own else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if own and _euid() >= 0 and st.st_uid != _euid():
            return None
        chunks = []
        size = 0
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                break
            size += len(data)
            if size > limit:
                return None
            chunks.append(data)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private(path: str, data: bytes) -> None:
    """Write `data` atomically as a 0600 file of this user (a reader never sees half of it); OSError when the
    directory is refused (another user's) or cannot be written. No temporary file is left behind."""
    directory = os.path.dirname(path) or "."
    if not private_dir(directory):
        raise PermissionError(f"{directory}: not a private directory of this user")
    tmp = f"{path}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        os.unlink(tmp)  # a leftover of a killed process that had this pid
    except OSError:
        pass
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(path: str, fmt: int) -> Optional[dict[str, Any]]:
    """The entry stored at `path` by `store` with format number `fmt`, or None (absent, damaged, other format)."""
    data = read_own(path)
    if data is None or not data.startswith(MAGIC):
        return None
    n = len(MAGIC)
    payload = data[n + 4 :]
    if int.from_bytes(data[n : n + 4], "big") != zlib.crc32(payload):
        return None
    try:
        doc = marshal.loads(payload)  # our own file of plain values, checksum verified
    except (ValueError, EOFError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        return None
    return doc


KEEP = 64
"""Entries kept per family (`doctor-import-`, `tool-`, `pyproject-`): the newest by modification time."""


def prune(directory: str, family: str, keep: int = KEEP) -> int:
    """Remove all but the `keep` newest `family*.bin` entries of `directory` (each key is one environment, binary
    or file content: without a bound they would pile up for ever); the number removed. Never raises."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(family) and n.endswith(".bin")]
    except OSError:
        return 0
    if len(names) <= keep:
        return 0
    aged = []
    for n in names:
        try:
            aged.append((os.stat(os.path.join(directory, n)).st_mtime_ns, n))
        except OSError:
            continue
    removed = 0
    for _, n in sorted(aged, reverse=True)[keep:]:
        try:
            os.unlink(os.path.join(directory, n))
            removed += 1
        except OSError:
            continue
    return removed


def store(path: str, fmt: int, doc: Mapping[str, Any], *, family: Optional[str] = None) -> bool:
    """Write `doc` (plain values) atomically; False when the cache is unwritable (never an exception). With
    `family` (the entry names' prefix), that family is pruned to its KEEP newest entries after a write."""
    try:
        payload = marshal.dumps({**doc, "format": fmt})
    except ValueError:  # not plain values: a programming error, but a cache is never fatal
        return False
    try:
        write_private(path, MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload)
    except OSError:
        return False
    if family is not None:
        prune(os.path.dirname(path), family, KEEP)
    return True


def sha256(data: bytes = b"") -> Any:
    """hashlib.sha256 without importing hashlib's OpenSSL binding (~2.5 ms of every start): CPython's built-in
    module gives the same digest."""
    try:
        from _sha256 import sha256 as new  # type: ignore[import-not-found,unused-ignore]  # CPython <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256 as new  # type: ignore[import-not-found,no-redef,unused-ignore]  # CPython >= 3.12
        except ImportError:  # pragma: no cover - a build without the built-in module
            from hashlib import sha256 as new  # type: ignore[assignment,unused-ignore]
    return new(data)
