"""`compat doctor`: probe this machine, explain every problem with its fix, never hang or crash."""

from __future__ import annotations

import math
import os
import sys
from typing import Any, List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FAIL_ON_OPT,
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    MATRIX_OPT,
    REDACT_OPT,
    SELECT_OPT,
    SHOW_SKIPPED_OPT,
    TARGET_PYTHON_OPT,
    emit_document,
    load,
    options,
)
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK, InputError


def validate_options(python: Optional[str], timeout: float, save_snapshot: Optional[str]) -> None:
    """--python, --timeout and --save-snapshot as the doctor (and `compat report`) accept them: else InputError."""
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise InputError(f"--python {python!r} is not an executable file")
    if not (timeout > 0 and math.isfinite(timeout)) or timeout > 60:
        raise InputError(f"--timeout must be a number of seconds between 0 and 60, got {timeout:g}")
    if save_snapshot is not None:
        parent = os.path.dirname(os.path.abspath(save_snapshot))
        if not os.path.isdir(parent):
            raise InputError(f"--save-snapshot {save_snapshot!r}: directory {parent!r} does not exist")


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        redact: bool = REDACT_OPT,
        show_skipped: bool = SHOW_SKIPPED_OPT,
        no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the smoke-training job."),
        python: Optional[str] = TARGET_PYTHON_OPT,
        save_snapshot: Optional[str] = typer.Option(
            None,
            "--save-snapshot",
            metavar="FILE",
            help="Write the facts to FILE; `compat check --snapshot FILE` reproduces the findings elsewhere.",
        ),
        require_gpu: bool = typer.Option(
            False, "--require-gpu", help="A missing or unusable GPU is an error."
        ),
        fail_on: Optional[str] = FAIL_ON_OPT,
        matrix: Optional[str] = MATRIX_OPT,
        timeout: float = typer.Option(
            5.0,
            "--timeout",
            metavar="S",
            help="Seconds each probe may take (framework imports get 4x, at most 20 s); the whole run, smoke included, takes at most 30x.",
        ),
        no_cache: bool = typer.Option(
            False,
            "--no-cache",
            help="Import every framework and ask nvcc and the compiler afresh, even if nothing changed since the last run.",
        ),
    ) -> None:
        """Probe this machine: driver, GPUs and their health, CUDA, cuDNN, frameworks, resources; every problem with its fix.

        Example: compat doctor --format markdown --redact > report.md
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        json_out = opts.format != "text"  # no progress lines around a document
        validate_options(python, timeout, save_snapshot)
        from compat.pipeline.doctor import doctor_report
        from compat.target import find_target

        report = doctor_report(
            lambda: load(matrix),  # loaded while the probes run
            find_target(python, note=True),
            timeout=timeout,
            smoke=not no_smoke,
            require_gpu=require_gpu,
            cache=not no_cache,
            save_snapshot=save_snapshot,
            progress=not json_out,
        )
        raise typer.Exit(_emit(report, opts, redact=redact, show_skipped=show_skipped))


def _emit(report: Any, opts: Any, *, redact: bool, show_skipped: bool) -> int:
    """Print the doctor's report in the chosen format (text, json, markdown, sarif, github), narrowed by
    --select/--ignore and redacted on request; the exit code."""
    from compat.findings import at_or_above
    from compat.output.options import select_report

    report = select_report(report, opts)
    code = EXIT_INCOMPATIBLE if at_or_above(report.findings, opts.fail_on) else EXIT_OK
    if opts.format == "markdown":
        from compat.report_markdown import doctor_markdown

        sys.stdout.write(doctor_markdown(report.to_json(), redact=redact))
        return code

    def plain() -> int:  # `report` is already narrowed: the document is emitted as it stands
        from compat.pipeline.doctor import doctor_document

        return emit_document(doctor_document(report, show_skipped=show_skipped), opts)

    if not redact:
        return plain()
    from compat.redact import Redactor

    r = Redactor()
    if opts.format == "json":
        from compat.render import dumps

        sys.stdout.write(dumps(r.document(report.to_json())) + "\n")
    elif opts.format == "text":
        from compat.render import render_text

        sys.stdout.write(
            r.text(
                render_text(report, "compat doctor", sys.stdout, show_skipped=show_skipped, inventory=True)
            )
        )
    else:  # sarif, github: the rendered document, redacted as text
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = plain()
        sys.stdout.write(r.text(buf.getvalue()))
    return code
