"""`matrix.stale`: the shipped matrix is older than 90 days, so releases after it are unknown to compat."""

from __future__ import annotations

import datetime as _dt

from compat.findings import Finding, Fix

MATRIX_STALE = "matrix.stale"
MAX_AGE_DAYS = 90


def stale_matrix(
    updated: str, today: _dt.date | None = None, max_age_days: int = MAX_AGE_DAYS
) -> Finding | None:
    """An info finding when the matrix (`updated`: YYYY-MM-DD, its newest file) is older than `max_age_days`."""
    try:
        when = _dt.date.fromisoformat(updated)
    except ValueError:
        return None
    now = today or _dt.date.today()
    age = (now - when).days
    if age <= max_age_days:
        return None
    return Finding(
        MATRIX_STALE,
        "info",
        f"compat's matrix is {age} days old (updated {updated})",
        f"Releases of drivers, CUDA, cuDNN and frameworks published after {updated} are unknown to this copy of "
        "compat: they are reported as unknown, not checked.",
        (Fix("Upgrade compat to get the current matrix:", "pip install -U compat"),),
        {"matrix_updated": updated, "age_days": age},
        group="stack",
    )
