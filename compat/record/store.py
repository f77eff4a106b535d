"""Records kept in the cache directory, so `compat explain --last` and the next notebook kernel can read them.

Records are compat's own files (compat.cache): written 0600 into a 0700 directory of this user, read back through
the capped reader (a FIFO, a symlink or another user's file is never opened for reading), and checked on load:
a record of the wrong shape or nested too deep is skipped with one warning, never a traceback (issue 32)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

KEEP = 20
MAX_RECORD = 32 << 20
"""The largest record read back. `save` trims what it writes to fit, so that every record written can be read."""
MAX_DEPTH = 32
"""A record nests 6 levels (verdict -> findings -> fixes); deeper is not one of ours."""

_WARNED: set[str] = set()


def records_dir(environ: Mapping[str, str] | None = None) -> str:
    from compat.cache import cache_dir

    return os.path.join(cache_dir(os.environ if environ is None else environ), "records")


def write_json(path: str, doc: Mapping[str, Any]) -> None:
    """Write atomically (a reader never sees half a record)."""
    from compat._atomic import write_text_atomic

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_text_atomic(path, json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n")


def encode(doc: Mapping[str, Any], limit: int = MAX_RECORD) -> bytes:
    """The record as JSON of at most `limit` bytes: the oldest output lines, then the oldest samples, are dropped
    (and said in `notes`) until it fits. The recorder bounds both already; this is the last guarantee."""
    data = _dump(doc)
    if len(data) <= limit:
        return data
    trimmed = dict(doc)
    for key in ("output_tail", "samples", "kernel_log", "xid_events", "fault_report", "processes"):
        while len(data) > limit:
            value = trimmed.get(key)
            if isinstance(value, list) and value:
                trimmed[key] = value[len(value) // 2 :] if len(value) > 1 else []
            elif isinstance(value, dict) and value:
                trimmed[key] = {}
            else:
                break
            trimmed["notes"] = [*list(doc.get("notes") or []), f"the record was trimmed to {limit} bytes"]
            data = _dump(trimmed)
    return data


def _dump(doc: Mapping[str, Any]) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=False) + "\n").encode("utf-8", "replace")


def save(doc: Mapping[str, Any], name: str, environ: Mapping[str, str] | None = None) -> str:
    """Keep `doc` as records/`name` (0600); OSError when the cache directory is refused or unwritable."""
    from compat.cache import cache_dir, private_dir, write_private

    root = cache_dir(os.environ if environ is None else environ)
    if not private_dir(root):
        raise PermissionError(f"{root}: not a private directory of this user")
    d = records_dir(environ)
    path = os.path.join(d, name)
    write_private(path, encode(doc))
    prune(d)
    return path


def _mtime(e: os.DirEntry[str]) -> float:
    try:
        return e.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def prune(d: str, keep: int = KEEP) -> None:
    try:
        files = sorted((e for e in os.scandir(d) if e.name.endswith(".json")), key=_mtime)
    except OSError:
        return
    old = [e for e in files[:-keep]]
    try:
        # side files (.shown markers, watcher logs) of records long gone
        cutoff = time.time() - 7 * 86400
        old += [e for e in os.scandir(d) if not e.name.endswith(".json") and _mtime(e) < cutoff]
    except OSError:
        pass
    for e in old:
        try:
            os.unlink(e.path)
        except OSError:
            pass


def _too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, depth = todo.pop()
        kids = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if kids is None:
            continue
        if depth >= limit:
            return True
        todo.extend((k, depth + 1) for k in kids)
    return False


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _dicts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, dict) for x in value)


_DICTS = ("host", "cgroup", "gpu", "kernel_log", "processes")


def problem(doc: Any) -> str | None:
    """Why `doc` is not a record compat can show (None when it is): the shape and the types every reader relies
    on (explain --last, report, the notebook's message). Keys may be missing (readers default them)."""
    if not isinstance(doc, dict):
        return f"a JSON {type(doc).__name__}, not an object"
    if _too_deep(doc):
        return f"nested more than {MAX_DEPTH} levels deep"
    checks: tuple[tuple[str, Any], ...] = (
        ("kind", isinstance(doc.get("kind", ""), str)),
        (
            "pid",
            doc.get("pid") is None or (isinstance(doc.get("pid"), int) and not isinstance(doc["pid"], bool)),
        ),
        (
            "exit",
            isinstance(doc.get("exit", {}), dict) and isinstance(doc.get("exit", {}).get("status", ""), str),
        ),
        ("command", doc.get("command") is None or _strings(doc.get("command"))),
        ("started_at", isinstance(doc.get("started_at", ""), str)),
        ("output_tail", _strings(doc.get("output_tail", []))),
        ("fault_report", _strings(doc.get("fault_report", []))),
        ("notes", _strings(doc.get("notes", []))),
        ("samples", _dicts(doc.get("samples", []))),
        ("verdict", doc.get("verdict") is None or isinstance(doc.get("verdict"), dict)),
        *((k, doc.get(k) is None or isinstance(doc.get(k), dict)) for k in _DICTS),
    )
    bad = [name for name, ok in checks if not ok]
    v = doc.get("verdict")
    if isinstance(v, dict):
        bad += [
            f"verdict.{k}"
            for k, ok in (
                ("title", isinstance(v.get("title", ""), str)),
                ("outcome", isinstance(v.get("outcome", ""), str)),
                ("deciding", _strings(v.get("deciding", []))),
                ("findings", _dicts(v.get("findings", []))),
            )
            if not ok
        ]
    return "wrong type for " + ", ".join(bad[:5]) if bad else None


def warn_skipped(path: str, why: str) -> None:
    """One line on stderr per damaged record and process."""
    if path in _WARNED:
        return
    _WARNED.add(path)
    try:
        sys.stderr.write(f"compat: warning: skipped the damaged record {path}: {why}\n")
    except (OSError, ValueError, AttributeError):
        pass


def load(path: str, *, warn: bool = True) -> dict[str, Any] | None:
    """The record at `path`, or None: absent, not a regular file of this user, too big, damaged (said once on
    stderr when `warn`)."""
    doc, why = check(path)
    if why is not None and warn:
        warn_skipped(path, why)
    return doc


def check(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the record, None), or (None, why it is damaged), or (None, None) when there is none to read."""
    from compat.cache import read_own

    data = read_own(path, MAX_RECORD)
    if data is None:
        return None, None
    try:
        doc = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        return None, "nested too deep" if isinstance(
            exc, RecursionError
        ) else "not JSON (half written or damaged)"
    why = problem(doc)
    return (None, why) if why is not None else (doc, None)


def latest(
    environ: Mapping[str, str] | None = None, prefix: str = "", skipped: list[tuple[str, str]] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The newest finished record (optionally only names starting with `prefix`); a damaged one is skipped: said
    on stderr, or added to `skipped` (for a caller that says it in its own message)."""
    d = records_dir(environ)
    try:
        files = sorted(
            (e for e in os.scandir(d) if e.name.endswith(".json") and e.name.startswith(prefix)),
            key=_mtime,
            reverse=True,
        )
    except OSError:
        return None
    for e in files:
        doc, why = check(e.path)
        if why is not None:
            if skipped is None:
                warn_skipped(e.path, why)
            else:
                skipped.append((e.path, why))
        if doc is not None and doc.get("verdict"):
            return e.path, doc
    return None
