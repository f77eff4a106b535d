"""What `compat mcp` may read and how much it reads: the path policy of the tools and the bounded stdio wire.

Paths (issue 32, item 1): a tool reads a file only under the roots the client declared (MCP `roots/list`) or, when
it declared none, under the server's working directory; never under /proc, /sys or /dev. Everything else gets one
message, the same whether or not the path exists, decided before anything outside a root is looked at ('..' is
refused from the string alone, and only a path already under a root is resolved).

Messages (issue 32, item 6): a line is read in capped chunks; past MAX_MESSAGE the rest of it is discarded, and a
line that is too large, not JSON, nested too deeply or not a JSON-RPC message is answered with a JSON-RPC error
carrying the request's id when it can be recovered. No request goes unanswered.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import stat
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Optional
from urllib.parse import unquote, urlparse

MAX_MESSAGE = 8 * 1024 * 1024
"""Largest JSON-RPC message read (bytes): a 4 MiB inline log, JSON-escaped, fits."""
MAX_DEPTH = 32
"""Deepest nesting accepted in a message: compat's tools take flat strings and booleans."""
FORBIDDEN = ("/proc", "/sys", "/dev")
CHUNK = 64 * 1024
ROOTS_TIMEOUT_S = 5.0

ROOTS: contextvars.ContextVar[Optional[tuple[str, ...]]] = contextvars.ContextVar(
    "compat_mcp_roots", default=None
)
"""The client's roots for the tool call in progress (None: it declared none, the working directory counts)."""


class ToolInputError(ValueError):
    """A tool argument that compat refuses (shown to the caller as the tool's error)."""


def roots() -> tuple[str, ...]:
    """The directories a tool may read under: the client's roots, or the server's working directory."""
    declared = ROOTS.get()
    return declared if declared else (os.getcwd(),)


def refused(name: str) -> ToolInputError:
    """The one answer for a path outside the roots: it says nothing about whether the path exists."""
    return ToolInputError(
        f"{name}: not readable through compat mcp: only files under the client's roots (or, without roots, "
        "the server's working directory) are read, never under /proc, /sys or /dev, and never through '..'"
    )


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def check_path(name: str, value: str, directory: bool = False) -> str:
    """The real path of `value` when a tool may read it (a regular file, or a directory with `directory`);
    ToolInputError otherwise. Nothing outside a root is stat'ed, opened or resolved."""
    if ".." in re.split(r"[/\\]+", value):
        raise refused(name)
    lexical = os.path.normpath(os.path.join(os.getcwd(), value))
    tops = [os.path.normpath(os.path.abspath(r)) for r in roots()]
    if any(_under(lexical, f) for f in FORBIDDEN) or not any(_under(lexical, t) for t in tops):
        raise refused(name)
    real = os.path.realpath(lexical)  # resolves links inside a root; where they lead is checked next
    real_tops = [os.path.realpath(t) for t in tops]
    if any(_under(real, f) for f in FORBIDDEN) or not any(_under(real, t) for t in real_tops):
        raise refused(name)
    from compat.inputs import refusal

    try:
        st = os.stat(real)
    except OSError:
        raise ToolInputError(f"{name}: {value!r} does not exist or cannot be read") from None
    if directory and stat.S_ISDIR(st.st_mode):
        return real
    why = refusal(st)  # a FIFO in a root would hold a worker until the tool's timeout
    if why is not None:
        raise ToolInputError(f"{name}: {value!r} {why}")
    return real


def root_paths(uris: Sequence[str]) -> tuple[str, ...]:
    """The local directories of `file://` root URIs (other schemes name nothing compat can read)."""
    out = []
    for uri in uris:
        u = urlparse(uri)
        if u.scheme == "file" and u.netloc in ("", "localhost") and u.path.startswith("/"):
            out.append(os.path.normpath(unquote(u.path)))
    return tuple(out)


ASK = "ask"
"""client_roots' answer when the client must be asked first (protocol 2026-07-28: an InputRequiredResult)."""


async def client_roots(ctx: Any) -> Any:
    """The roots the client declared, None when it declared none (or does not answer), or ASK.

    Up to protocol 2025-11-25 the server asks with a `roots/list` request; from 2026-07-28 it answers the tool call
    with an InputRequiredResult asking for them, and the client retries the call with its roots (ASK)."""
    import warnings

    import anyio
    from mcp import types

    try:
        caps = ctx.client_capabilities
        if caps is None or caps.roots is None:
            return None
        version = ctx.protocol_version or ""
        if version >= "2026-07-28":
            answer = (ctx.input_responses or {}).get("roots")
            if isinstance(answer, types.ListRootsResult):
                return root_paths([str(r.uri) for r in answer.roots]) or None
            return ASK
        with warnings.catch_warnings(), anyio.fail_after(ROOTS_TIMEOUT_S):
            warnings.simplefilter(
                "ignore"
            )  # roots are deprecated in the newest protocol; clients still send them
            result = await ctx.session.list_roots()
        return root_paths([str(r.uri) for r in result.roots]) or None
    except Exception:  # no back channel, a timeout, a malformed answer: the working directory counts
        return None


def ask_for_roots() -> Any:
    """The InputRequiredResult that asks the client for its roots (protocol 2026-07-28)."""
    from mcp import types

    return types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()})


