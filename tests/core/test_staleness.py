"""An old matrix says so (info), a fresh one says nothing."""

from __future__ import annotations

import datetime as dt

from compat.checks.staleness import stale_matrix


def test_old_matrix_is_an_info_finding() -> None:
    f = stale_matrix("2026-01-01", today=dt.date(2026, 11, 23))
    assert f is not None
    assert (f.id, f.severity) == ("matrix.stale", "info")
    assert f.facts["age_days"] == 326
    assert f.fixes[0].command == "pip install -U compat"


def test_fresh_or_unknown_matrix_is_silent() -> None:
    assert stale_matrix("2026-11-01", today=dt.date(2026, 11, 23)) is None
    assert stale_matrix("2026-08-25", today=dt.date(2026, 11, 23)) is None  # exactly 90 days
    assert stale_matrix("unknown", today=dt.date(2026, 11, 23)) is None
