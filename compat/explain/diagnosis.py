"""The model of `compat explain`: a Diagnosis with its Evidence, the verdict of a log and its JSON document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.findings import Fix

VERDICTS = ("diagnosed", "inconclusive", "nothing-found")
"""An explain run's verdict (its JSON "status"): a named root cause, ranked suspects only, or no failure
signature."""


@valueclass
class Evidence:
    """One evidence line with its 1-based line number in the log and up to --context lines around it."""

    line: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "before": list(self.before), "after": list(self.after)}


@valueclass
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


def verdict_of(diags: Iterable[Diagnosis]) -> str:
    """A log's verdict: "diagnosed" when a root cause is named, "inconclusive" for suspects only, else
    "nothing-found"."""
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

    return {
        "schema_version": SCHEMA_VERSION,
        "status": verdict_of(ds),
        "diagnoses": [d.to_json() for d in ds],
    }
