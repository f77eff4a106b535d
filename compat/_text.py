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


def upper_first(text: str) -> str:
    """The text with its first letter upper-case, for a phrase that starts a sentence ("the GPU has" → "The GPU has")."""
    return text[:1].upper() + text[1:]
