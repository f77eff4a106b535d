"""The wild corpus (tests/data/dockerfile/wild): accuracy on the tuning and frozen splits and false claims.

The numbers are what compat reaches today; a change that loses accuracy or adds a false claim fails here.
Raise them when compat gets better (never edit frozen/ to make a case pass).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.dockerfile.wild import WILD, default_check, items, score

# split, kinds -> (files, right at least, false claims at most)
EXPECTED = {
    ("tuning", ("dockerfile",)): (112, 101, 6),
    ("frozen", ("dockerfile",)): (51, 46, 1),
    ("tuning", ("compose", "k8s")): (25, 25, 0),
    ("frozen", ("compose", "k8s")): (17, 17, 0),
}


@pytest.fixture(scope="module")
def shipped() -> Any:
    from compat.matrix import load_matrix

    return load_matrix(Path(__file__).resolve().parents[2] / "matrix")


def test_corpus_size_sources_and_split() -> None:
    import hashlib

    rows = items("tuning") + items("frozen")
    docker = [r for r in rows if r.row["kind"] == "dockerfile"]
    deploy = [r for r in rows if r.row["kind"] in ("compose", "k8s")]
    assert len(docker) >= 150 and len(deploy) >= 42
    assert len(items("frozen")) >= 0.3 * len(rows)
    for it in rows:
        r = it.row
        assert it.path.is_file(), r["file"]
        first = it.path.read_text(encoding="utf-8").splitlines()[0]
        assert first == f"# source: https://github.com/{r['repo']}/blob/{r['commit']}/{r['path']}", r["file"]
        frozen = int(hashlib.sha256(f"{r['repo']}:{r['path']}".encode()).hexdigest()[:8], 16) % 100 < 35
        assert frozen == (it.split == "frozen"), r["file"]
        if r["verdict"] == "broken":
            assert r["problems"] and all(
                p["evidence"].startswith("https://github.com/") for p in r["problems"]
            )
        else:
            assert r["verdict"] == "ok" and r["reason"]
    assert (WILD / "README.md").is_file()


@pytest.mark.parametrize("key", list(EXPECTED), ids=[f"{s}-{'+'.join(k)}" for s, k in EXPECTED])
def test_accuracy_and_false_claims(key: tuple[str, tuple[str, ...]], shipped: Any) -> None:
    split, kinds = key
    files, right, claims = EXPECTED[key]
    s = score(split, default_check(shipped), kinds)
    assert s.total == files
    assert s.right >= right, f"accuracy fell to {s.right}/{s.total}; wrong: {s.wrong}"
    assert len(s.false_claims) <= claims, s.false_claims