# ---------------------------------------------------------------- the bounded wire


_ID_KEY = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,18})\s*[,}]')


def recover_id(head: bytes) -> Any:
    """The request id of a message from its first bytes (the top-level "id"), or None."""
    depth = 0
    in_str = False
    i = 0
    n = len(head)
    while i < n:
        c = head[i]
        if in_str:
            if c == 0x5C:  # backslash
                i += 1
            elif c == 0x22:
                in_str = False
        elif c == 0x22:
            if depth == 1:
                m = _ID_KEY.match(head, i)
                if m is not None:
                    try:
                        value = json.loads(m.group(1))
                    except ValueError:
                        return None
                    return value if isinstance(value, (str, int)) else None
            in_str = True
        elif c in (0x7B, 0x5B):
            depth += 1
        elif c in (0x7D, 0x5D):
            depth -= 1
        i += 1
    return None


def _depth_over(doc: Any, limit: int) -> bool:
    stack = [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if d > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return False


def error_reply(request_id: Any, code: int, message: str) -> bytes:
    """One JSON-RPC error response line."""
    rid = request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    return (
        json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}) + "\n"
    ).encode()


def check_line(line: bytes) -> Optional[bytes]:
    """None when `line` is a JSON-RPC message the SDK may take; else the error reply to send instead."""
    try:
        doc = json.loads(line)
    except RecursionError:
        return error_reply(
            recover_id(line[:CHUNK]), -32600, f"message nested more than {MAX_DEPTH} deep: refused"
        )
    except ValueError:
        return error_reply(recover_id(line[:CHUNK]), -32700, "parse error: the message is not JSON")
    rid = doc.get("id") if isinstance(doc, dict) else None
    if _depth_over(doc, MAX_DEPTH):
        return error_reply(rid, -32600, f"message nested more than {MAX_DEPTH} deep: refused")
    from mcp import types

    try:
        types.jsonrpc_message_adapter.validate_python(doc, by_name=False)
    except Exception:
        return error_reply(rid, -32600, "invalid request: not a JSON-RPC 2.0 message")
    return None


class LineReader:
    """Lines of a file descriptor read in CHUNK-sized reads; a line over `cap` bytes is discarded to its end."""

    def __init__(self, fd: int, cap: int = MAX_MESSAGE) -> None:
        self.fd = fd
        self.cap = cap
        self.buf = bytearray()
        self.eof = False

    def next_line(self) -> Optional[tuple[bytes, bool]]:
        """(line, too_big) — for a too big line, its first CHUNK bytes; None at the end of input. Blocking."""
        scanned = 0  # bytes of buf already searched for a newline
        while True:
            nl = self.buf.find(b"\n", scanned)
            scanned = len(self.buf)
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                return line, False
            if len(self.buf) > self.cap:
                head = bytes(self.buf[:CHUNK])
                self.buf.clear()
                self._discard_to_newline()
                return head, True
            if self.eof:
                if self.buf:
                    line = bytes(self.buf)
                    self.buf.clear()
                    return line, False
                return None
            data = os.read(self.fd, CHUNK)
            if not data:
                self.eof = True
            self.buf += data

    def _discard_to_newline(self) -> None:
        while True:
            data = os.read(self.fd, CHUNK)
            if not data:
                self.eof = True
                return
            nl = data.find(b"\n")
            if nl >= 0:
                self.buf += data[nl + 1 :]
                return


class _Wire:
    """The client's end: whole lines written under one lock (the SDK's replies and ours never interleave)."""

    def __init__(self, fd: int) -> None:
        import anyio

        self.fd = fd
        self.lock = anyio.Lock()

    async def send(self, data: bytes) -> None:
        import anyio

        async with self.lock:
            await anyio.to_thread.run_sync(self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    async def write(self, text: str) -> None:  # the SDK writes a message, then flushes
        await self.send(text.encode("utf-8", "replace"))

    async def flush(self) -> None:
        return None


class _Lines:
    """The SDK's stdin: the lines that pass check_line, as text; the others are answered here."""

    def __init__(self, reader: LineReader, wire: _Wire) -> None:
        self.reader = reader
        self.wire = wire

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            got = await anyio.to_thread.run_sync(self.reader.next_line)
            if got is None:
                raise StopAsyncIteration
            line, too_big = got
            if too_big:
                await self.wire.send(
                    error_reply(
                        recover_id(line),
                        -32600,
                        f"message larger than {MAX_MESSAGE >> 20} MiB: refused (give a log as a file path)",
                    )
                )
                continue
            if not line.strip():
                continue
            reply = check_line(line)
            if reply is not None:
                await self.wire.send(reply)
                continue
            return line.decode("utf-8", "replace")


@asynccontextmanager
async def bounded_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport over fds 0 and 1 with bounded reads; while serving, fd 0 reads the null device
    and fd 1 writes to stderr, so that nothing a tool starts can touch the wire."""
    from mcp.server.stdio import stdio_server

    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    wire = _Wire(wire_out)
    try:
        async with stdio_server(stdin=_Lines(LineReader(wire_in), wire), stdout=wire) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (saved_in, saved_out, wire_out):
            os.close(fd)
