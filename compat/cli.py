"""The `compat` command line: argument parsing, exit codes and the one-line error contract.

Sub-commands are registered in one table, `COMMANDS`, and imported only when invoked (or when their own
`--help` is asked for): `compat check` never imports the doctor, the fleet or the smoke job, and `compat --help`
imports no command at all. Adding a command is one line in that table plus a module with `register(app)`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any, NamedTuple, Optional

import typer
from typer.core import TyperGroup

try:  # typer >= 0.26 vendors click
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer with click installed
    from click import exceptions as _cx  # type: ignore[no-redef,import-not-found,unused-ignore]

from compat.commands.values import COLOR_MODES, choices
from compat.errors import EXIT_INCOMPATIBLE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, CompatError, InputError


class CommandEntry(NamedTuple):
    """One sub-command: its name, the module whose `register(app)` defines it, and its one-line summary."""

    name: str
    module: str
    summary: str
    """Shown by `compat --help` without importing the module (a test keeps it equal to the docstring)."""


# The one table of sub-commands, in `compat --help` order. A new command is one line here.
COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "check", "compat.commands.check", "What-if: check a stack described by flags (and/or a snapshot)."
    ),
    CommandEntry("doctor", "compat.commands.doctor", "Probe this machine: every problem with its fix."),
    CommandEntry("smoke", "compat.commands.smoke", "Train a tiny CNN in an isolated child process."),
    CommandEntry(
        "explain", "compat.commands.explain", "Read a crash log, name the root cause and give the fix."
    ),
    CommandEntry(
        "dockerfile", "compat.commands.dockerfile", "Check a Dockerfile's GPU stack without building it."
    ),
    CommandEntry("suggest", "compat.commands.suggest", "Which PyTorch, TensorFlow and JAX to install here."),
    CommandEntry("matrix", "compat.commands.matrix", "Validate the matrix and look rows up."),
    CommandEntry(
        "fleet", "compat.commands.fleet", "Check every node of a GPU cluster (Ray, or merged reports)."
    ),
    CommandEntry(
        "compose", "compat.commands.compose", "Check a Compose file's GPU services without starting them."
    ),
    CommandEntry("k8s", "compat.commands.k8s", "Check Kubernetes manifests' GPU pods without applying them."),
    CommandEntry("run", "compat.commands.run", "Run a training command, record it, and say why it died."),
    CommandEntry(
        "watch", "compat.commands.watch", "Record a running process (e.g. a notebook kernel) until it ends."
    ),
    CommandEntry(
        "record", "compat.commands.record", "Record this machine's NVML answers as a replayable profile."
    ),
    CommandEntry(
        "report",
        "compat.commands.report",
        "A Markdown report for an issue: doctor, last run, a log.",
    ),
    CommandEntry(
        "completion",
        "compat.commands.completion",
        "Print the shell completion script (bash, zsh, fish, PowerShell).",
    ),
    CommandEntry(
        "mcp", "compat.commands.mcp", "Serve compat's read-only tools to AI assistants over MCP (stdio)."
    ),
)
COMMAND_MODULES = tuple(c.module for c in COMMANDS)
_BY_NAME = {c.name: c for c in COMMANDS}


def _lighten(cmd: Any) -> None:
    """Help and parsing without the costs typer adds by default: no Python type after a metavar
    (`PATH <str>` → `PATH`), no `{PATH}` in the usage line, summaries not cut with '…', and plain string
    options coerced without building a pydantic TypeAdapter (~150 ms of imports on every run)."""
    for param in getattr(cmd, "params", ()):
        if getattr(param, "param_type_name", "") == "argument" and hasattr(param, "display_type_rich"):
            param.display_type_rich = lambda ctx: None
            param._usage_display_name = _usage_name(param)
        _plain_strings(param)
    orig = getattr(cmd, "get_help_option", None)
    if orig is not None and not getattr(orig, "_compat_light", False):

        def help_option(ctx: Any, _orig: Any = orig) -> Any:
            opt = _orig(ctx)
            if opt is not None:
                _plain_strings(opt)
            return opt

        help_option._compat_light = True  # type: ignore[attr-defined]
        cmd.get_help_option = help_option
    sub = getattr(cmd, "commands", None)
    if isinstance(sub, dict):
        for child in sub.values():
            if child.help and not child.short_help:
                child.short_help = child.help.split("\n\n")[0].replace("\n", " ").strip()
            _lighten(child)


def _usage_name(param: Any) -> Any:
    def name() -> str:
        n = str(param.metavar if param.metavar is not None else param.name).upper()
        if not param.required and not n.startswith("["):
            n = f"[{n}]"
        return n + ("..." if param.nargs != 1 and not n.rstrip("]").endswith("...") else "")

    return name


def _plain_strings(param: Any) -> None:
    desc = getattr(param, "type_descriptor", None)
    if desc is None or not hasattr(param, "_runtime_param") or desc.file_annotation is not None:
        return
    ann = desc.annotation
    if ann in (str, bool, int, float):
        param._runtime_param = _plain_param(desc, many=False)
    elif getattr(ann, "__origin__", None) is list and getattr(ann, "__args__", None) == (str,):
        param._runtime_param = _plain_param(desc, many=True)


def _plain_param(desc: Any, *, many: bool) -> Any:
    from typer._coercion import RuntimeParam

    class _Plain(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if many:
                return [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            if self.annotation is bool:
                return value if isinstance(value, bool) else bool(value)
            if self.annotation in (int, float):
                return _number(self.annotation, value, param, ctx)
            return value if isinstance(value, str) else str(value)

    return _Plain(parameter_info=desc.parameter_info, annotation=desc.annotation)


def _number(kind: type, value: Any, param: Any, ctx: Any) -> Any:
    """int/float options without pydantic, with the messages its TypeAdapter gave."""
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    try:
        if kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            return int(value) if not isinstance(value, str) else int(value.strip())
        return float(value)
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise _cx.BadParameter(
            f"Input should be a valid {what.split()[1]}, unable to parse string as {what}",
            ctx=ctx,
            param=param,
        ) from None


class LazyGroup(TyperGroup):
    """The root group: imports a sub-command's module on first use, lists the others from `COMMANDS`."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [c.name for c in COMMANDS] + [n for n in self.commands if n not in _BY_NAME]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in _BY_NAME:
            load_command(self, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [(c.name, c.summary) for c in COMMANDS]
        rows += [(n, c.get_short_help_str(10**6)) for n, c in self.commands.items() if n not in _BY_NAME]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def load_command(group: Any, name: str) -> None:
    """Import `name`'s module and add its click command to `group`."""
    try:
        mod = importlib.import_module(_BY_NAME[name].module)
    except ModuleNotFoundError as exc:
        if exc.name == _BY_NAME[name].module:
            return  # a command not built yet
        raise
    holder = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    mod.register(holder)
    built = typer.main.get_group(holder)
    for n, cmd in built.commands.items():
        _lighten(cmd)
        group.add_command(cmd, n)


def _print_version(value: bool) -> None:
    if value:
        from compat.about import __version__

        typer.echo(f"compat {__version__}")
        raise typer.Exit(0)


app = typer.Typer(
    name="compat",
    cls=LazyGroup,
    help="Tells you whether your GPU stack can train at all, and why not.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_EXIT_TYPES: tuple[type[BaseException], ...] = tuple(
    {t for t in (getattr(_cx, "Exit", None), typer.Exit) if isinstance(t, type)}
)
_ABORT_TYPES: tuple[type[BaseException], ...] = tuple(
    {t for t in (getattr(_cx, "Abort", None), typer.Abort) if isinstance(t, type)}
)


class State:
    matrix_dir: Optional[str] = None


@app.callback()
def _root(
    matrix: Optional[str] = typer.Option(
        None,
        "--matrix",
        metavar="DIR",
        help="Use the matrix in DIR (default: $COMPAT_MATRIX_DIR or the shipped one).",
    ),
    color: str = typer.Option(
        "auto",
        "--color",
        metavar="auto|always|never",
        autocompletion=choices(COLOR_MODES),
        help="Colour the text output: auto (on a terminal; NO_COLOR / FORCE_COLOR respected), always, never. "
        "Accepted after the command name too.",
    ),
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        is_eager=True,
        callback=_print_version,
        help="Print compat's version and exit.",
    ),
) -> None:
    State.matrix_dir = matrix  # --color is taken out of the arguments by main() (_take_color) before parsing


