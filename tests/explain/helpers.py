"""Shared helpers for the explain tests: the real log fixtures and the shipped signature catalogue."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from compat.explain.engine import Scanner
from compat.explain.signature import Catalogue

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "explain"
SIGNATURES = ROOT / "matrix" / "signatures.yaml"


@lru_cache(maxsize=1)
def cases() -> list[dict[str, Any]]:
    """Every recorded real log excerpt (tests/data/explain/<category>.yaml)."""
    out: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            out.append(dict(case, file=path.name))
    return out


def case(case_id: str) -> dict[str, Any]:
    return next(c for c in cases() if c["id"] == case_id)


def log(case_id: str) -> str:
    return str(case(case_id)["log"])


def signatures_doc() -> Any:
    return yaml.safe_load(SIGNATURES.read_text(encoding="utf-8"))


def scan(catalogue: Catalogue, text: str, **kw: Any) -> Scanner:
    """A Scanner over the whole of `text` (keyword arguments: context, pure ...)."""
    s = Scanner(catalogue, **kw)
    s.feed_block(text, final=True)
    return s
