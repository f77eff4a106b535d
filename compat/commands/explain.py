"""`compat explain`: read a crash log, name the root cause and give the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    MATRIX_OPT,
    SELECT_OPT,
    emit_document,
    options,
)
from compat.errors import InputError, MatrixError

if TYPE_CHECKING:
    from compat.output.options import OutputOptions


def _machine_facts() -> tuple[Any, str]:
    """This machine's facts: the doctor's live probes when present, else the installed distributions."""
    try:
        from compat.probes import gather_facts
    except ImportError:
        from compat.facts import apply_overrides
        from compat.installed import installed_facts

        return apply_overrides(installed_facts()), "compat.installed.installed_facts"
    return gather_facts(), "compat.probes.gather_facts"


def run_explain(
    file: Optional[str],
    *,
    json_out: bool = False,
    with_doctor: bool,
    snapshot: Optional[str],
    matrix: Optional[str],
    context: int = 0,
    opts: Optional[OutputOptions] = None,
) -> int:
    from compat.cli import matrix_dir
    from compat.explain.catalogue import catalogue_from_file, default_catalogue
    from compat.explain.engine import Scanner, finish
    from compat.explain.reader import iter_log_bytes
    from compat.matrix import get_matrix, resolve_matrix_dir

    if opts is None:
        opts = options(None, json_out)
    if with_doctor and snapshot:
        raise InputError("give --with-doctor or --snapshot, not both")
    mdir = matrix_dir(matrix)
    matrix_error = ""
    try:
        m: Any = get_matrix(mdir)
        catalogue = default_catalogue(m)
    except MatrixError as exc:
        # The signatures do not need the rest of the matrix: explain still works, only cross-checks do not.
        m = None
        matrix_error = str(exc).splitlines()[0][:200]
        catalogue = catalogue_from_file(resolve_matrix_dir(mdir) / "signatures.yaml")
    facts = None
    if snapshot:
        from compat.facts import load_snapshot

        facts = load_snapshot(snapshot)
    elif with_doctor:
        facts, _ = _machine_facts()
    if context < 0:
        raise InputError("--context must be 0 or more")
    scanner = Scanner(catalogue, context=context)
    from compat.progress import Progress

    name = "standard input" if file in (None, "-") else str(file)
    with Progress(f"compat explain: reading {name}") as bar:
        read = 0
        for block in iter_log_bytes(file):
            scanner.feed_bytes(block)
            read += len(block)
            bar.update(f"compat explain: reading {name} ({read >> 20} MiB)")
    scanner.close()
    if facts is not None and m is None:
        from dataclasses import replace

        note = f"unavailable: the matrix did not load ({matrix_error})"
        diags = [replace(d, facts={**d.facts, "cross_check": note}) for d in scanner.diagnoses()]
    else:
        diags = finish(scanner, facts, m)
    from compat.explain.document import ExplainDocument
    from compat.output.options import select_diagnoses

    source = "<stdin>" if file in (None, "-") else str(file)
    doc = ExplainDocument(select_diagnoses(diags, opts), source=source, lines=scanner.lines)
    return emit_document(doc, opts)


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain(
        file: Optional[str] = typer.Argument(
            None, metavar="[FILE|-]", help="The log to read (default: stdin)."
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        with_doctor: bool = typer.Option(
            False, "--with-doctor", help="Probe this machine and cross-check each diagnosis against it."
        ),
        snapshot: Optional[str] = typer.Option(
            None, "--snapshot", metavar="FILE", help="Cross-check against a saved snapshot (compat doctor)."
        ),
        matrix: Optional[str] = MATRIX_OPT,
        context: int = typer.Option(
            0, "--context", metavar="N", help="Show N log lines before and after each evidence line (max 20)."
        ),
        last: bool = typer.Option(
            False, "--last", help="Why the last recorded run died (compat run / watch / %load_ext compat)."
        ),
    ) -> None:
        """Read a crash log (a file, or stdin), name the root cause and give the fix.

        Example: python train.py 2>&1 | tee train.log; compat explain train.log
        """
        opts = options(fmt, json_out, None, select, ignore)
        if last:
            if file is not None:
                raise InputError("give a log FILE or --last, not both")
            from compat.record.notebook import explain_last

            raise typer.Exit(explain_last(opts.format == "json", fmt=opts.format))
        raise typer.Exit(
            run_explain(
                file,
                json_out=json_out,
                with_doctor=with_doctor,
                snapshot=snapshot,
                matrix=matrix,
                context=context,
                opts=opts,
            )
        )
