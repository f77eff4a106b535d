"""Helpers the sub-commands share: option parsing, output and exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import typer

from compat.commands.values import FAIL_ON, FORMATS, choices, complete_ids

if TYPE_CHECKING:  # imported where used: the doctor starts its probes before it loads the matrix
    from compat.findings import Report
    from compat.matrix import Matrix
    from compat.output.options import OutputOptions


def load(matrix: Optional[str]) -> Matrix:
    from compat.cli import matrix_dir
    from compat.matrix import get_matrix

    return get_matrix(matrix_dir(matrix))


def options(
    fmt: Optional[str],
    json_out: bool,
    fail_on: Optional[str] = None,
    select: Optional[list[str]] = None,
    ignore: Optional[list[str]] = None,
) -> OutputOptions:
    """The output options in force (flags, else `[tool.compat]` of the nearest pyproject.toml)."""
    from compat.output.options import output_options

    return output_options(fmt, json_out, fail_on, select or (), ignore or ())


def emit_report(
    report: Report,
    opts: OutputOptions,
    *,
    title: str,
    kind: str,
    file: Optional[str] = None,
    show_skipped: bool = True,
    inventory: bool = False,
) -> int:
    """A report's findings narrowed by --select/--ignore, written in the chosen format; the exit code.
    `show_skipped=False` collapses skipped checks to a count in text; `inventory` opens the text with the machine's
    inventory block (the doctor)."""
    from compat.output.documents import ReportDocument
    from compat.output.emit import emit as _emit
    from compat.output.options import select_report

    doc = ReportDocument(
        select_report(report, opts),
        title=title,
        kind=kind,
        file=file,
        show_skipped=show_skipped,
        inventory=inventory,
    )
    return _emit(doc, opts.format, opts.fail_on)


def emit_document(document: Any, opts: OutputOptions) -> int:
    from compat.output.emit import emit as _emit

    return _emit(document, opts.format, opts.fail_on)


REDACT_OPT = typer.Option(
    False,
    "--redact",
    help="Remove credentials (tokens, passwords, keys), addresses, host and user names, GPU UUIDs and serials "
    "from the output (the README lists what is removed and what is kept).",
)
TARGET_PYTHON_OPT = typer.Option(
    None,
    "--python",
    metavar="PATH",
    help="Inspect this interpreter's environment (default: python -m compat's interpreter, else $VIRTUAL_ENV, "
    "$CONDA_PREFIX, compat's own environment unless a pipx/uv tool install, the python3 on PATH).",
)
SHOW_SKIPPED_OPT = typer.Option(
    False, "--show-skipped", help="List every skipped check with its reason (default: only their count)."
)
MATRIX_OPT = typer.Option(
    None, "--matrix", metavar="DIR", help="Matrix directory to use instead of the shipped one."
)
JSON_OPT = typer.Option(
    False, "--json", help="Print one JSON document (schema_version 1) on stdout; same as --format json."
)
FORMAT_OPT = typer.Option(
    None,
    "--format",
    metavar="text|json|markdown|sarif|github",
    autocompletion=choices(FORMATS),
    help="Output format (default: text, or `format` in [tool.compat] of pyproject.toml).",
)
FAIL_ON_OPT = typer.Option(
    None,
    "--fail-on",
    metavar="error|warning",
    autocompletion=choices(FAIL_ON),
    help="Exit 1 at or above this severity (default: error).",
)
SELECT_OPT = typer.Option(
    [],
    "--select",
    metavar="ID[,ID...]",
    autocompletion=complete_ids,
    help="Report only findings whose id starts with one of these prefixes; repeatable.",
)
IGNORE_OPT = typer.Option(
    [],
    "--ignore",
    metavar="ID[,ID...]",
    autocompletion=complete_ids,
    help="Drop findings whose id starts with one of these prefixes; repeatable.",
)
