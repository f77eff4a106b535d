"""Every recorded real log excerpt is diagnosed with the root cause its thread confirmed."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from compat.explain.categories import CATEGORIES
from compat.explain.categories import CATEGORIES as CAT_CATEGORIES
from tests.explain.helpers import cases

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_first_diagnosis_is_the_confirmed_root_cause(case: dict[str, Any], diagnose) -> None:  # type: ignore[no-untyped-def]
    diags = diagnose(case["log"])
    assert diags, f"{case['id']}: nothing recognised in\n{case['log']}"
    assert diags[0].category == case["expected"], [(d.category, d.confidence) for d in diags]
    # The evidence is real lines of the log, not paraphrases.
    lines = [ln.strip() for ln in case["log"].splitlines()]
    for ev in diags[0].evidence:
        assert any(ev.rstrip("…") in ln or ln in ev for ln in lines), ev
    assert diags[0].fixes, "every diagnosis carries fixes"


FACT_CASES = [c for c in CASES if c.get("facts")]


@pytest.mark.parametrize("case", FACT_CASES, ids=[c["id"] for c in FACT_CASES])
def test_facts_are_extracted(case: dict[str, Any], diagnose) -> None:  # type: ignore[no-untyped-def]
    facts = diagnose(case["log"])[0].facts
    for name, want in case["facts"].items():
        assert facts.get(name) == want, (name, facts)


def test_fixture_collection_is_broad_and_well_formed() -> None:
    assert len(CASES) >= 120
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    per = Counter(c["expected"] for c in CASES)
    # gpu_error ("other GPU error", issue 14) has no case in this builder corpus: see tests/data/explain/wild
    assert set(per) | {"gpu_error"} == set(CATEGORIES) == set(CAT_CATEGORIES)
    assert min(per.values()) >= 8, per
    for c in CASES:
        assert c["url"].startswith("https://github.com/"), c["id"]
        assert c["file"] == f"{c['expected']}.yaml"
        assert c["confirmed"].strip()


def test_wording_changes_over_the_years_are_all_known(diagnose) -> None:  # type: ignore[no-untyped-def]
    """Old and new wordings of the same failure land in the same category."""
    pairs = {
        "driver_too_old": ("rpg-open-remode-9", "pytorch-pr-162531"),  # 2015 runtime API vs torch 2.x
        "cudnn_mismatch": ("da-detection-19", "kohya-ss-1096"),  # "7102" vs "(8, 7, 0)"
        "gpu_oom": ("pytorch-examples-621", "cads-4"),  # "cached" vs "total capacity of"
        "arch_not_supported": ("pytorch-6515", "direct3d-s2-32"),  # cc 2.1 (2018) vs sm_120 (2025)
        "nccl_distributed": ("pytorch-pr-4921", "basicsr-737"),
    }
    for cat, (old, new) in pairs.items():
        from tests.explain.helpers import log

        assert diagnose(log(old))[0].category == cat
        assert diagnose(log(new))[0].category == cat
