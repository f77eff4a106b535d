"""Build facts the way `compat check` does and resolve them against the shipped matrix."""

from __future__ import annotations

from typing import Optional

from compat.facts import Facts, apply_flags, make_fact
from compat.findings import Finding, Report
from compat.matrix import Matrix
from compat.pipeline.check import check_stack


def check(m: Matrix, *, require_gpu: bool = False, os: str = "linux", **flags: Optional[str]) -> Report:
    """The report for a stack; every stack a test builds here also proves the closure property of its fixes
    (issue 13: a fix with `changes`, applied, removes its finding and adds no error)."""
    from tests.solver.sweep import closure_failures

    facts = apply_flags(
        Facts(values={"os": make_fact("os", os, "--os")}), {k: v for k, v in flags.items() if v is not None}
    )
    report = check_stack(facts, m, require_gpu=require_gpu)
    failures = list(closure_failures(m, facts, str(flags), report, require_gpu))
    assert failures == [], failures
    return report


def by_id(report: Report, check_id: str) -> list[Finding]:
    return [f for f in report.findings if f.id == check_id]


def severity(report: Report, check_id: str) -> Optional[str]:
    """The worst severity among findings with this id, or None when the check found nothing."""
    fs = by_id(report, check_id)
    if not fs:
        return None
    order = {"info": 0, "warning": 1, "error": 2}
    return max(fs, key=lambda f: order[f.severity]).severity


def skipped(report: Report, check_id: str) -> bool:
    return any(s.id == check_id for s in report.skipped)
