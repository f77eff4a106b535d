"""`compat report [LOG]`: one Markdown document for a bug report: the doctor, the last recorded run, explain LOG."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from compat.commands.common import MATRIX_OPT, REDACT_OPT, TARGET_PYTHON_OPT, load
from compat.errors import EXIT_OK


def _explain(log: str, matrix: Optional[str]) -> dict[str, Any]:
    """`compat explain LOG --json`'s document (the capped reader, the matrix's signatures)."""
    from compat.explain.diagnosis import explain_document
    from compat.explain.engine import Scanner, finish
    from compat.explain.reader import iter_log_bytes
    from compat.progress import Progress

    m = load(matrix)
    scanner = Scanner.for_matrix(m)
    with Progress(f"compat report: reading {log}"):
        for block in iter_log_bytes(log):
            scanner.feed_bytes(block)
    scanner.close()
    return explain_document(finish(scanner, None, m))


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        log: Optional[str] = typer.Argument(
            None, metavar="[LOG]", help="A crash log to explain too ('-' reads standard input)."
        ),
        redact: bool = REDACT_OPT,
        python: Optional[str] = TARGET_PYTHON_OPT,
        snapshot: Optional[str] = typer.Option(
            None,
            "--snapshot",
            metavar="FILE",
            help="The machine from a saved snapshot (`compat doctor --save-snapshot`) instead of probing this one.",
        ),
        no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the doctor's smoke-training job."),
        no_run: bool = typer.Option(False, "--no-run", help="Leave out the last recorded run."),
        matrix: Optional[str] = MATRIX_OPT,
    ) -> None:
        """One Markdown report to paste into an issue: the doctor, the last recorded run, and explain LOG.

        Example: compat report train.log --redact > report.md
        """
        from compat.commands.doctor import validate_options
        from compat.errors import InputError
        from compat.pipeline.doctor import doctor_report, snapshot_report
        from compat.report_markdown import bundle_markdown

        if snapshot is not None and python is not None:
            raise InputError("give --snapshot or --python, not both")
        validate_options(python, 5.0, None)
        m = load(matrix)
        if snapshot is not None:
            rep = snapshot_report(m, snapshot)
        else:
            from compat.target import find_target

            rep = doctor_report(m, find_target(python, note=True), smoke=not no_smoke)
        run: Optional[dict[str, Any]] = None
        run_missing = "Left out (--no-run)."
        if not no_run:
            from compat.record.store import latest, records_dir

            found = latest()
            run = found[1] if found else None
            run_missing = f"No run recorded in {records_dir()} (record one with `compat run -- COMMAND`)."
        explained = _explain(log, matrix) if log is not None else None
        name = "<stdin>" if log == "-" else (log or "")
        sys.stdout.write(
            bundle_markdown(
                rep.to_json(),
                run=run,
                run_missing=run_missing,
                explain=explained,
                log_name=name,
                redact=redact,
            )
        )
        raise typer.Exit(EXIT_OK)
