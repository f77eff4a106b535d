"""`compat explain`: read a crash log, name the root cause and give the fix.

The public API (used by the smoke job to classify its child's failure)::

    diagnose_text(text, facts=None, matrix=None) -> list[Diagnosis]
    diagnose_lines(lines, facts=None, matrix=None) -> list[Diagnosis]   # streaming

Diagnoses come most likely first; the first one is the root cause. With `facts` (a compat.facts.Facts),
each diagnosis is cross-checked against them through the resolver. Importing this package is cheap: the
catalogue (YAML) is loaded on first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compat.explain.diagnosis import Diagnosis
    from compat.facts import Facts
    from compat.matrix import Matrix

__all__ = ["diagnose_lines", "diagnose_text"]


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
