"""The `compat` command line: argument parsing, exit codes and the one-line error contract."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional

import typer

try:  # typer >= 0.26 vendors click
    from typer._click import exceptions as _cx
except ImportError:  # pragma: no cover - older typer with click installed
    from click import exceptions as _cx  # type: ignore[no-redef,import-not-found,unused-ignore]

from compat.errors import EXIT_INCOMPATIBLE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, CompatError, InputError

app = typer.Typer(
    name="compat",
    help="Tells you whether your GPU stack can train at all, and why not.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# Sub-command modules; each exposes register(app). Imported at start-up, so they keep heavy imports lazy.
COMMAND_MODULES = (
    "compat.commands.check",
    "compat.commands.matrix",
    "compat.commands.doctor",
    "compat.commands.smoke",
    "compat.commands.explain",
    "compat.commands.dockerfile",
    "compat.commands.suggest",
    "compat.commands.fleet",
    "compat.commands.mcp",
    "compat.commands.record",
    "compat.commands.compose",
    "compat.commands.k8s",
    "compat.commands.run",
    "compat.commands.watch",
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
    version: bool = typer.Option(False, "--version", help="Print compat's version and exit."),
) -> None:
    if version:
        from compat import __version__

        typer.echo(f"compat {__version__}")
        raise typer.Exit(0)
    State.matrix_dir = matrix


def matrix_dir(explicit: Optional[str] = None) -> Optional[str]:
    return explicit or State.matrix_dir


def fail_exit(at_or_above: bool) -> int:
    return EXIT_INCOMPATIBLE if at_or_above else EXIT_OK


def err(message: str) -> None:
    """One line on stderr: the error contract for bad input."""
    first = " ".join(message.split("\n")[0].split())
    sys.stderr.write(f"compat: error: {first}\n")


def _register() -> None:
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # a command not built yet
            raise
        mod.register(app)


_register()


def _tolerant_stdout() -> None:
    """Text that is not valid Unicode (a lone surrogate from a JSON \\ud800 escape in a report, a file name that is
    not UTF-8) is printed escaped instead of failing with UnicodeEncodeError after the work is done."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdout, "errors", "strict") in ("strict", "surrogateescape"):
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # a stream that cannot change its error handler
            pass


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: runs the app and maps every outcome onto the documented exit codes."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:  # the real command line (not a test calling main): signals and standard streams
        from compat._runtime import start

        start()
    _tolerant_stdout()
    try:
        rv: Any = app(args=args, prog_name="compat", standalone_mode=False)
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

    raise SystemExit(finish(code))


__all__ = ["EXIT_USAGE", "InputError", "app", "err", "fail_exit", "main", "matrix_dir"]
