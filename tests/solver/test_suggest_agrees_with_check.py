"""`compat suggest` and `compat check` agree: what suggest proposes passes check without a warning, and what it
blocks names the right builds."""

from __future__ import annotations

from compat.pipeline.check import check_stack
from compat.suggest import suggest
from tests.solver.sweep import facts_of


def _check_of(matrix, facts, changes):  # type: ignore[no-untyped-def]
    from compat.facts import apply_flags

    return check_stack(apply_flags(facts, changes), matrix)


def test_suggest_on_535_and_4090_passes_check_without_warning(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(driver="535.104.05", gpu="RTX 4090", python="3.11")
    s = suggest(facts, matrix)
    assert s.torch is not None
    rep = _check_of(matrix, facts, s.torch.changes)
    assert [f.title for f in rep.findings if f.severity in ("error", "warning")] == []


def test_suggest_prefers_pypi_cu128_over_cu129_with_a_warning(matrix) -> None:  # type: ignore[no-untyped-def]
    s = suggest(facts_of(driver="570.124.06", gpu="RTX 5090", python="3.9"), matrix)
    assert s.torch is not None and (s.torch.version, s.torch.variant) == ("2.8.0", "cu128")
    assert s.torch.wheel == "pypi-default" and s.torch.command == "pip install torch==2.8.0"


def test_what_blocks_newer_names_cu118_builds_for_2_1_to_2_7(matrix) -> None:  # type: ignore[no-untyped-def]
    s = suggest(facts_of(driver="470.82.01", gpu="RTX 3090", python="3.10"), matrix)
    for b in s.blocked:
        if "525.60.13" in b["why"] and b["what"].startswith("torch"):
            lo = b["what"].split()[1]
            assert tuple(int(x) for x in lo.split(".")[:2]) >= (2, 8), b