def set_color(mode: str) -> None:
    from compat import render

    m = mode.strip().lower()
    if m not in render.COLOR_MODES:
        raise InputError(f"--color must be one of {', '.join(render.COLOR_MODES)}, got {mode!r}")
    render.COLOR_MODE = m


def _take_color(args: list[str]) -> list[str]:
    """`--color X` / `--color=X` anywhere before a `--` (`compat doctor --color never` reads naturally), applied
    here and removed, so that no command needs the option of its own. The last one given wins."""
    out: list[str] = []
    i = 0
    in_run = False  # `compat run python train.py --color=x`: from the command on, the arguments are its own
    while i < len(args):
        a = args[i]
        if a == "--" or (in_run and not a.startswith("-")):
            out.extend(args[i:])
            break
        in_run = in_run or a == "run"
        if a == "--color" and i + 1 < len(args):
            set_color(args[i + 1])
            i += 2
            continue
        if a.startswith("--color="):
            set_color(a.split("=", 1)[1])
            i += 1
            continue
        out.append(a)
        i += 1
    return out


def matrix_dir(explicit: Optional[str] = None) -> Optional[str]:
    return explicit or State.matrix_dir


def fail_exit(at_or_above: bool) -> int:
    return EXIT_INCOMPATIBLE if at_or_above else EXIT_OK


def err(message: str) -> None:
    """One line on stderr: the error contract for bad input."""
    from compat._text import bounded

    first = bounded(" ".join(message.split("\n")[0].split()))
    sys.stderr.write(f"compat: error: {first}\n")


