"""`compat mcp`: serve check, suggest, explain, dockerfile and doctor to AI assistants over MCP (stdio)."""

from __future__ import annotations

import typer

from compat.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_cmd() -> None:
        """Run an MCP server on stdin/stdout exposing compat's read-only tools.

        Example: add {"command": "compat", "args": ["mcp"]} to your MCP client's server list.
        Needs the optional extra: pip install 'compat[mcp]'.
        """
        try:
            import mcp.server.mcpserver  # noqa: F401
        except ImportError:
            raise InputError(
                "compat mcp needs the MCP Python SDK: pip install 'compat[mcp]' (Python 3.10 or newer)"
            ) from None
        from compat.mcp_server import serve

        serve()
