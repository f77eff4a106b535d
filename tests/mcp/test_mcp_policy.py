"""`compat mcp` reads only under the client's roots, bounds every message and answers every request
(issue 32, items 1 and 6)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

from compat import mcp_policy, mcp_server
from compat.mcp_policy import ToolInputError, check_line, check_path, recover_id

ROOT = Path(__file__).resolve().parents[2]
SECRET = "ghp_0123456789abcdefSECRET"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A client root holding a Dockerfile, a credentials file, a FIFO and links out of it."""
    r = tmp_path / "project"
    r.mkdir()
    (r / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    (r / "creds").write_text(f"https://alice:{SECRET}@github.com\n")
    os.mkfifo(r / "fifo")
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    (r / "out-link").symlink_to(outside)
    (r / "shadow-link").symlink_to("/etc/shadow")
    (r / "kmsg-link").symlink_to("/proc/kmsg")
    monkeypatch.chdir(tmp_path)  # the working directory is not a root while the client declared one
    token = mcp_policy.ROOTS.set((str(r),))
    yield r
    mcp_policy.ROOTS.reset(token)


OUTSIDE = [
    "/etc/shadow",
    "/etc/no-such-file",
    "/proc/kmsg",
    "/proc/self/pagemap",
    "/dev/zero",
    "/sys/kernel/notes",
    "outside.txt",
    "project/../outside.txt",
    "project/out-link",
    "project/shadow-link",
    "project/kmsg-link",
    "project/no-such/../../outside.txt",
]


@pytest.mark.parametrize("path", OUTSIDE)
def test_outside_the_roots_one_message_whether_or_not_it_exists(root: Path, path: str) -> None:
    with pytest.raises(ToolInputError) as info:
        check_path("path", path)
    assert str(info.value) == str(mcp_policy.refused("path"))
    assert SECRET not in str(info.value)


def test_inside_the_roots(root: Path) -> None:
    assert check_path("path", str(root / "Dockerfile")) == str((root / "Dockerfile").resolve())
    assert check_path("context", str(root), directory=True) == str(root.resolve())
    with pytest.raises(ToolInputError, match="FIFO"):  # would hold a worker until the tool's timeout
        check_path("path", str(root / "fifo"))
    with pytest.raises(ToolInputError, match="does not exist"):
        check_path("path", str(root / "missing"))
    with pytest.raises(ToolInputError, match="directory"):
        check_path("path", str(root))


def test_a_root_of_slash_still_never_reads_proc_sys_dev(tmp_path: Path) -> None:
    token = mcp_policy.ROOTS.set(("/",))
    try:
        for p in ("/proc/self/status", "/dev/null", "/sys/kernel/notes", "/proc/../proc/kmsg"):
            with pytest.raises(ToolInputError, match="not readable through compat mcp"):
                check_path("path", p)
        f = tmp_path / "x.log"
        f.write_text("x")
        assert check_path("path", str(f)) == str(f.resolve())
    finally:
        mcp_policy.ROOTS.reset(token)


def test_without_roots_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.log").write_text("x")
    assert check_path("path", "a.log") == str((tmp_path / "a.log").resolve())
    with pytest.raises(ToolInputError, match="not readable"):
        check_path("path", "/etc/passwd")


def test_tools_refuse_before_running_compat(root: Path) -> None:
    for call in (
        lambda: mcp_server.dockerfile("/etc/shadow"),
        lambda: mcp_server.dockerfile(str(root / "Dockerfile"), context="/etc"),
        lambda: mcp_server.explain(path="/proc/kmsg"),
        lambda: mcp_server.explain(path=str(root / "shadow-link")),
    ):
        with pytest.raises(ToolInputError, match="not readable through compat mcp"):
            call()
    linked = root / "linked"
    linked.mkdir()
    (linked / "Dockerfile").symlink_to("/etc/shadow")
    with pytest.raises(ToolInputError, match="not readable through compat mcp"):
        mcp_server.dockerfile(str(linked))  # the directory is in the root, its Dockerfile leads out
    with pytest.raises(ToolInputError, match="compat dockerfile") as info:
        mcp_server.dockerfile(str(root / "creds"))
    assert SECRET not in str(info.value) and "alice" not in str(info.value)


def test_root_uris() -> None:
    assert mcp_policy.root_paths(
        ["file:///home/a/proj", "file://localhost/srv/x%20y", "https://x/y", "file:rel"]
    ) == (
        "/home/a/proj",
        "/srv/x y",
    )


# ------------------------------------------------------------------ the wire


def test_recover_id_reads_only_the_top_level_id() -> None:
    assert recover_id(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"') == 7
    assert recover_id(b'{"params":{"id":99,"arguments":{"log":"aaa') is None
    assert recover_id(b'{"params":{"id":99},"id":"abc","method":"x"') == "abc"
    assert recover_id(b'{"method":"x","params":{"log":"\\"id\\": 5, "},"id":3}') == 3
    assert recover_id(b"garbage") is None


def _nested(depth: int) -> dict[str, Any]:
    args: dict[str, Any] = {"path": "x"}
    for _ in range(depth):
        args = {"a": args}
    return args


@pytest.mark.parametrize("depth", [300, 100_000])
def test_deep_message_is_answered_with_its_id(depth: int) -> None:
    msg = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "explain", "arguments": None},
    }
    line = json.dumps(msg).replace("null", json.dumps(_nested(300)) if depth == 300 else "{" * 0 + "null")
    if depth != 300:
        line = line.replace('"arguments": null', '"arguments": ' + "[" * depth + "]" * depth)
    reply = check_line(line.encode())
    assert reply is not None
    doc = json.loads(reply)
    assert doc["id"] == 4 and doc["error"]["code"] == -32600 and "nested" in doc["error"]["message"]


