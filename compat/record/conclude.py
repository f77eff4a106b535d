"""The end of every recording: explain over the captured text, the verdict, the cache copy and the report."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterable
from typing import Any

from compat.record import store
from compat.record.document import RunRecord
from compat.record.verdict import RunVerdict, verdict_of


def explain_lines(lines: Iterable[str]) -> tuple[list[Any], str | None]:
    """compat explain over captured lines; (diagnoses, None) or ([], why it could not run)."""
    try:
        from compat.explain import diagnose_lines

        return diagnose_lines(list(lines)), None
    except Exception as exc:  # a broken matrix must not lose the record
        return [], f"explain did not run: {type(exc).__name__}: {exc}"[:300]


def conclude(
    rec: RunRecord, report_dir: str | None = None, store_name: str | None = None, redact: bool = False
) -> tuple[RunVerdict, str | None]:
    """The verdict, the cache copy and the report; (verdict, None) or (verdict, one line saying why the report
    could not be written: nothing of it is left behind then)."""
    diags, why = explain_lines(rec.output_tail + rec.fault_report)
    if why:
        rec.notes.append(why)
    verdict = verdict_of(rec, diags)
    rec.verdict = verdict.to_json()
    doc = rec.to_json()
    if store_name:
        try:
            store.save(doc, store_name)
        except OSError as exc:
            rec.notes.append(f"could not keep the record in the cache: {exc}"[:300])
    failed = None
    if report_dir:
        try:
            write_report(rec, report_dir, redact=redact)
        except OSError as exc:
            failed = f"could not write the report to {report_dir}: {exc.strerror or exc}"[:300]
    return verdict, failed


def write_report(rec: RunRecord, report_dir: str, redact: bool = False) -> None:
    """DIR/run.json and DIR/report.html, each written whole or not at all; when the second fails, the first goes
    too (a report folder holds both or neither of this run's files); `redact`: both made from the record through
    compat.redact (as `compat report --redact`; the cache's copy stays whole). Raises OSError."""
    from compat._atomic import write_text_atomic
    from compat.record.html import render_html

    if redact:
        from compat.redact import Redactor

        rec = RunRecord.from_json(Redactor().document(rec.to_json()))

    files = (
        ("run.json", json.dumps(rec.to_json(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"),
        ("report.html", render_html(rec)),
    )
    if os.path.exists(report_dir) and not os.path.isdir(report_dir):
        raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a folder")
    os.makedirs(report_dir, exist_ok=True)
    written: list[str] = []
    try:
        for name, text in files:
            path = os.path.join(report_dir, name)
            write_text_atomic(path, text)
            written.append(path)
    except OSError:
        for path in written:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
