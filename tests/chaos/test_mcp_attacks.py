"""`compat mcp` under attack (issue 32, items 1, 5 and 6): paths outside the roots, kernel files, FIFOs, huge and
deeply nested messages. Every request is answered, quickly, within the memory cap for hostile input, and no
answer carries a file's bytes or tells whether a path outside the roots exists."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.harness import INPUT_MEMORY_CAP_MIB, Run, assert_contract, run

if importlib.util.find_spec("mcp") is None:  # find_spec: importing the SDK at collection costs every worker
    pytest.skip("the optional [mcp] extra is not installed", allow_module_level=True)

SECRET = "ghp_0123456789abcdefSECRET"
CAP_S = 40.0
SERVE = "import os, sys; os.chdir(sys.argv[1]); from compat.cli import main; main(['mcp'])"


def _init() -> list[bytes]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "chaos", "version": "1"},
        },
    }
    return [json.dumps(init).encode() + b"\n", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n']


def _call(rid: int, tool: str, arguments: dict[str, Any]) -> bytes:
    msg = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return json.dumps(msg).encode() + b"\n"


def _serve(cwd: Path, chunks: Any, expect: set[Any]) -> tuple[Run, dict[Any, dict[str, Any]]]:
    """Run `compat mcp` in `cwd`, feed it the byte chunks (an iterable), and close its stdin once every id in
    `expect` is answered (or after CAP_S, as a client that gives up); its replies by id."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    replies: dict[Any, dict[str, Any]] = {}
    done = threading.Event()

    def feed() -> None:
        with os.fdopen(in_w, "wb") as f:
            try:
                for c in chunks:
                    f.write(c)
                    f.flush()
            except OSError:
                return
            done.wait(CAP_S)

    def collect() -> None:
        with os.fdopen(out_r, "rb") as f:
            for line in f:
                doc = json.loads(line)
                replies[doc.get("id")] = doc
                if expect <= set(replies):
                    done.set()

    threading.Thread(target=feed, daemon=True).start()
    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        r = run(
            [sys.executable, "-c", SERVE, str(cwd)], python=False, stdin=in_r, stdout=out_w, cap_s=CAP_S + 10
        )
    finally:
        os.close(in_r)
        os.close(out_w)
    reader.join(10)
    return r, replies


def _text(reply: dict[str, Any]) -> str:
    return str(reply["result"]["content"][0]["text"]) if "result" in reply else json.dumps(reply["error"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    (p / "creds").write_text(f"https://alice:{SECRET}@github.com\n")
    os.mkfifo(p / "fifo")
    (p / "shadow").symlink_to("/etc/shadow")
    (p / "kmsg").symlink_to("/proc/kmsg")
    (p / "zero").symlink_to("/dev/zero")
    return p


OUTSIDE = [
    "/etc/shadow",
    "/etc/no-such-file",
    "/root/.git-credentials",
    "/proc/kmsg",
    "/proc/self/pagemap",
    "/proc/self/environ",
    "/dev/zero",
    "/dev/kmsg",
    "/sys/kernel/notes",
    "shadow",
    "kmsg",
    "zero",
    "../project/creds",
    "no-such/../../etc/shadow",
]


def test_paths_outside_the_roots_get_one_message(project: Path) -> None:
    calls = [_call(i, tool, {"path": p}) for i, p in enumerate(OUTSIDE, 1) for tool in ("dockerfile",)]
    calls += [_call(100 + i, "explain", {"path": p}) for i, p in enumerate(OUTSIDE, 1)]
    ids = {*range(1, len(OUTSIDE) + 1), *range(101, 101 + len(OUTSIDE))}
    r, replies = _serve(project, [*_init(), *calls], ids)
    assert_contract(r, codes=(0,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    for tool, first in (("dockerfile", 1), ("explain", 101)):
        texts = {_text(replies[i]) for i in range(first, first + len(OUTSIDE))}
        assert len(texts) == 1, texts  # the same answer whether the path exists or not
        assert f"tool {tool}: path: not readable through compat mcp" in texts.pop()


def test_files_inside_the_root_never_leak(project: Path) -> None:
    r, replies = _serve(
        project,
        [
            *_init(),
            _call(1, "dockerfile", {"path": "creds"}),
            _call(2, "explain", {"path": "fifo"}),
            _call(3, "dockerfile", {"path": "fifo"}),
        ],
        {1, 2, 3},
    )
    assert_contract(r, codes=(0,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert SECRET not in json.dumps(replies) and "alice" not in json.dumps(replies)
    assert "is not a Dockerfile" in _text(replies[1])
    assert "FIFO" in _text(replies[2]) and "FIFO" in _text(replies[3])


def test_a_gigabyte_inline_log_is_answered_within_the_memory_cap(tmp_path: Path) -> None:
    head = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "explain", "arguments": {"log": "'
    block = b"x" * (1 << 20)

    def chunks() -> Any:
        yield from _init()
        yield head
        for _ in range(1024):
            yield block
        yield b'"}}}\n'
        yield _call(8, "check", {"driver": "--help"})

    r, replies = _serve(tmp_path, chunks(), {7, 8})
    assert_contract(r, codes=(0,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert replies[7]["error"]["code"] == -32600 and "larger than" in replies[7]["error"]["message"]
    assert "not a value" in _text(replies[8])  # the server still answers afterwards


@pytest.mark.parametrize("depth", [300, 100_000])
def test_deep_arguments_are_answered(tmp_path: Path, depth: int) -> None:
    deep = b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "explain", "arguments": {"a": '
    deep += b"[" * depth + b"]" * depth + b"}}}\n"
    r, replies = _serve(
        tmp_path, [*_init(), deep, b"not json\n", _call(10, "check", {"driver": "--help"})], {9, 10}
    )
    assert_contract(r, codes=(0,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert replies[9]["error"]["code"] == -32600 and "nested" in replies[9]["error"]["message"]
    assert replies[None]["error"]["code"] == -32700
    assert "not a value" in _text(replies[10])