def test_not_json_and_not_jsonrpc_are_answered() -> None:
    doc = json.loads(check_line(b'{"id": 5, "method": ') or b"{}")
    assert doc["error"]["code"] == -32700 and doc["id"] == 5
    doc = json.loads(check_line(b'{"id": 6, "hello": 1}') or b"{}")
    assert doc["error"]["code"] == -32600 and doc["id"] == 6
    assert check_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}') is None


def test_line_reader_discards_past_the_cap() -> None:
    r, w = os.pipe()
    big = b'{"id": 9, "log": "' + b"x" * (3 << 20) + b'"}\n'

    def feed() -> None:
        with os.fdopen(w, "wb") as f:
            f.write(b"first\n" + big + b"last\n")

    threading.Thread(target=feed, daemon=True).start()
    reader = mcp_policy.LineReader(r, cap=1 << 20)
    assert reader.next_line() == (b"first", False)
    head, too_big = reader.next_line() or (b"", False)
    assert too_big and len(head) <= mcp_policy.CHUNK and recover_id(head) == 9
    assert reader.next_line() == (b"last", False)
    assert reader.next_line() is None
    os.close(r)


# ------------------------------------------------------------------ a real server over stdio


def _server(cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "compat", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(cwd),
        env=dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1"),
    )


def _reply(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> Optional[dict[str, Any]]:
    out: list[bytes] = []
    assert proc.stdout is not None
    t = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    t.start()
    t.join(timeout)
    return json.loads(out[0]) if out and out[0] else None


def _send(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()


@pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None, reason="the optional [mcp] extra is not installed"
)
def test_every_request_gets_an_answer(tmp_path: Path) -> None:
    proc = _server(tmp_path)
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        _send(proc, json.dumps(init).encode() + b"\n")
        assert (_reply(proc) or {}).get("id") == 1
        _send(proc, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        deep = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "explain", "arguments": _nested(300)},
        }
        _send(proc, json.dumps(deep).encode() + b"\n")
        r = _reply(proc)
        assert r is not None and r["id"] == 2 and "nested" in r["error"]["message"]
        head = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "explain", "arguments": {"log": "'
        _send(proc, head + b"x" * (mcp_policy.MAX_MESSAGE + (1 << 20)) + b'"}}}\n')
        r = _reply(proc)
        assert r is not None and r["id"] == 3 and "larger than" in r["error"]["message"]
        call = {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "dockerfile", "arguments": {"path": "/etc/shadow"}},
        }
        _send(proc, json.dumps(call).encode() + b"\n")
        r = _reply(proc)
        assert r is not None and r["id"] == 4 and r["result"]["isError"]
        assert "not readable through compat mcp" in r["result"]["content"][0]["text"]
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
