"""Terminal-safe text: strings from outside (GPU names, overrides, versions, host names, tool output) never reach
a terminal as control sequences (issue 19, item 9: seen ``ESC]0;…BEL`` setting the window title, ``ESC[2J``
clearing the screen).

`sanitize` is for one external string. `sanitize_output` is what compat's standard streams apply to every text
write (compat._runtime): C0 controls but tab and newline, DEL and C1 controls become visible escapes (``\\x1b``),
except compat's own colour codes (SGR with the parameters compat.render uses). JSON output is left exact: the
JSON encoder already escapes every C0 control, so a JSON run is not filtered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OWN_SGR = frozenset({b"0", b"1", b"2", b"31", b"32", b"33", b"36"})
_BYTES_RE = re.compile(rb"\x1b\[([0-9;]*)m|[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
_TEXT_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(ch: str) -> str:
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def sanitize(text: str) -> str:
    """`text` with every control character but tab and newline shown as an escape (``\\x1b``)."""
    return _TEXT_RE.sub(lambda m: _visible(m.group()), text)


def _sub_bytes(m: re.Match[bytes]) -> bytes:
    sgr = m.group(1)
    if sgr is not None and all(p in _OWN_SGR for p in sgr.split(b";")):
        return m.group()
    raw = m.group()
    if raw.startswith(b"\x1b["):  # a foreign SGR: show its ESC, keep the rest as text
        return b"\\x1b" + raw[1:]
    if len(raw) == 2:  # C1 control, UTF-8 encoded
        return f"\\x{raw[1]:02x}".encode()
    return f"\\x{raw[0]:02x}".encode()


def sanitize_output(data: bytes) -> bytes:
    """Bytes about to be written to a terminal or file as text output, made safe (see the module doc)."""
    if not _BYTES_RE.search(data):
        return data
    return _BYTES_RE.sub(_sub_bytes, data)


def sanitize_tree(doc: Any) -> Any:
    """A copy of a JSON-like document with `sanitize` applied to every string (keys too): what a renderer built
    from it can colour with compat's own codes, and nothing from outside can."""
    if isinstance(doc, str):
        return sanitize(doc)
    if isinstance(doc, Mapping):
        return {sanitize(k) if isinstance(k, str) else k: sanitize_tree(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [sanitize_tree(v) for v in doc]
    return doc


def clip(value: str, limit: int = 200) -> str:
    """`value` cut to `limit` characters with an ellipsis: how a user's value (a flag, a path) appears in an error
    (issue 32, item 18: a 100 KB --driver value was echoed whole)."""
    return value if len(value) <= limit else value[:limit] + "…"


_LONG_RUN = re.compile(r"\S{201,}")


def bounded(message: str, limit: int = 2000) -> str:
    """An error message with every value it echoes clipped: a run of more than 200 characters without a space
    keeps its first 200, and a message still over `limit` keeps its head and its last 200 characters (the
    "expected …" part). Applied once, to every CompatError and to every line `compat: error:` prints."""
    if len(message) <= 200:
        return message
    text = _LONG_RUN.sub(lambda m: clip(m.group()), message)
    if len(text) > limit:
        text = text[: limit - 201] + "…" + text[-200:]
    return text


def json_kind(value: object) -> str:
    """A JSON value shown without its text (a number as itself, a string as "a string"): what an error about a
    file that may not be compat's says of a field (issue 32: `"schema_version": "<a token>"` was echoed)."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 20 else "a large number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else "a value"


_QUOTED = re.compile(r"'[^']{4,}'|\"[^\"]{4,}\"")


def strip_quoted(problem: str, limit: int = 200) -> str:
    """A parser's message (PyYAML's "found undefined alias '<a token>'") without the file text it quotes: an
    error names the file and the problem, never its bytes (issue 32, item 1). A quoted character stays."""
    return clip(_QUOTED.sub("'…'", problem), limit)


def upper_first(text: str) -> str:
    """The text with its first letter upper-case, for a phrase that starts a sentence ("the GPU has" → "The GPU has")."""
    return text[:1].upper() + text[1:]
