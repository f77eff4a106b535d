"""The one finding-id selection rule: `--select`/`--ignore`, `[tool.compat]`, the guard's `ignore=` and the checks.

Ids match by prefix: ``"driver"`` selects ``driver.cuda`` and ``driver.gpu-support``; ``"driver.cuda"`` selects
only itself and its sub-ids (``driver.cuda.x``), never ``driver.cudax``; a pattern ending in ``.`` selects what
lies under it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def matches(finding_id: str, patterns: Iterable[str]) -> bool:
    """True when `finding_id` equals a pattern or lies under it (dotted prefix, or a pattern ending in '.')."""
    for p in patterns:
        p = p.strip()
        if not p:
            continue
        if finding_id == p or finding_id.startswith(p if p.endswith(".") else p + "."):
            return True
    return False


def selected(finding_id: str, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """In `select` (or no select given) and not in `ignore`."""
    if select and not matches(finding_id, select):
        return False
    return not matches(finding_id, ignore)
