"""Helpers the sub-commands share: option parsing, output and exit codes."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK, InputError
from compat.findings import Report, at_or_above
from compat.matrix import Matrix, get_matrix

FAIL_ON = ("error", "warning")


def check_fail_on(value: str) -> str:
    if value not in FAIL_ON:
        raise InputError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {value!r}")
    return value


def load(matrix: Optional[str]) -> Matrix:
    from compat.cli import matrix_dir

    return get_matrix(matrix_dir(matrix))


def emit(
    report: Report,
    *,
    json_out: bool,
    title: str,
    fail_on: str,
    show_skipped: bool = True,
    inventory: bool = False,
) -> int:
    """Print the report (JSON document alone on stdout, or text) and return the exit code."""
    from compat.render import dumps, render_text

    if json_out:
        sys.stdout.write(dumps(report.to_json()) + "\n")
    else:
        sys.stdout.write(
            render_text(report, title, sys.stdout, show_skipped=show_skipped, inventory=inventory)
        )
    return EXIT_INCOMPATIBLE if at_or_above(report.findings, fail_on) else EXIT_OK


SHOW_SKIPPED_OPT = typer.Option(
    False, "--show-skipped", help="List every skipped check with its reason (default: only their count)."
)
MATRIX_OPT = typer.Option(
    None, "--matrix", metavar="DIR", help="Matrix directory to use instead of the shipped one."
)
JSON_OPT = typer.Option(False, "--json", help="Print one JSON document (schema_version 1) on stdout.")
FAIL_ON_OPT = typer.Option(
    "error", "--fail-on", metavar="error|warning", help="Exit 1 at or above this severity."
)
