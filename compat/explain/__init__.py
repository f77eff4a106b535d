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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compat.findings import Fix

if TYPE_CHECKING:
    from compat.facts import Facts
    from compat.matrix import Matrix

__all__ = ["CATEGORIES", "Diagnosis", "Fix", "diagnose_lines", "diagnose_text"]

CATEGORIES = (
    "driver_too_old",
    "arch_not_supported",
    "cudnn_mismatch",
    "cuda_libs_missing",
    "gpu_oom",
    "host_oom",
    "dataloader_shm",
    "cuda_fork",
    "nccl_distributed",
    "illegal_memory_access",
    "hardware_xid",
    "no_gpu_visible",
    "nvml_mismatch",
    "segfault",
)


@dataclass(frozen=True)
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

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "confidence": round(float(self.confidence), 2),
            "title": self.title,
            "evidence": list(self.evidence),
            "explanation": self.explanation,
            "facts": {k: self.facts[k] for k in sorted(self.facts)},
            "fixes": [f.to_json() for f in self.fixes],
        }


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
