"""Shared by the fleet tests: the recorded reports, and a small doctor document built from scratch."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Optional

DATA = Path(__file__).resolve().parent.parent / "data" / "fleet"
CLUSTER_A = sorted((DATA / "cluster-a").glob("*.json"))


def recorded(name: str) -> dict[str, Any]:
    doc = json.loads((DATA / name).read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def with_fact(
    doc: dict[str, Any], name: str, raw: Optional[str], value: Optional[str] = None
) -> dict[str, Any]:
    """A copy of a doctor document with one fact changed (None: missing)."""
    out = copy.deepcopy(doc)
    if raw is None:
        out["facts"][name] = {"missing": True, "reason": "test", "source": "test"}
    else:
        out["facts"][name] = {"raw": raw, "value": value or raw, "source": "test"}
    return out
