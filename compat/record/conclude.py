"""The end of every recording: explain over the captured text, the verdict, the cache copy and the report."""

from __future__ import annotations

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


def conclude(rec: RunRecord, report_dir: str | None = None, store_name: str | None = None) -> RunVerdict:
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
            rec.notes.append(f"could not keep the record in the cache: {exc}")
    if report_dir:
        write_report(rec, report_dir)
    return verdict


def write_report(rec: RunRecord, report_dir: str) -> None:
    from compat.record.html import render_html

    os.makedirs(report_dir, exist_ok=True)
    store.write_json(os.path.join(report_dir, "run.json"), rec.to_json())
    with open(os.path.join(report_dir, "report.html"), "w", encoding="utf-8") as fh:
        fh.write(render_html(rec))
