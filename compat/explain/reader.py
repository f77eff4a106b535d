"""Reading logs: files or stdin in bounded blocks (undecodable bytes replaced), and Jupyter notebooks."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

from compat.errors import InputError

BLOCK = 1 << 20
NOTEBOOK_MAX = 64 << 20
"""A notebook is parsed as JSON up to this size; a bigger one is scanned as plain text."""


def _open(path: str) -> IO[bytes]:
    """The log at `path`: a regular file or a FIFO named on purpose; a device, a directory or a kernel file
    (/proc/kmsg blocks and eats the kernel log, /proc/self/pagemap never ends) is refused (issue 32, item 5)."""
    from compat.inputs import open_stream

    return open_stream(path, "log")


def _blocks(stream: IO[bytes], name: str) -> Iterator[str]:
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        try:
            raw = stream.read(BLOCK)
        except OSError as exc:
            raise InputError(f"cannot read log {name}: {exc.strerror or exc}") from None
        if not raw:
            tail = dec.decode(b"", final=True)
            if tail:
                yield tail
            return
        text = dec.decode(raw)
        if text:
            yield text


def iter_log(path: str | None) -> Iterator[str]:
    """Decoded blocks of the log at `path` ('-' or None: stdin). Notebooks yield their output lines."""
    if path in (None, "-"):
        from compat.inputs import stdin_stream

        stream: IO[bytes] = stdin_stream()
        name = "<stdin>"
        close = False
    else:
        assert path is not None
        stream = _open(path)
        name = repr(path)
        close = True
    try:
        blocks = _blocks(stream, name)
        first = next(blocks, "")
        head = first.lstrip("\ufeff \t\r\n")
        if head.startswith("{") and '"cells"' in first and ('"nbformat"' in first or '"outputs"' in first):
            parts = [first]
            size = len(first)
            for b in blocks:
                parts.append(b)
                size += len(b)
                if size > NOTEBOOK_MAX:
                    break
            text = "".join(parts)
            lines = notebook_lines(text) if size <= NOTEBOOK_MAX else None
            if lines is not None:
                yield "\n".join(lines) + "\n"
                return
            yield text
            yield from blocks
            return
        if first:
            yield first
        yield from blocks
    finally:
        if close:
            stream.close()


def _list(value: Any) -> list[Any]:
    """A notebook field that should be a list; anything else (true, 3, a mapping) reads as empty."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def notebook_lines(text: str) -> list[str] | None:
    """The output lines of a Jupyter notebook (error tracebacks, stderr/stdout, text results), or None."""
    head = text.lstrip("\ufeff \t\r\n")
    if not head.startswith("{") or '"cells"' not in text:
        return None
    try:
        doc = json.loads(head)
    except (ValueError, RecursionError):  # not JSON, or nested ~1000 deep: read it as plain text
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        return None
    from compat.facts import json_too_deep

    if json_too_deep(doc):  # str() of a deeply nested output would recurse; real notebooks nest ~6 levels
        return None
    from compat.explain.engine import strip_ansi

    out: list[str] = []
    for cell in doc["cells"]:
        if not isinstance(cell, dict):
            continue
        for o in _list(cell.get("outputs")):
            if not isinstance(o, dict):
                continue
            kind = o.get("output_type")
            if kind == "error":
                for frame in _list(o.get("traceback")):
                    out.extend(strip_ansi(str(frame)).splitlines())
                ename, evalue = o.get("ename"), o.get("evalue")
                if ename or evalue:
                    out.append(strip_ansi(f"{ename or 'Error'}: {evalue or ''}"))
            elif kind == "stream":
                out.extend(strip_ansi(_text(o.get("text"))).splitlines())
            elif kind in ("execute_result", "display_data"):
                data = o.get("data")
                if isinstance(data, dict):
                    out.extend(strip_ansi(_text(data.get("text/plain"))).splitlines())
    return out


def iter_log_bytes(path: str | None) -> Iterator[bytes]:
    """Raw blocks of the log at `path` ('-' or None: stdin), undecoded (the scanner's fast path);
    a Jupyter notebook yields its output lines, UTF-8 encoded."""
    if path in (None, "-"):
        from compat.inputs import stdin_stream

        stream: IO[bytes] = stdin_stream()
        name = "<stdin>"
        close = False
    else:
        assert path is not None
        stream = _open(path)
        name = repr(path)
        close = True

    def read() -> bytes:
        try:
            return stream.read(BLOCK)
        except OSError as exc:
            raise InputError(f"cannot read log {name}: {exc.strerror or exc}") from None

    try:
        first = read()
        head = first[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
        if (
            head.startswith(b"{")
            and b'"cells"' in first
            and (b'"nbformat"' in first or b'"outputs"' in first)
        ):
            parts = [first]
            size = len(first)
            while size <= NOTEBOOK_MAX:
                raw = read()
                if not raw:
                    break
                parts.append(raw)
                size += len(raw)
            data = b"".join(parts)
            lines = notebook_lines(data.decode("utf-8", errors="replace")) if size <= NOTEBOOK_MAX else None
            if lines is not None:
                yield ("\n".join(lines) + "\n").encode("utf-8")
                return
            first = data
        while first:
            yield first
            first = read()
    finally:
        if close:
            stream.close()
