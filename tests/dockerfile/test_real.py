"""Real public Dockerfiles (tests/data/dockerfile/real, sources in README.md) against the shipped matrix.

Each case lists findings it must produce (broken for its users) and findings it must not (so the check
does not over-claim). Skipped, with the reason, while the shipped matrix does not load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "dockerfile"
CASES = yaml.safe_load((DATA / "cases.yaml").read_text(encoding="utf-8"))["cases"]


@pytest.fixture(scope="module")
def shipped() -> Any:
    from compat.errors import CompatError
    from compat.matrix import load_matrix

    try:
        return load_matrix(Path(__file__).resolve().parents[2] / "matrix")
    except CompatError as exc:
        pytest.skip(f"shipped matrix does not load yet: {str(exc)[:200]}")


def test_enough_real_fixtures_with_sources() -> None:
    files = {c["file"] for c in CASES}
    assert len(files) >= 30
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for f in files:
        assert (DATA / "real" / f).is_file(), f
        assert f in readme, f"{f} has no source in README.md"


@pytest.mark.parametrize(
    "case",
    CASES,
    ids=[f"{c['file']}{'+' + '+'.join(c.get('args', [])) if c.get('args') else ''}" for c in CASES],
)
def test_real_dockerfile(case: dict[str, Any], shipped: Any, run: Any) -> None:
    path = DATA / "real" / case["file"]
    r = run("dockerfile", str(path), "--json", "--matrix", str(shipped.directory), *case.get("args", []))
    assert r.code in (0, 1), r.err
    doc = json.loads(r.out)
    found = {f["id"] for f in doc["findings"]}
    missing = set(case.get("expect", [])) - found
    wrong = set(case.get("absent", [])) & found
    assert not missing, f"expected {sorted(missing)}; got {sorted(found)}"
    assert not wrong, f"must not report {sorted(wrong)}: " + "; ".join(
        f["title"] for f in doc["findings"] if f["id"] in wrong
    )
    for name, value in case.get("facts", {}).items():  # the stack facts the analysis derives (JAX, issue 17)
        assert (doc["facts"].get(name) or {}).get("value") == value, (name, doc["facts"].get(name))
    assert doc["stages"] and all(isinstance(f.get("line"), int) for f in doc["findings"])
    assert r.code == (1 if doc["verdict"] == "error" else 0)
