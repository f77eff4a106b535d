"""The solver: candidate stack changes re-checked through the resolver, ranked by the size of the change.

Closure: a fix with `changes`, applied to the same facts (`apply_changes`), makes its finding go away (no
finding with the same id and subject at the same or a worse severity) and adds no new error. Only candidates
that pass this re-check are shown; among those, the cheapest change comes first and, in the same class of
change, one that adds no warning before one that does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from compat._record import record
from compat.checks.context import Ctx
from compat.facts import Facts, apply_flags
from compat.findings import Finding, Fix
from compat.solver.candidates import GENERATORS, Candidate

_RANK = {"info": 0, "warning": 1, "error": 2}
MAX_RECHECKS_PER_AXIS = 400


@record
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


_SHARED: dict[tuple[Any, ...], list[Finding]] = {}
_SHARED_OWNER: list[Any] = [None]
_SHARED_MAX = 20000


def _stack_key(facts: Facts, require_gpu: bool) -> tuple[Any, ...]:
    vals = tuple(sorted((k, f.raw, f.value) for k, f in facts.values.items()))
    gpus = None if facts.gpus is None else tuple((g.name, g.cc) for g in facts.gpus)
    return (vals, gpus, bool(facts.probes), require_gpu)


def recheck(ctx: Ctx, changes: tuple[tuple[str, str], ...]) -> list[Finding]:
    """The findings of the stack with `changes` applied (no fixes are built for candidates). Results are shared
    between contexts on the same matrix: a re-check is a pure function of the stack's facts."""
    cache: dict[tuple[tuple[str, str], ...], list[Finding]] = ctx.solver_cache
    if changes not in cache:
        from compat.resolver import resolve

        facts = apply_changes(ctx.facts, changes)
        if _SHARED_OWNER[0] is not ctx.m or len(_SHARED) > _SHARED_MAX:
            _SHARED.clear()
            _SHARED_OWNER[0] = ctx.m
        key = _stack_key(facts, ctx.require_gpu)
        if key not in _SHARED:
            _SHARED[key] = resolve(facts, ctx.m, require_gpu=ctx.require_gpu, want_fixes=False).findings
        cache[changes] = _SHARED[key]
    return cache[changes]


def closes(before: Sequence[Finding], after: Sequence[Finding], target: Finding) -> bool:
    """The closure property: `target` is gone and no new error appeared."""
    tkey, trank = key_of(target), _RANK[target.severity]
    if any(key_of(f) == tkey and _RANK[f.severity] >= trank for f in after):
        return False
    had = {key_of(f) for f in before if f.severity == "error"}
    return all(key_of(f) in had for f in after if f.severity == "error")


def new_warnings(before: Sequence[Finding], after: Sequence[Finding]) -> int:
    had = {(f.id, f.title) for f in before if f.severity == "warning"}
    return sum(1 for f in after if f.severity == "warning" and (f.id, f.title) not in had)


def solve(ctx: Ctx, target: Finding, axes: Sequence[str]) -> list[Option]:
    """The cheapest passing option per axis, ranked cheapest first."""
    before = recheck(ctx, ())
    best: list[Option] = []
    for axis in axes:
        cands = sorted(GENERATORS[axis](ctx), key=lambda c: (c.category, *c.tiebreak))
        found: Option | None = None
        for n, c in enumerate(cands):
            if n >= MAX_RECHECKS_PER_AXIS:
                break
            if found is not None and (found.warnings == 0 or c.category > found.candidate.category):
                break
            after = recheck(ctx, c.changes)
            if not closes(before, after, target):
                continue
            opt = Option(c, new_warnings(before, after))
            if found is None or opt.rank < found.rank:
                found = opt
        if found is not None:
            best.append(found)
    return sorted(best, key=lambda o: o.rank)


def with_fixes(ctx: Ctx, finding: Finding, axes: Sequence[str], *, first: bool = True) -> Finding:
    """`finding` with the solver's fixes for it (before its own static fixes when `first`)."""
    if not ctx.want_fixes:
        return finding
    fixes = tuple(o.fix() for o in solve(ctx, finding, axes))
    if not fixes:
        return finding
    return replace(finding, fixes=fixes + finding.fixes if first else finding.fixes + fixes)


def fixes_for(ctx: Ctx, finding_id: str, subject: str | None = None, axis: str | None = None) -> list[Fix]:
    """The solver's fixes for the finding `finding_id` (about `subject`) on the context's stack, optionally only
    those that change `axis` ("torch", "driver", …): for callers outside the checks (explain's cross-check, the
    Dockerfile analysis) so that every framework, toolkit or driver fix comes from here."""
    from compat.resolver import resolve

    rep = resolve(ctx.facts, ctx.m, require_gpu=ctx.require_gpu)
    out: list[Fix] = []
    for f in rep.findings:
        if f.id == finding_id and (subject is None or subject_of(f) == subject):
            out += [x for x in f.fixes if x.changes and (axis is None or axis in x.change_map)]
    return out
