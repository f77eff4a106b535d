"""The check flow: facts → the resolver's findings → the solver's re-checked fixes. Every report that shows fixes
to a user comes from here (`compat check`, the doctor, the guard, explain's cross-check, Dockerfiles, suggest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compat.checks.context import Ctx, Result
from compat.facts import Facts
from compat.findings import Fix, Report
from compat.matrix import Matrix
from compat.resolver import resolve
from compat.solver.solve import attach_fixes, subject_of


def check_stack(
    facts: Facts,
    matrix: Matrix,
    *,
    require_gpu: bool = False,
    extra_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = (),
    entry_point: str = "check",
) -> Report:
    """The report of `facts`: every check run (`compat.resolver.resolve`), then the solver's fixes attached (its
    re-checks go through the core checks only, as `compat check` would check the changed stack)."""
    report = resolve(
        facts, matrix, require_gpu=require_gpu, extra_checks=extra_checks, entry_point=entry_point
    )
    return attach_fixes(report, facts, matrix, require_gpu=require_gpu)


def fixes_for(
    facts: Facts,
    matrix: Matrix,
    finding_id: str,
    subject: str | None = None,
    axis: str | None = None,
    *,
    require_gpu: bool = False,
) -> list[Fix]:
    """The solver's fixes for the finding `finding_id` (about `subject`) on the stack, optionally only those that
    change `axis` ("torch", "driver", …): for callers outside the checks (explain's cross-check) so that every
    framework, toolkit or driver fix comes from the solver."""
    rep = check_stack(facts, matrix, require_gpu=require_gpu)
    out: list[Fix] = []
    for f in rep.findings:
        if f.id == finding_id and (subject is None or subject_of(f) == subject):
            out += [x for x in f.fixes if x.changes and (axis is None or axis in x.change_map)]
    return out
