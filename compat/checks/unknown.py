"""Versions newer than (or unknown to) the matrix: said once, as info; checks that need them are skipped."""

from __future__ import annotations

from collections.abc import Iterator

from compat.checks.context import UNKNOWN_VERSION, Ctx, Result
from compat.checks.registry import check


@check(UNKNOWN_VERSION)
def check_unknown_versions(ctx: Ctx) -> Iterator[Result]:
    """A framework, CUDA or cuDNN version the matrix does not know."""
    yield from (n for n in ctx.notes if n.id == UNKNOWN_VERSION)
