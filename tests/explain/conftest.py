"""Fixtures for the explain tests: the catalogue loaded from matrix/signatures.yaml alone (the core matrix
files may be absent while they are being written)."""

from __future__ import annotations

import pytest

from compat.explain.catalogue import catalogue_from_file
from compat.explain.signature import Catalogue
from tests.explain.helpers import SIGNATURES


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return catalogue_from_file(SIGNATURES)


@pytest.fixture
def diagnose(catalogue: Catalogue):  # type: ignore[no-untyped-def]
    """diagnose(text) -> list[Diagnosis], with the shipped catalogue and no matrix."""
    from compat.explain.engine import Scanner

    def _run(text: str):  # type: ignore[no-untyped-def]
        s = Scanner(catalogue)
        s.feed_block(text, final=True)
        return s.diagnoses()

    return _run
