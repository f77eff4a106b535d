"""`compat fleet merge`: doctor reports gathered by any scheduler (Slurm, Kubernetes jobs, ssh loops) -> NodeInputs.

A file may hold one JSON document, several concatenated, or JSON lines. A malformed file is an InputError (exit 2,
one line naming the file); a node reported twice is not an error: the first report is kept and the duplicate is
listed in the fleet report (a warning).

Slurm, one report per node into a shared directory, then the fleet report:

    srun --ntasks-per-node=1 --output='reports/%N.json' --error='reports/%N.err' compat doctor --json --no-smoke
    compat fleet merge reports/*.json
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from compat._text import json_kind
from compat.errors import InputError
from compat.facts import MAX_JSON_DEPTH, json_error, json_too_deep
from compat.fleet.report import NodeInput
from compat.schema_version import SCHEMA_VERSION

MAX_BYTES = 64 * 1024 * 1024
"""A report file larger than this is refused (a doctor report is ~50 KB: room for over a thousand nodes)."""
REQUIRED = (("facts", dict), ("findings", list), ("verdict", str))


MAX_DOCUMENT = 2 << 20
"""One doctor report larger than this is refused (one is ~25-50 KB). Each document is parsed from a slice of at
most this size, so what one hostile document can make compat build is bounded (issue 32, item 16)."""
MAX_OBJECTS = 20_000
"""JSON objects in one report (one has ~100: facts, findings, fixes, GPUs); past this it is refused mid-parse."""
FIRST_SLICE = 256 << 10


class _TooMany(Exception):
    pass


def _decoder() -> json.JSONDecoder:
    count = [0]

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        count[0] += 1
        if count[0] > MAX_OBJECTS:
            raise _TooMany
        return dict(items)

    dec = json.JSONDecoder(object_pairs_hook=pairs)
    dec.count = count  # type: ignore[attr-defined]
    return dec


def _decode_one(text: str, pos: int, origin: str, line: int) -> tuple[Any, int]:
    """The document starting at `pos` and where it ends, parsed from slices of growing size up to MAX_DOCUMENT."""
    size = FIRST_SLICE
    while True:
        chunk = text[pos : pos + size]
        truncated = pos + size < len(text)
        dec = _decoder()
        try:
            value, end = dec.raw_decode(chunk)
            return value, pos + end
        except json.JSONDecodeError as exc:
            if truncated and size < MAX_DOCUMENT:
                size *= 4  # the document may go on past the slice: a larger one
                continue
            if truncated:
                raise InputError(
                    f"{origin}: not a compat doctor report at line {line}: a document larger than "
                    f"{MAX_DOCUMENT >> 20} MiB (a doctor report is about 50 KB)"
                ) from None
            lineno = text.count("\n", 0, pos) + exc.lineno
            colno = exc.colno if exc.lineno > 1 else exc.colno + pos - (text.rfind("\n", 0, pos) + 1)
            raise InputError(f"{origin}: not JSON at line {lineno} column {colno}: {exc.msg}") from None
        except _TooMany:
            raise InputError(
                f"{origin}: not a compat doctor report at line {line}: more than {MAX_OBJECTS} JSON objects "
                "in one report (too many findings or facts; a doctor report has about 100)"
            ) from None
        except (
            RecursionError,
            ValueError,
        ) as exc:  # arrays nested ~1000 deep; an integer of over 4300 digits
            raise InputError(
                f"{origin}: not a compat doctor report at line {line}: {json_error(exc)}"
            ) from None


def iter_documents(text: str, origin: str) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) for each document in `text`: one, concatenated, or JSON lines."""
    pos = 0
    n = len(text)
    line = 1
    while True:
        start = pos
        while pos < n and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= n:
            return
        line += text.count("\n", start, pos)
        value, end = _decode_one(text, pos, origin, line)
        if json_too_deep(value):
            raise InputError(
                f"{origin}: not a compat doctor report at line {line}: JSON nested more than "
                f"{MAX_JSON_DEPTH} levels deep"
            )
        yield line, value
        line += text.count("\n", pos, end)
        pos = end


def check_report(doc: Any, where: str) -> Mapping[str, Any]:
    """The document, if it is a `compat doctor --json` report; InputError naming `where` otherwise."""
    if not isinstance(doc, dict):
        raise InputError(
            f"{where}: not a compat doctor report (a JSON {type(doc).__name__}, expected an object)"
        )
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise InputError(
            f"{where}: not a compat doctor report of schema_version {SCHEMA_VERSION} "
            f"(schema_version is {json_kind(doc.get('schema_version'))})"
        )
    for key, kind in REQUIRED:
        if not isinstance(doc.get(key), kind):
            raise InputError(
                f"{where}: not a compat doctor report (no {key!r} {'object' if kind is dict else kind.__name__})"
            )
    if "nodes" in doc and "groups" in doc:
        raise InputError(f"{where}: this is a fleet report, not a doctor report")
    return doc


def read_reports(path: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(where, document) for each report in the file; InputError (one line) for anything malformed."""
    from compat.inputs import read_text

    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory (give the report files, e.g. {path.rstrip('/')}/*.json)")
    text = read_text(path, "doctor report", MAX_BYTES)  # counted while read: /dev/zero is refused, not read
    docs = list(iter_documents(text, path))
    if not docs:
        raise InputError(f"{path}: empty (no JSON document)")
    multi = len(docs) > 1
    return [
        (f"{path}:{line}" if multi else path, check_report(doc, f"{path}:{line}" if multi else path))
        for line, doc in docs
    ]


def node_name(doc: Mapping[str, Any], path: str, index: int, count: int) -> str:
    """The host the doctor recorded; else the file's name (with the document's number when the file has several)."""
    host = doc.get("host")
    if isinstance(host, str) and host.strip():
        return host.strip()
    stem = os.path.basename(path)
    for ext in (".jsonl", ".json", ".out", ".txt"):
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    return f"{stem}#{index + 1}" if count > 1 else (stem or path)


def merge_inputs(paths: Sequence[str]) -> tuple[list[NodeInput], list[dict[str, Any]]]:
    """(one NodeInput per node, duplicates). Every file is read and checked before anything is reported."""
    if not paths:
        raise InputError("give at least one doctor report file")
    seen: dict[str, NodeInput] = {}
    dups: dict[str, list[str]] = {}
    for path in paths:
        reports = read_reports(path)
        for i, (where, doc) in enumerate(reports):
            name = node_name(doc, path, i, len(reports))
            if name in seen:
                dups.setdefault(name, [seen[name].source]).append(where)
                continue
            seen[name] = NodeInput(name=name, source=where, status="reported", doc=doc)
    duplicates = [{"name": n, "sources": srcs} for n, srcs in sorted(dups.items())]
    return list(seen.values()), duplicates


__all__ = ["check_report", "iter_documents", "merge_inputs", "node_name", "read_reports"]
