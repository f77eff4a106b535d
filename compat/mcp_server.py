"""`compat mcp`: an MCP server over stdio exposing check, suggest, explain, dockerfile and doctor as read-only tools.

Each tool runs compat's own CLI (`python -m compat CMD ... --json`) in a child process with a timeout and a cap
on its output, and returns the same JSON document the CLI prints. So the tools answer exactly what the
commands answer, a crash in a probe or a framework never takes the server down, and every file argument goes
through the CLI's own capped reader. The tools only read: none runs a command the caller supplies, installs
anything or writes outside compat's cache directory (`doctor` is run with `--no-smoke` unless asked, and never
with `--save-snapshot`). Arguments are validated here before they become argv: no value may start with '-'
(so a value can never become a flag), contain a NUL or a newline, or exceed a length cap.

Needs the optional extra: `pip install 'compat[mcp]'` (the official MCP Python SDK, Python >= 3.10).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from typing import Any

from compat.mcp_policy import ToolInputError as ToolInputError  # re-exported: part of the tools API
from compat.mcp_policy import check_path

MAX_VALUE = 256
"""Longest value accepted for a flag (a version, a GPU name, a path)."""
MAX_LOG = 4 * 1024 * 1024
"""Largest log text `explain` accepts inline (bytes, UTF-8)."""
MAX_OUTPUT = 16 * 1024 * 1024
"""Largest JSON document read back from a command."""
TIMEOUTS = {"check": 60.0, "suggest": 90.0, "explain": 120.0, "dockerfile": 60.0, "doctor": 300.0}

_SAFE = re.compile(r"^[^\x00-\x1f\x7f-]")


def _value(name: str, value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolInputError(f"{name}: expected a string")
    if len(value) > MAX_VALUE:
        raise ToolInputError(f"{name}: longer than {MAX_VALUE} characters")
    if not _SAFE.match(value) or any(c in value for c in "\x00\n\r"):
        raise ToolInputError(
            f"{name}: {value[:40]!r} is not a value (it may not start with '-' or hold control characters)"
        )
    return value


def _flags(**kwargs: str | None) -> list[str]:
    argv: list[str] = []
    for key, raw in kwargs.items():
        value = _value(key, raw)
        if value is not None:
            argv += ["--" + key.replace("_", "-"), value]
    return argv


def run_compat(command: str, argv: list[str], stdin: bytes | None = None) -> dict[str, Any]:
    """Run `python -m compat COMMAND ARGV --json` with a timeout; the JSON document, or ToolInputError."""
    from compat.target import find_target, handoff_env

    full = [sys.executable, "-m", "compat", command, *argv, "--json"]
    # The server's choice of interpreter, not the child's own: the child runs as `python -m compat`.
    env = dict(os.environ, NO_COLOR="1", **handoff_env(find_target()))
    env.pop("FORCE_COLOR", None)
    try:
        proc = subprocess.Popen(  # argv list, no shell; stdin closed unless a log is piped in
            full,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolInputError(f"could not start compat {command}: {exc}") from None
    try:
        out, err = proc.communicate(stdin, timeout=TIMEOUTS[command])
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise ToolInputError(
            f"compat {command} took longer than {TIMEOUTS[command]:.0f} s and was stopped"
        ) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    if len(out) > MAX_OUTPUT:
        raise ToolInputError(f"compat {command} printed more than {MAX_OUTPUT} bytes")
    text_err = err.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode not in (0, 1):
        line = text_err[-1] if text_err else f"exit status {proc.returncode}"
        raise ToolInputError(f"compat {command}: {line[:500]}")
    try:
        doc = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        raise ToolInputError(f"compat {command} did not print a JSON document") from None
    if not isinstance(doc, dict):
        raise ToolInputError(f"compat {command} did not print a JSON object")
    doc.setdefault("exit_code", proc.returncode)
    return doc


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that survives SIGKILL
        pass


# The tool functions: plain, typed, documented — the MCP SDK derives the tools' input schemas from them.


def check(
    driver: str | None = None,
    gpu: str | None = None,
    cc: str | None = None,
    cuda: str | None = None,
    cudnn: str | None = None,
    torch: str | None = None,
    tensorflow: str | None = None,
    python: str | None = None,
    os_name: str | None = None,
    require_gpu: bool = False,
    target_driver: str | None = None,
) -> dict[str, Any]:
    """What-if check of a GPU stack (as `compat check --json`): findings with fixes, verdict, exit_code.

    Versions as the CLI takes them: driver '535.104.05', gpu 'RTX 4090', cc '8.9', cuda '12.1', torch '2.5.1+cu124',
    tensorflow '2.15', python '3.11', os_name 'linux' or 'windows'.
    """
    argv = _flags(
        driver=driver,
        gpu=gpu,
        cc=cc,
        cuda=cuda,
        cudnn=cudnn,
        torch=torch,
        tensorflow=tensorflow,
        python=python,
        target_driver=target_driver,
    )
    argv += _flags(os=os_name)
    if require_gpu:
        argv.append("--require-gpu")
    if not argv:
        raise ToolInputError(
            "nothing to check: give at least one of driver, gpu, cc, cuda, cudnn, torch, tensorflow, python"
        )
    return run_compat("check", argv)


def suggest(
    driver: str | None = None,
    gpu: str | None = None,
    cc: str | None = None,
    python: str | None = None,
    os_name: str | None = None,
    probe: bool = False,
) -> dict[str, Any]:
    """The newest PyTorch and TensorFlow that work on these facts, with install commands (`compat suggest --json`).

    With probe=false (the default) nothing is read from this machine: only the facts given count.
    """
    argv = _flags(driver=driver, gpu=gpu, cc=cc, python=python) + _flags(os=os_name)
    if not probe:
        argv.append("--no-probe")
    return run_compat("suggest", argv)


def explain(log: str | None = None, path: str | None = None) -> dict[str, Any]:
    """Why did this run die: diagnoses of a crash log (`compat explain --json`), from `log` text or a file `path`."""
    if (log is None) == (path is None):
        raise ToolInputError("give exactly one of log (the text) or path (a log file)")
    if log is not None:
        data = log.encode("utf-8", "replace")
        if len(data) > MAX_LOG:
            raise ToolInputError(f"log: larger than {MAX_LOG} bytes; pass a path instead")
        return run_compat("explain", ["-"], stdin=data)
    file = _value("path", path)
    assert file is not None
    return run_compat("explain", [check_path("path", file)])


def dockerfile(
    path: str,
    target_driver: str | None = None,
    target_gpu: str | None = None,
    target_cc: str | None = None,
    context: str | None = None,
) -> dict[str, Any]:
    """Static check of a Dockerfile for GPU training (`compat dockerfile --json`)."""
    file = _value("path", path)
    if file is None:
        raise ToolInputError("path: the Dockerfile to check is required")
    ctx = _value("context", context)
    argv = _flags(target_driver=target_driver, target_gpu=target_gpu, target_cc=target_cc)
    if ctx is not None:
        argv += ["--context", check_path("context", ctx, directory=True)]
    real = check_path("path", file, directory=True)
    if os.path.isdir(real):  # the CLI reads DIR/Dockerfile: the same policy holds (no link out of the root)
        real = check_path("path", os.path.join(real, "Dockerfile"))
    return run_compat("dockerfile", [*argv, real])


def doctor(smoke: bool = False) -> dict[str, Any]:
    """Live diagnosis of this machine (`compat doctor --json`); smoke=true also trains a tiny model (slower)."""
    return run_compat("doctor", [] if smoke else ["--no-smoke"])


TOOLS = (check, suggest, explain, dockerfile, doctor)


def build_server() -> Any:
    """The MCP server object with every tool registered (imports the SDK; call only from `compat mcp`)."""
    import inspect

    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    from compat import mcp_policy
    from compat.about import __version__

    class Server(MCPServer):  # type: ignore[misc]
        async def run_stdio_async(self) -> None:
            """The SDK's stdio loop over compat's bounded wire (mcp_policy.bounded_stdio)."""
            async with mcp_policy.bounded_stdio() as (read_stream, write_stream):
                low = self._lowlevel_server
                await low.run(read_stream, write_stream, low.create_initialization_options())

    server = Server(
        "compat",
        version=__version__,
        instructions=(
            "compat answers whether an NVIDIA GPU stack (driver, CUDA, cuDNN, PyTorch/TensorFlow wheels, GPU) can "
            "train, and why not. Every tool is read-only and returns compat's JSON document. Files are read only "
            "under the client's roots (or the server's working directory)."
        ),
    )
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    for fn in TOOLS:

        def make(f: Any) -> Any:
            async def tool(ctx: Context, **kwargs: Any) -> dict[str, Any]:  # type: ignore[type-arg]
                reads = any(
                    kwargs.get(k) for k in ("path", "context")
                )  # only a file argument needs the roots
                roots = await mcp_policy.client_roots(ctx) if reads else None
                if roots == mcp_policy.ASK:
                    return mcp_policy.ask_for_roots()  # type: ignore[no-any-return]

                def call() -> dict[str, Any]:
                    mcp_policy.ROOTS.set(roots)  # this thread's context: the roots of this call only
                    return dict(f(**kwargs))

                try:
                    return await anyio.to_thread.run_sync(call)
                except ToolInputError as exc:
                    raise ToolError(str(exc)) from None

            sig = inspect.signature(f)
            ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
            tool.__name__ = f.__name__
            tool.__doc__ = f.__doc__
            tool.__signature__ = sig.replace(parameters=[*sig.parameters.values(), ctx_param])  # type: ignore[attr-defined]
            tool.__annotations__ = {**f.__annotations__, "ctx": Context}
            return tool

        server.tool(name=fn.__name__, annotations=read_only)(make(fn))
    return server


def serve() -> None:
    """Run the server over stdio until the client closes it."""
    build_server().run("stdio")
