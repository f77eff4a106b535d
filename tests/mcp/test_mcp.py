"""`compat mcp`: a real MCP client session over stdio lists the tools and calls them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from compat import mcp_server
from compat.mcp_server import ToolInputError

ROOT = Path(__file__).resolve().parents[2]

# find_spec, not importorskip: importing mcp (~1.5 s) at collection would cost every xdist worker, not only the one
# that runs these tests.
if importlib.util.find_spec("mcp") is None:
    pytest.skip("the optional [mcp] extra is not installed", allow_module_level=True)


def _session(coro_fn: Any, roots: tuple[Path, ...] = (), mode: str = "auto") -> Any:
    """Talk to `compat mcp` (working directory: the repository); `roots`: the roots the client declares."""
    import anyio
    from mcp import Client, types
    from mcp.client.stdio import StdioServerParameters

    async def list_roots(context: Any) -> Any:
        uris: list[Any] = [r.resolve().as_uri() for r in roots]
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in uris])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "compat", "mcp"],
        env={"PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
        cwd=str(ROOT),
    )

    async def main() -> Any:
        async with Client(params, list_roots_callback=list_roots if roots else None, mode=mode) as client:
            return await coro_fn(client)

    return anyio.run(main)


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        doc = result.structured_content
        return doc.get("result", doc) if set(doc) == {"result"} else doc
    return json.loads(result.content[0].text)


def test_real_client_lists_tools_and_calls_check_and_explain(tmp_path: Path) -> None:
    log = tmp_path / "crash.log"
    log.write_text(
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n", encoding="utf-8"
    )

    async def talk(client: Any) -> Any:
        tools = await client.list_tools()
        check = await client.call_tool(
            "check", {"driver": "470.82.01", "torch": "2.5.1+cu121", "gpu": "A100", "python": "3.11"}
        )
        explain = await client.call_tool("explain", {"path": str(log)})
        bad = await client.call_tool("check", {"driver": "--help"})
        return tools, check, explain, bad

    tools, check, explain, bad = _session(talk, roots=(tmp_path,))
    names = {t.name for t in tools.tools}
    assert names == {"check", "suggest", "explain", "dockerfile", "doctor"}
    assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools.tools)
    doc = _structured(check)
    assert doc["schema_version"] == 1
    assert doc["verdict"] == "error"
    assert doc["exit_code"] == 1
    assert any(f["id"] == "driver.cuda" for f in doc["findings"])
    diag = _structured(explain)
    assert diag["schema_version"] == 1
    assert json.dumps(diag).find("driver") >= 0
    assert bad.is_error
    assert "not a value" in bad.content[0].text


def test_values_never_become_flags() -> None:
    with pytest.raises(ToolInputError, match="not a value"):
        mcp_server.check(driver="--matrix=/etc")
    with pytest.raises(ToolInputError, match="control"):
        mcp_server.check(gpu="A100\n--json")
    with pytest.raises(ToolInputError, match="longer"):
        mcp_server.check(gpu="A" * 1000)
    with pytest.raises(ToolInputError, match="nothing to check"):
        mcp_server.check()
    with pytest.raises(ToolInputError, match="exactly one"):
        mcp_server.explain()


def test_tool_returns_the_cli_document() -> None:
    doc = mcp_server.check(driver="550.54.15", torch="2.5.1", gpu="RTX 4090", python="3.11", os_name="linux")
    assert doc["exit_code"] == 0
    assert doc["verdict"] in ("ok", "warning")
    sug = mcp_server.suggest(driver="535.104.05", gpu="RTX 4090", python="3.11", os_name="linux")
    assert sug["schema_version"] == 1
    assert sug["torch"]


def test_input_error_from_cli_is_a_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # without client roots, the server's working directory is the one root
    (tmp_path / "notes.txt").write_text("https://alice:ghp_0123456789abcdef@github.com\n")
    with pytest.raises(ToolInputError, match="compat dockerfile") as info:
        mcp_server.dockerfile("notes.txt")
    assert "ghp_" not in str(info.value) and "alice" not in str(info.value)
    with pytest.raises(ToolInputError, match="does not exist"):
        mcp_server.dockerfile(str(tmp_path / "missing.Dockerfile"))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_paths_outside_the_client_roots_are_refused(tmp_path: Path, mode: str) -> None:
    """Roots asked in both protocols: `roots/list` (legacy) and the input request of 2026-07-28 (auto)."""
    inside = tmp_path / "crash.log"
    inside.write_text("RuntimeError: CUDA error: out of memory\n", encoding="utf-8")

    async def talk(client: Any) -> Any:
        ok = await client.call_tool("explain", {"path": str(inside)})
        repo = await client.call_tool("explain", {"path": str(ROOT / "README.md")})  # the cwd, not a root now
        return ok, repo

    ok, repo = _session(talk, roots=(tmp_path,), mode=mode)
    assert _structured(ok)["schema_version"] == 1
    assert repo.is_error and "not readable through compat mcp" in repo.content[0].text
