"""Records kept in the cache directory, so `compat explain --last` and the next notebook kernel can read them."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

KEEP = 20
MAX_RECORD = 32 << 20


def records_dir(environ: Mapping[str, str] | None = None) -> str:
    from compat.cache import cache_dir

    return os.path.join(cache_dir(os.environ if environ is None else environ), "records")


def write_json(path: str, doc: Mapping[str, Any]) -> None:
    """Write atomically (a reader never sees half a record)."""
    from compat._atomic import write_text_atomic

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_text_atomic(path, json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n")


def save(doc: Mapping[str, Any], name: str, environ: Mapping[str, str] | None = None) -> str:
    d = records_dir(environ)
    path = os.path.join(d, name)
    write_json(path, doc)
    prune(d)
    return path


def prune(d: str, keep: int = KEEP) -> None:
    try:
        files = sorted(
            (e for e in os.scandir(d) if e.name.endswith(".json")), key=lambda e: e.stat().st_mtime
        )
    except OSError:
        return
    old = [e for e in files[:-keep]]
    try:
        # side files (.shown markers, watcher logs) of records long gone
        cutoff = time.time() - 7 * 86400
        old += [e for e in os.scandir(d) if not e.name.endswith(".json") and e.stat().st_mtime < cutoff]
    except OSError:
        pass
    for e in old:
        try:
            os.unlink(e.path)
        except OSError:
            pass


def load(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            doc = json.loads(fh.read(MAX_RECORD))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def latest(environ: Mapping[str, str] | None = None, prefix: str = "") -> tuple[str, dict[str, Any]] | None:
    """The newest finished record (optionally only names starting with `prefix`)."""
    d = records_dir(environ)
    try:
        files = sorted(
            (e for e in os.scandir(d) if e.name.endswith(".json") and e.name.startswith(prefix)),
            key=lambda e: e.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return None
    for e in files:
        doc = load(e.path)
        if doc is not None and doc.get("verdict"):
            return e.path, doc
    return None
