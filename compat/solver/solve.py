"""The solver: candidate stack changes re-checked through the resolver, ranked by the size of the change.

Closure: a fix with `changes`, applied to the same facts (`apply_changes`), makes its finding go away (no
finding with the same id and subject at the same or a worse severity) and adds no new error. Only candidates
that pass this re-check are shown; among those, the cheapest change comes first and, in the same class of
change, one that adds no warning before one that does.

The solver runs after the resolver (`attach_fixes`): checks say which axes could repair a finding
(`Finding.repair`), never build solver fixes themselves. A re-check is memoised by `Recheck`, one per caller's
run: nothing is shared between two runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from compat._valueclass import valueclass
from compat.checks.context import Ctx, build_context
from compat.facts import Facts, apply_flags
from compat.findings import SEVERITY_RANK, Finding, Fix, Report
from compat.matrix import Matrix
from compat.resolver import resolve
from compat.solver.candidates import GENERATORS, Candidate

MAX_RECHECKS_PER_AXIS = 400

Changes = tuple[tuple[str, str], ...]


@valueclass
class Option:
    """A candidate that passed its re-check."""

    candidate: Candidate
    warnings: int
    """Warnings the change adds (0: a warning-free option)."""

    @property
    def rank(self) -> tuple[Any, ...]:
        c = self.candidate
        return (c.category, self.warnings, *c.tiebreak)

    @property
    def changes(self) -> dict[str, str]:
        return dict(self.candidate.changes)

    def fix(self) -> Fix:
        c = self.candidate
        return Fix(c.text, c.command, c.kind, c.changes)


def subject_of(f: Finding) -> str | None:
    """What a finding is about beyond its id: its `subject`, else the framework it names in its facts."""
    if f.subject is not None:
        return f.subject
    for key in ("torch", "tensorflow"):
        if key in f.facts:
            return key
    label = f.facts.get("framework")
    if isinstance(label, str):
        return "torch" if label.startswith("torch") else "tensorflow"
    return None


def key_of(f: Finding) -> tuple[str, str | None]:
    return (f.id, subject_of(f))


def apply_changes(facts: Facts, changes: Mapping[str, str] | Iterable[tuple[str, str]]) -> Facts:
    """`facts` with a fix's changes applied, exactly as the `compat check` flags would give them."""
    items = dict(changes.items() if isinstance(changes, Mapping) else changes)
    return apply_flags(facts, {k: v for k, v in items.items()})


class Recheck:
    """The re-check of candidate stacks derived from one stack: each resolved once through the core checks (no
    fixes), remembered for as long as this object lives (one caller's run, never across runs).

    `derive` builds a candidate's facts from the stack's facts and its changes (`apply_changes`, what the
    `compat check` flags give; the Dockerfile's JAX installs say more)."""

    def __init__(
        self,
        facts: Facts,
        matrix: Matrix,
        *,
        require_gpu: bool = False,
        derive: Callable[[Facts, Changes], Facts] = apply_changes,
    ) -> None:
        self.facts = facts
        self.matrix = matrix
        self.require_gpu = require_gpu
        self.derive = derive
        self._memo: dict[Changes, Report] = {}

    def report(self, changes: Changes = ()) -> Report:
        """The report of the stack with `changes` applied (no changes: the stack itself)."""
        got = self._memo.get(changes)
        if got is None:
            facts = self.derive(self.facts, changes) if changes else self.facts
            got = self._memo[changes] = resolve(facts, self.matrix, require_gpu=self.require_gpu)
        return got

    def findings(self, changes: Changes = ()) -> list[Finding]:
        return self.report(changes).findings


def closes_all(before: Sequence[Finding], after: Sequence[Finding], targets: Iterable[Finding]) -> bool:
    """The closure rule: every target is gone (nothing in `after` with its id and subject at the same or a worse
    severity) and no new error appeared (an error whose id and subject no error of `before` had)."""
    for t in targets:
        tkey, trank = key_of(t), SEVERITY_RANK[t.severity]
        if any(key_of(f) == tkey and SEVERITY_RANK[f.severity] >= trank for f in after):
            return False
    had = {key_of(f) for f in before if f.severity == "error"}
    return all(key_of(f) in had for f in after if f.severity == "error")


def closes(before: Sequence[Finding], after: Sequence[Finding], target: Finding) -> bool:
    """The closure property of one fix: `target` is gone and no new error appeared."""
    return closes_all(before, after, (target,))


def new_warnings(before: Sequence[Finding], after: Sequence[Finding]) -> int:
    had = {(f.id, f.title) for f in before if f.severity == "warning"}
    return sum(1 for f in after if f.severity == "warning" and (f.id, f.title) not in had)


def solve(recheck: Recheck, ctx: Ctx, target: Finding, axes: Sequence[str]) -> list[Option]:
    """The cheapest passing option per axis, ranked cheapest first."""
    before = recheck.findings()
    best: list[Option] = []
    for axis in axes:
        cands = sorted(GENERATORS[axis](ctx), key=lambda c: (c.category, *c.tiebreak))
        found: Option | None = None
        for n, c in enumerate(cands):
            if n >= MAX_RECHECKS_PER_AXIS:
                break
            if found is not None and (found.warnings == 0 or c.category > found.candidate.category):
                break
            after = recheck.findings(c.changes)
            if not closes(before, after, target):
                continue
            opt = Option(c, new_warnings(before, after))
            if found is None or opt.rank < found.rank:
                found = opt
        if found is not None:
            best.append(found)
    return sorted(best, key=lambda o: o.rank)


def attach_fixes(report: Report, facts: Facts, matrix: Matrix, *, require_gpu: bool = False) -> Report:
    """`report` (the resolver's, on `facts`) with the solver's re-checked fixes joined to every finding that says
    how it could be repaired (`Finding.repair`). The report is changed in place and returned."""
    if not any(f.repair is not None for f in report.findings):
        return report
    recheck = Recheck(facts, matrix, require_gpu=require_gpu)
    ctx = build_context(facts, matrix, require_gpu)
    out: list[Finding] = []
    for f in report.findings:
        if f.repair is not None:
            solved = tuple(o.fix() for o in solve(recheck, ctx, f, f.repair.axes))
            f = replace(f, fixes=f.repair.combine(f.fixes, solved))
        out.append(f)
    report.findings[:] = out
    return report