def _tolerant_stdout() -> None:
    """Text that is not valid Unicode (a lone surrogate from a JSON \\ud800 escape in a report, a file name that is
    not UTF-8) is printed escaped instead of failing with UnicodeEncodeError after the work is done."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdout, "errors", "strict") in ("strict", "surrogateescape"):
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # a stream that cannot change its error handler
            pass


COMPLETE_VAR = "_COMPAT_COMPLETE"
"""The variable the completion scripts of `compat completion SHELL` set when they ask compat for completions."""

_GROUP: Any = None


def _group() -> Any:
    global _GROUP
    if _GROUP is None:
        _GROUP = typer.main.get_group(app)
        _lighten(_GROUP)
    return _GROUP


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: runs the app and maps every outcome onto the documented exit codes."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:  # the real command line (not a test calling main): signals and standard streams
        from compat._runtime import start

        start()
    _tolerant_stdout()
    try:
        if os.environ.get(COMPLETE_VAR):  # the shell asks for completions (see `compat completion`)
            from typer._completion_classes import completion_init

            completion_init()
        if "compat.render" in sys.modules:  # imported by whatever renders (its default is "auto")
            sys.modules["compat.render"].COLOR_MODE = "auto"  # type: ignore[attr-defined]  # no --color carry-over
        args = _take_color(list(args))
        rv: Any = _group().main(args=args, prog_name="compat", standalone_mode=False)
        code = rv if isinstance(rv, int) else EXIT_OK
    except _EXIT_TYPES as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
    except _cx.NoArgsIsHelpError as exc:
        if exc.ctx is not None:
            typer.echo(exc.ctx.get_help())
        code = EXIT_OK
    except _cx.UsageError as exc:
        hint = f" (see 'compat {exc.ctx.command_path.split(' ', 1)[1] + ' ' if exc.ctx and ' ' in exc.ctx.command_path else ''}--help')"
        err(exc.format_message() + hint)
        code = EXIT_USAGE
    except _ABORT_TYPES:
        sys.stderr.write("compat: aborted\n")
        code = 130
    except CompatError as exc:
        err(str(exc))
        code = exc.exit_code
    except BrokenPipeError:
        code = EXIT_OK
    except KeyboardInterrupt:
        sys.stderr.write("compat: interrupted\n")
        code = 130
    except Exception as exc:
        if os.environ.get("COMPAT_DEBUG"):
            raise
        err(
            f"internal error: {type(exc).__name__}: {exc} (set COMPAT_DEBUG=1 for the traceback; please report it)"
        )
        code = EXIT_INTERNAL
    from compat._runtime import finish

    code = finish(code)
    if argv is None:
        _quiet_teardown()
        _exit_now(code)
    raise SystemExit(code)


def _exit_now(code: int) -> None:
    """Leave without the interpreter's teardown (freeing every module costs ~25 ms, an eighth of a warm `compat
    doctor`): the streams are flushed and the atexit handlers run (they kill every child's process group and
    remove compat's temporary directories), then os._exit. Returns (the normal exit follows) when a non-daemon
    thread is still at work or a stream cannot be flushed."""
    import atexit
    import threading

    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere the normal exit
    main = threading.main_thread()
    if run_exitfuncs is None or any(t is not main and not t.daemon for t in threading.enumerate()):
        return
    if not _is_the_program():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a stream that cannot be flushed: Python's own exit reports it
        return
    os._exit(code)


def _is_the_program() -> bool:
    """compat is the whole process: `python -m compat` or the `compat` console script, nothing of a caller's own
    on the stack. IPython's `%run -m compat`, runpy called from a script, a test harness or `coverage run` keep the
    normal SystemExit (their code after compat must run)."""
    frame = sys._getframe()
    while frame.f_back is not None:
        frame = frame.f_back
    code = frame.f_code
    if code.co_name == "_run_module_as_main":  # the interpreter's own `-m`: of compat, not of another program
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        return getattr(spec, "name", None) == "compat.__main__" and code.co_filename in (
            "<frozen runpy>",
            getattr(sys.modules.get("runpy"), "__file__", None),
        )
    return (
        code.co_name == "<module>"
        and os.path.basename(code.co_filename) in ("compat", "compat.exe", "compat-script.py")
        and os.path.abspath(code.co_filename) == os.path.abspath(sys.argv[0] if sys.argv else "")
    )


def _quiet_teardown() -> None:
    """The report is written and the exit code decided: TERM, HUP and INT are blocked for the rest, so a signal that
    arrives while the interpreter shuts down (after it has put back the default handlers) cannot turn the answer into
    a death by signal. The atexit handlers still kill every child's group; a blocked signal dies with the process."""
    import signal

    sigs = {getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, n)}
    block = getattr(signal, "pthread_sigmask", None)
    if block is not None:  # not on Windows
        with contextlib.suppress(OSError, ValueError):
            block(signal.SIG_BLOCK, sigs)


__all__ = ["COMMANDS", "EXIT_USAGE", "InputError", "app", "err", "fail_exit", "main", "matrix_dir"]
