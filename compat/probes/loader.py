"""Would the dynamic loader find a shared library by its soname? Answered without loading it.

`compat doctor` and the guard touch the NVIDIA driver library only in a child process (a driver library that
crashes or hangs must not take compat down). On the many machines that have no driver at all (CI runners, CPU
laptops, containers started without `--gpus`) that child only learns that `dlopen("libnvidia-ml.so.1")` fails,
and starting it costs a Python interpreter (~50 ms). `certainly_absent()` answers that question in-process by
following glibc's search order for a name without a slash (ld.so(8)): LD_PRELOAD and /etc/ld.so.preload, the
RPATH of the interpreter (conda's `$ORIGIN/../lib`), LD_LIBRARY_PATH, /etc/ld.so.cache, then the default
directories (with the subdirectories glibc also tries there: glibc-hwcaps/*, tls, the platform's name).

It says "absent" only when every one of those places was read and none has the name; anything it cannot read or
does not model (a loader other than glibc's: no /etc/ld.so.cache, e.g. musl or NixOS; `$ORIGIN` in
LD_LIBRARY_PATH; a cache it cannot read) means "maybe present", and the child runs as before. A cache entry for a
deleted file also means "maybe present": the child then finds out.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterable, Mapping

from compat.cache import read_regular

LD_SO_CACHE = "/etc/ld.so.cache"
LD_SO_PRELOAD = "/etc/ld.so.preload"
_CACHE_MAX = 64 << 20
"""A larger /etc/ld.so.cache is not read (answer: maybe present)."""
_DEFAULT_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")
_MULTIARCH_GLOBS = ("/lib/*-linux-gnu*", "/usr/lib/*-linux-gnu*")


_LEGACY_SUBDIRS = (
    "tls",
    "x86_64",
    "haswell",
    "xeon_phi",
    "avx512_1",
    "i386",
    "i686",
    "aarch64",
    "power8",
    "power9",
    "power10",
    "z13",
    "z14",
    "z15",
    "z16",
)
"""The subdirectories glibc < 2.37 also searches in each directory (`tls`, the platform and hwcap names, and their
combinations such as tls/x86_64 or haswell/x86_64), beside glibc-hwcaps/* (glibc >= 2.33)."""


_SUBDIR_NAMES = tuple(
    dict.fromkeys((*_LEGACY_SUBDIRS, *([os.uname().machine] if hasattr(os, "uname") else [])))
)


def _variants(d: str) -> Iterable[str]:
    """A search directory and the subdirectories glibc may also try in it (a superset: more is only slower)."""
    yield d
    subs = [os.path.join(d, n) for n in _SUBDIR_NAMES]
    subs += glob.glob(os.path.join(glob.escape(d), "glibc-hwcaps", "*"))
    for sub in subs:
        if os.path.isdir(sub):
            yield sub
            yield from (os.path.join(sub, n) for n in _SUBDIR_NAMES if os.path.isdir(os.path.join(sub, n)))


def search_dirs(
    environ: Mapping[str, str], executable: str | None = None, cwd: str | None = None
) -> list[str]:
    """The directories searched besides /etc/ld.so.cache, in glibc's order (RPATH, LD_LIBRARY_PATH, defaults).

    Raises ValueError when LD_LIBRARY_PATH uses a token ($ORIGIN, $LIB, $PLATFORM) this module does not expand."""
    out: list[str] = []
    exe = executable if executable is not None else sys.executable
    if exe:  # conda's and python-build-standalone's interpreters carry RPATH $ORIGIN/../lib
        for e in dict.fromkeys((exe, os.path.realpath(exe))):
            out.append(os.path.normpath(os.path.join(os.path.dirname(e), "..", "lib")))
    llp = environ.get("LD_LIBRARY_PATH") or ""
    if "$" in llp:
        raise ValueError("LD_LIBRARY_PATH uses a dynamic string token")
    for entry in llp.replace(";", ":").split(":") if llp else ():
        out.append(entry or (cwd or os.getcwd()))  # an empty entry is the current directory
    out.extend(_DEFAULT_DIRS)
    for pattern in _MULTIARCH_GLOBS:
        out.extend(sorted(glob.glob(pattern)))
    return list(dict.fromkeys(out))


def certainly_absent(
    soname: str,
    environ: Mapping[str, str] | None = None,
    *,
    executable: str | None = None,
    cache_path: str = LD_SO_CACHE,
    preload_path: str = LD_SO_PRELOAD,
) -> bool:
    """True only when glibc's dlopen(soname) in a child started with `environ` is certain to fail."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") or "/" in soname:
        return False
    if (env.get("LD_PRELOAD") or "").strip():
        return False
    preload = read_regular(preload_path, 1 << 20)  # compat's capped reader: a FIFO there cannot hang it
    if preload is not None and preload.strip():
        return False
    if os.path.exists(preload_path) and preload is None:
        return False  # there but unreadable or huge
    cache = read_regular(cache_path, _CACHE_MAX)
    if cache is None or soname.encode() + b"\0" in cache:
        return False  # no glibc cache (not modelled) or the cache names it
    try:
        dirs = search_dirs(env, executable)
    except ValueError:
        return False
    return not any(os.path.lexists(os.path.join(v, soname)) for d in dirs for v in _variants(d))


__all__ = ["certainly_absent", "search_dirs"]
