"""Findings, skips and the report document every command renders."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import field
from typing import Any, TypeVar

from compat._valueclass import valueclass
from compat.schema_version import SCHEMA_VERSION

T = TypeVar("T")

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
"""The one severity order (higher is worse); SEVERITIES lists them worst first."""


FIX_KINDS = ("shell", "python", "config", "manual")


@valueclass
class Fix:
    """One way out: a sentence and, where one exists, a concrete command."""

    text: str
    command: str | None = None
    """Only what a shell runs (kind "shell"); Python code (kind "python") or a config line (kind "config")."""
    kind: str = ""
    """"shell", "python", "config" or "manual"; left empty it is "shell" with a command, else "manual"."""
    changes: tuple[tuple[str, str], ...] = ()
    """The facts this fix changes, in `compat check` flag vocabulary (("torch", "2.5.1+cu121"),); a driver value
    means "at least". A fix with changes is re-checked by the solver before it is shown (compat.solver)."""

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", "shell" if self.command else "manual")
        if self.kind not in FIX_KINDS:
            raise ValueError(f"unknown fix kind {self.kind!r}")
        if isinstance(self.changes, Mapping):
            object.__setattr__(self, "changes", tuple(sorted(self.changes.items())))

    @property
    def change_map(self) -> dict[str, str]:
        return dict(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "command": self.command, "kind": self.kind, "changes": dict(self.changes)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Fix:
        """The fix of a stored document (a run.json, a report); a kind this version does not know reads as
        the default for its command (an older or newer record still renders)."""
        kind = str(d.get("kind") or "")
        raw = d.get("changes")
        changes: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        cmd = d.get("command")
        return cls(
            str(d.get("text") or ""),
            str(cmd) if cmd else None,
            kind if kind in FIX_KINDS else "",
            tuple(sorted((str(k), str(v)) for k, v in changes.items())),
        )


REPAIR_STATIC = ("after", "before", "fallback")


@valueclass
class Repair:
    """Which stack changes could repair a finding, and how the solver's fixes join the finding's own (static)
    fixes. Checks say it; the solver (compat.solver.solve.attach_fixes) finds the fixes after the resolver ran."""

    axes: tuple[str, ...]
    """The axes the solver may change, in the order the check prefers them ("torch", "driver", "cuda", …)."""
    static: str = "after"
    """Where the finding's own fixes go: "after" the solver's, "before" them, or "fallback" (kept only when the
    solver finds none: the re-checked changes replace the generic advice)."""
    unless_axis: str | None = None
    """The own fixes are dropped when one of the solver's fixes changes this axis (a manual "use another Python"
    that a re-checked Python change says better)."""

    def __post_init__(self) -> None:
        if self.static not in REPAIR_STATIC:
            raise ValueError(f"unknown Repair.static {self.static!r}")

    def combine(self, own: tuple[Fix, ...], solved: tuple[Fix, ...]) -> tuple[Fix, ...]:
        """The finding's fixes once the solver found `solved` (re-checked, cheapest first)."""
        if not solved:
            return own
        if self.static == "fallback" or (
            self.unless_axis is not None and any(self.unless_axis in f.change_map for f in solved)
        ):
            return solved
        return own + solved if self.static == "before" else solved + own


@valueclass
class Finding:
    """One problem (or note) found in a stack."""

    id: str
    """Stable check id, never renumbered (e.g. "driver.cuda")."""
    severity: str
    """"error", "warning" or "info"."""
    title: str
    """One line."""
    message: str
    """The explanation, naming the facts it used."""
    fixes: tuple[Fix, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)
    """The facts the finding rests on, by name."""
    group: str = "stack"
    """Where the report shows it: driver, cuda, frameworks, resources, health, stack."""
    line: int | None = None
    """Source line (Dockerfile findings)."""
    subject: str | None = None
    """What the finding is about when its id alone does not say ("torch", "tensorflow", "cuda"): the solver's
    closure test matches a finding before and after a change on (id, subject). Not part of the JSON."""
    repair: Repair | None = field(default=None, compare=False, repr=False)
    """The stack changes that could repair it (compat.solver adds their fixes after resolution). Not part of
    the JSON, nor of equality: two findings of the same problem are equal whatever their repair."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "fixes": [f.to_json() for f in self.fixes],
            "group": self.group,
        }
        if self.facts:
            out["facts"] = {k: self.facts[k] for k in sorted(self.facts)}
        if self.line is not None:
            out["line"] = self.line
        return out


@valueclass
class Skip:
    """A check that could not run, with the reason; never a silent pass."""

    id: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "reason": self.reason}


def unique(items: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """`items` without later repeats of the same key, in order (one root cause, one finding)."""
    out: list[T] = []
    seen: set[Hashable] = set()
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


def verdict_of(findings: Iterable[Finding]) -> str:
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=0)
    return {0: "ok", 1: "warning", 2: "error"}[worst]


def at_or_above(findings: Iterable[Finding], level: str) -> bool:
    return any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[level] for f in findings)


@valueclass(frozen=False)
class Report:
    """The result of a check: findings, skips and the facts they rest on."""

    findings: list[Finding]
    skipped: list[Skip]
    facts: Mapping[str, Any]
    matrix_updated: str
    extra: dict[str, Any] = field(default_factory=dict)
    """Command-specific top-level keys (doctor probes, dockerfile stages, smoke result)."""

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (-SEVERITY_RANK[f.severity], f.id, f.title))

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "findings": [f.to_json() for f in self.sorted_findings()],
            "skipped": [s.to_json() for s in self.skipped],
            "facts": dict(self.facts),
            "matrix": {"updated": self.matrix_updated},
        }
        for k in sorted(self.extra):
            doc[k] = self.extra[k]
        return doc
