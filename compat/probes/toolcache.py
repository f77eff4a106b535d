"""A compiled tool's answer to a version query (`nvcc --version`, `c++ -dumpfullversion -dumpversion`), kept for
exactly that binary.

The answer is compiled into the program: it changes only when the file does. The doctor asks nvcc up to three
times (nvcc on PATH, then each toolkit folder without a version.json) and the host compiler twice; each run costs a
process start, 10-100 ms. So a successful answer is stored in compat's one cache (compat.cache) under a key made
of the query, the real path and identity of the binary (device, inode, size, modification and change times) and
the environment variables that can change what it prints (the locale of its messages, NVCC_* flags); any change
to the file, a reinstall or a switched symlink is another key, so the next run asks afresh.

Only ELF executables named like a compiler (after following links) are remembered: a script (a wrapper such as
`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) or an ELF wrapper (ccache, distcc, sccache: masquerading as `c++`,
they run the next compiler on PATH) may run anything, so they run every time. A failure, a timeout or a crash is
never stored, and `compat doctor --no-cache` runs every query. Within one run the same binary is asked once.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from compat import cache as cache_mod
from compat._proc import CmdResult, which
from compat._proc import run as run_command

CACHE_FORMAT = 1
ENV_KEYS = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_MESSAGES",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "NVCC_CCBIN",
)
"""Variables that can change a version query's output: GCC translates its banner; nvcc reads its NVCC_* flags."""

_COMPILER_RE = re.compile(
    r"^(?:[\w.]+-)*(?:nvcc|cc|c\+\+|gcc|g\+\+|clang|clang\+\+|icx|icpx|icpc|nvc\+\+)(?:-[\d.]+)?(?:\.exe)?$"
)
"""Names of compilers that answer a version query themselves (`x86_64-linux-gnu-g++-12`, `clang++-17`, `nvcc`);
a wrapper's answer depends on the compiler it finds next, so it is never remembered."""

_LOCK = threading.Lock()
_MEMO: dict[str, CmdResult] = {}
"""This run's answers by key (two toolkit folders that link to one nvcc ask it once)."""


def _is_elf(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def query_key(argv: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The cache key of a version query, or None when its answer cannot be remembered (not found, a script)."""
    exe = argv[0] if os.sep in argv[0] else which(argv[0], environ)
    if not exe:
        return None
    real = os.path.realpath(exe)
    try:
        st = os.stat(real)
    except OSError:
        return None
    # Not a script, nor an ELF wrapper (ccache, distcc, sccache) that runs whatever compiler is next:
    if not _COMPILER_RE.match(os.path.basename(real)) or not _is_elf(real):
        return None
    parts = [
        CACHE_FORMAT,
        exe,
        real,
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
        st.st_ctime_ns,
        list(argv[1:]),
        {k: environ.get(k) for k in ENV_KEYS},
    ]
    return str(cache_mod.sha256(json.dumps(parts).encode()).hexdigest()[:32])


def _path(environ: Mapping[str, str], key: str) -> str:
    return os.path.join(cache_mod.cache_dir(environ), f"tool-{key}.bin")


def version_query(
    argv: Sequence[str], timeout: float, environ: Mapping[str, str] | None = None, *, cache: bool = True
) -> CmdResult:
    """run(argv) for a version query; its successful answer remembered for that exact binary (module docstring)."""
    env = os.environ if environ is None else environ
    key = query_key(argv, env) if cache else None
    if key is None:
        return run_command(argv, timeout, environ=env)
    with _LOCK:
        got = _MEMO.get(key)
    if got is not None:
        return got
    doc = cache_mod.load(_path(env, key), CACHE_FORMAT)
    if doc is not None and isinstance(doc.get("stdout"), str) and isinstance(doc.get("stderr"), str):
        res = CmdResult(tuple(str(a) for a in argv), "ok", 0, doc["stdout"], doc["stderr"])
    else:
        res = run_command(argv, timeout, environ=env)
        if not res.ok or res.truncated:
            return res
        stored: dict[str, Any] = {"stdout": res.stdout, "stderr": res.stderr}
        cache_mod.store(_path(env, key), CACHE_FORMAT, stored, family="tool-")  # unwritable: ignored
    with _LOCK:
        _MEMO[key] = res
    return res


__all__ = ["version_query"]
