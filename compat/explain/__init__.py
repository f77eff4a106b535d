"""`compat explain`: read a crash log, name the root cause and give the fix.

The public API (used by the smoke job to classify its child's failure)::

    diagnose_text(text, facts=None, matrix=None) -> list[Diagnosis]
    diagnose_lines(lines, facts=None, matrix=None) -> list[Diagnosis]   # streaming

Diagnoses come most likely first; the first one is the root cause. With `facts` (a compat.facts.Facts),
each diagnosis is cross-checked against them through the resolver. Importing this package is cheap: the
catalogue (YAML) is loaded on first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from compat._record import record
from compat.findings import Fix

if TYPE_CHECKING:
    from compat.facts import Facts
    from compat.matrix import Matrix

__all__ = [
    "CATEGORIES",
    "STATUSES",
    "Diagnosis",
    "Evidence",
    "Fix",
    "diagnose_lines",
    "diagnose_text",
    "explain_document",
    "status_of",
]

from compat.explain.categories import CATEGORIES

STATUSES = ("diagnosed", "inconclusive", "nothing-found")
"""The JSON "status" of an explain run: a named root cause, ranked suspects only, or no failure signature."""


@record
class Evidence:
    """One evidence line with its 1-based line number in the log and up to --context lines around it."""

    line: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "before": list(self.before), "after": list(self.after)}


@record
class Diagnosis:
    """One root cause found in a log, with the lines that show it and the way out."""

    category: str
    """One of CATEGORIES (a public contract)."""
    confidence: float
    """0.0-1.0: how sure the diagnosis is (message specificity, suppression by a deeper cause, cross-check)."""
    title: str
    evidence: tuple[str, ...]
    """The log lines that matched (bounded: a few per diagnosis)."""
    explanation: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    """Facts the log revealed (driver_cuda, cudnn_built, requested, xid, ...), and cross-check results."""
    fixes: tuple[Fix, ...] = ()
    confirm: Fix | None = None
    """The command that confirms (or rules out) this cause on the machine that failed."""
    evidence_at: tuple[Evidence, ...] = ()
    """The evidence with line numbers (and context lines when asked for)."""
    suspected: bool = False
    """True for a ranked suspect of an inconclusive answer (a death with no named cause)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "confidence": round(float(self.confidence), 2),
            "title": self.title,
            "evidence": list(self.evidence),
            "explanation": self.explanation,
            "facts": {k: self.facts[k] for k in sorted(self.facts)},
            "fixes": [f.to_json() for f in self.fixes],
            "confirm": self.confirm.to_json() if self.confirm else None,
            "evidence_lines": [e.to_json() for e in self.evidence_at],
            "suspected": self.suspected,
        }


def status_of(diags: Iterable[Diagnosis]) -> str:
    """ "diagnosed" when a root cause is named, "inconclusive" for suspects only, else "nothing-found"."""
    ds = list(diags)
    if not ds:
        return "nothing-found"
    if ds[0].suspected or ds[0].confidence < 0.4:
        return "inconclusive"
    return "diagnosed"


def explain_document(diags: Iterable[Diagnosis]) -> dict[str, Any]:
    """The JSON document of `compat explain --json`."""
    ds = list(diags)
    from compat.schema_version import SCHEMA_VERSION

    return {"schema_version": SCHEMA_VERSION, "status": status_of(ds), "diagnoses": [d.to_json() for d in ds]}


def diagnose_lines(
    lines: Iterable[str], facts: Facts | None = None, matrix: Matrix | None = None
) -> list[Diagnosis]:
    """Diagnose a log given as an iterable of lines (a file object, a pipe); memory stays bounded."""
    from compat.explain.engine import Scanner, finish

    scanner = Scanner.for_matrix(matrix)
    for line in lines:
        scanner.feed_line(line)
    return finish(scanner, facts, matrix)


def diagnose_text(text: str, facts: Facts | None = None, matrix: Matrix | None = None) -> list[Diagnosis]:
    """Diagnose a whole log held in memory (ANSI colours, CRLF and notebook JSON are handled)."""
    from compat.explain.engine import Scanner, finish
    from compat.explain.reader import notebook_lines

    scanner = Scanner.for_matrix(matrix)
    nb = notebook_lines(text)
    if nb is not None:
        for line in nb:
            scanner.feed_line(line)
    else:
        scanner.feed_block(text, final=True)
    return finish(scanner, facts, matrix)
