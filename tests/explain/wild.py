"""The wild crash-log corpus (tests/data/explain/wild): loading and top-1 accuracy per split."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WILD = ROOT / "tests" / "data" / "explain" / "wild"


@lru_cache(maxsize=2)
def wild_cases(split: str) -> tuple[dict[str, Any], ...]:
    """The cases of one split: "tuning" (wild/*.yaml) or "frozen" (wild/frozen/*.yaml)."""
    folder = WILD / "frozen" if split == "frozen" else WILD
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            out.append(dict(case, file=path.name, split=split))
    return tuple(out)


@dataclass
class Score:
    total: int = 0
    right: int = 0
    nothing: int = 0
    """Cases where explain named no diagnosis at all (status nothing-found)."""
    misses: list[tuple[str, str, str]] = field(default_factory=list)
    per_category: Counter[str] = field(default_factory=Counter)
    per_category_right: Counter[str] = field(default_factory=Counter)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0


def score(split: str, diagnose: Any) -> Score:
    """Top-1 accuracy of `diagnose(text) -> list[Diagnosis]` on one split."""
    s = Score()
    for case in wild_cases(split):
        diags = diagnose(case["log"])
        s.total += 1
        s.per_category[case["expected"]] += 1
        got = diags[0].category if diags else "-"
        if not diags:
            s.nothing += 1
        if got == case["expected"]:
            s.right += 1
            s.per_category_right[case["expected"]] += 1
        else:
            s.misses.append((case["id"], case["expected"], got))
    return s


if __name__ == "__main__":  # python -m tests.explain.wild: print both accuracies
    from compat.explain.catalogue import catalogue_from_file
    from compat.explain.engine import Scanner

    cat = catalogue_from_file(ROOT / "matrix" / "signatures.yaml")

    def _diagnose(text: str) -> Any:
        sc = Scanner(cat)
        sc.feed_block(text, final=True)
        return sc.diagnoses()

    for sp in ("tuning", "frozen"):
        r = score(sp, _diagnose)
        print(f"{sp}: {r.right}/{r.total} = {r.accuracy:.1%} top-1, nothing-found {r.nothing}")
        for m in r.misses:
            print("   miss", *m)
