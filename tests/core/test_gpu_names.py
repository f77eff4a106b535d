"""GPU names as people type them resolve when the answer is unambiguous, and only then."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.parametrize(
    ("typed", "name", "cc"),
    [
        ("rtx4090", "GeForce RTX 4090", "8.9"),
        ("4090", "GeForce RTX 4090", "8.9"),
        ("GeForce RTX4090", "GeForce RTX 4090", "8.9"),
        ("3090", "GeForce RTX 3090", "8.6"),
        ("1080", "GeForce GTX 1080", "6.1"),
        # Every RTX PRO 6000 Blackwell variant is cc 12.0: the family name is enough.
        ("RTX PRO 6000", None, "12.0"),
        ("h100", "H100", "9.0"),
    ],
)
def test_lenient_names(matrix: Any, typed: str, name: str | None, cc: str) -> None:
    row = matrix.gpu(typed)
    assert row is not None
    assert str(row.cc) == cc
    if name is not None:
        assert row.name == name


@pytest.mark.parametrize("typed", ["rtx 40", "60", "A", "RTX 409"])
def test_ambiguous_or_partial_names_stay_unknown(matrix: Any, typed: str) -> None:
    assert matrix.gpu(typed) is None
