"""The wild corpus (issue 14): real crash-log excerpts from public threads, each with its URL and the root
cause its thread confirmed. The frozen split was committed before any matching change; these floors are the
accuracies measured on it and on the tuning split, so a regression fails."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from compat.explain.categories import CATEGORIES
from compat.explain.diagnosis import verdict_of
from compat.explain.engine import Scanner
from compat.explain.signature import Catalogue
from tests.explain.helpers import cases
from tests.explain.wild import WILD, score, wild_cases

# Measured on the 501-case corpus (333 tuning, 168 frozen) with the catalogue tuned on the tuning split only
# (three passes): tuning 310/333, frozen 134/168. History: 234 cases before this session (151/155, 66/79);
# 380 cases untuned 205/248, 100/132; first pass 232/248, 105/132.
FLOOR = {"tuning": 310, "frozen": 134}
# Every wild log shows a failure: "nothing-found" on it is a miss. The tuning split has none left; the
# frozen split has this many (not tuned on).
NOTHING_FOUND_MAX = {"tuning": 0, "frozen": 20}
TOTAL_MIN = 500
PER_CATEGORY_MIN = 25
KEYS = {"id", "url", "year", "family", "expected", "confirmed", "log", "file", "split"}


def _frozen_by_url(url: str) -> bool:
    return int(hashlib.sha256(url.encode("utf-8")).hexdigest()[:8], 16) % 100 < 35


@pytest.fixture(scope="module")
def run_split(catalogue: Catalogue):  # type: ignore[no-untyped-def]
    def _diagnose(text: str):  # type: ignore[no-untyped-def]
        s = Scanner(catalogue)
        s.feed_block(text, final=True)
        return s.diagnoses()

    cache = {}

    def _run(split: str):  # type: ignore[no-untyped-def]
        if split not in cache:
            cache[split] = score(split, _diagnose)
        return cache[split]

    return _run


def test_corpus_is_well_formed_and_split_by_url_hash() -> None:
    tuning, frozen = wild_cases("tuning"), wild_cases("frozen")
    allc = tuning + frozen
    assert len(allc) >= TOTAL_MIN
    assert len(frozen) / len(allc) >= 0.30
    urls = [c["url"] for c in allc]
    assert len(urls) == len(set(urls)), "one excerpt per thread"
    assert len({c["id"] for c in allc}) == len(allc)
    builder = {c.get("url") for c in cases()}
    for c in allc:
        assert set(c) <= KEYS and {"id", "url", "expected", "confirmed", "log", "family"} <= set(c), c["id"]
        assert c["url"].startswith("https://"), c["id"]
        assert c["expected"] in CATEGORIES, c["id"]
        assert c["log"].strip() and c["confirmed"].strip(), c["id"]
        assert _frozen_by_url(c["url"]) == (c["split"] == "frozen"), c["id"]
        assert c["url"] not in builder, f"{c['id']}: also in the builder corpus"
        assert c["file"] == f"{c['expected']}.yaml", c["id"]
    assert (WILD / "README.md").is_file()


def test_every_family_of_causes_has_real_excerpts() -> None:
    per = Counter(c["expected"] for c in wild_cases("tuning") + wild_cases("frozen"))
    assert set(per) == set(CATEGORIES)  # gpu_error ("other GPU error") included since wild/gpu_error.yaml
    assert min(per.values()) >= PER_CATEGORY_MIN


@pytest.mark.parametrize("split", ["tuning", "frozen"])
def test_top1_accuracy_floor(run_split, split: str) -> None:  # type: ignore[no-untyped-def]
    r = run_split(split)
    assert r.right >= FLOOR[split], f"{split}: {r.right}/{r.total}; misses: {r.misses}"


@pytest.mark.parametrize("split", ["tuning", "frozen"])
def test_nothing_found_on_failing_logs(run_split, split: str) -> None:  # type: ignore[no-untyped-def]
    r = run_split(split)
    assert r.nothing <= NOTHING_FOUND_MAX[split], [m for m in r.misses if m[2] == "-"]


def test_status_of_every_tuning_case(catalogue: Catalogue) -> None:
    statuses: Counter[str] = Counter()
    for c in wild_cases("tuning"):
        s = Scanner(catalogue)
        s.feed_block(c["log"], final=True)
        statuses[verdict_of(s.diagnoses())] += 1
    assert statuses["nothing-found"] == 0
    assert statuses["inconclusive"] >= 1 and statuses["diagnosed"] >= 306
