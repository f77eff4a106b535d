"""The parsed-matrix cache: the core YAML documents stored as JSON, keyed on a hash of the files' bytes.

Parsing the YAML is most of the cost of loading the matrix (~70 ms of ~75 ms); reading the same documents
back from JSON takes ~2 ms. Rows are still built and validated from the cached documents on every load, so a
stale or damaged cache can never produce a matrix that the YAML would not: a cache entry is used only when its
key (format, compat version, every core file's name, size and SHA-256) matches the files on disk now.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CACHE_FORMAT = 1
CACHE_FILE = "matrix-cache.json"
MAX_CACHE_BYTES = 8 * 1024 * 1024
_DATE = "$date"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The cache directory: the project-wide one (compat.cache), never a relative path."""
    from compat.cache import CACHE_ENV
    from compat.cache import cache_dir as _project_cache_dir

    env = os.environ if environ is None else environ
    explicit = env.get(CACHE_ENV)
    if explicit and not os.path.isabs(explicit):
        return None  # a relative COMPAT_CACHE_DIR would write into whatever the cwd is: no matrix cache then
    path = _project_cache_dir(environ)
    return Path(path) if path and os.path.isabs(path) else None


def content_key(files: Mapping[str, bytes]) -> str:
    """A key over the cache format, compat's version and every file's name and bytes."""
    from compat.about import __version__
    from compat.cache import sha256

    h = sha256(f"compat-matrix/{CACHE_FORMAT}/{__version__}\n".encode())
    for name in sorted(files):
        data = files[name]
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return str(h.hexdigest())


def _encode(obj: Any) -> Any:
    if isinstance(obj, _dt.date) and not isinstance(obj, _dt.datetime):
        return {_DATE: obj.isoformat()}
    raise TypeError(type(obj).__name__)


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and _DATE in obj and isinstance(obj[_DATE], str):
        return _dt.date.fromisoformat(obj[_DATE])
    return obj


def _bounded_dumps(obj: Any) -> str | None:
    """JSON text of `obj`, or None past MAX_CACHE_BYTES. YAML aliases are shared references: a small file can
    name 10**9 nodes ("billion laughs"), which a plain json.dumps would expand without end."""
    chunks: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(default=_encode, sort_keys=True).iterencode(obj):
        size += len(chunk)
        if size > MAX_CACHE_BYTES:
            return None
        chunks.append(chunk)
    return "".join(chunks)


def extra_slot(name: str) -> str:
    """The cache file of one extra matrix file (`jax.yaml` -> `matrix-extra-jax.json`), read on first use."""
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in name.removesuffix(".yaml"))
    return f"matrix-extra-{stem[:64]}.json"


def read(key: str, directory: Path | None = None, *, slot: str = CACHE_FILE) -> dict[str, Any] | None:
    """The cached documents for `key`, or None (no cache, another key, unreadable or damaged)."""
    from compat.cache import read_own

    d = directory if directory is not None else cache_dir()
    if d is None:
        return None
    data = read_own(str(d / slot), MAX_CACHE_BYTES)  # a FIFO, a symlink or another user's file: None
    if data is None:
        return None
    try:
        entry = json.loads(data, object_hook=_decode)
    except (ValueError, TypeError, RecursionError):
        return None
    docs = entry.get("docs") if isinstance(entry, dict) and entry.get("key") == key else None
    return docs if isinstance(docs, dict) else None


def write(
    key: str, docs: Mapping[str, Any], directory: Path | None = None, *, slot: str = CACHE_FILE
) -> bool:
    """Store `docs` under `key` (one slot: the last matrix loaded). False when not stored: the documents do not
    survive a JSON round trip unchanged (then caching them would change what the loader sees) or the directory
    cannot be written. Never raises for I/O."""
    d = directory if directory is not None else cache_dir()
    if d is None:
        return False
    try:
        text = _bounded_dumps({"key": key, "docs": dict(docs)})
        if text is None or json.loads(text, object_hook=_decode)["docs"] != dict(docs):
            return False
    except (TypeError, ValueError, RecursionError):
        return False
    from compat.cache import write_private

    try:
        write_private(str(d / slot), text.encode("utf-8"))  # 0600 in a 0700 directory of this user
    except OSError:
        return False
    return True
