"""Consistency of the shipped matrix: every row sourced, no file contradicts another, freshness, look-ups."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from compat.matrix import CORE_FILES, Matrix, load_matrix

ROOT = Path(__file__).resolve().parent.parent.parent
SECTIONS = {
    "cuda.yaml": ("releases", "minor_compat", "compute_capabilities"),
    "gpus.yaml": ("gpus",),
    "cudnn.yaml": ("releases",),
    "pytorch.yaml": ("releases",),
    "tensorflow.yaml": ("releases",),
    "known_issues.yaml": ("issues",),
}


@pytest.fixture(scope="module")
def m() -> Matrix:
    return load_matrix(ROOT / "matrix", cache=False)


@pytest.mark.parametrize("file", CORE_FILES)
def test_every_row_cites_a_url(file: str) -> None:
    doc = yaml.safe_load((ROOT / "matrix" / file).read_text(encoding="utf-8"))
    rows = [(s, r) for s in SECTIONS[file] for r in doc[s]]
    assert rows
    bad = [
        (s, r.get("version") or r.get("name") or r.get("id") or r.get("cc"))
        for s, r in rows
        if not str(r.get("source", "")).startswith("https://")
    ]
    assert bad == []


def test_same_build_configuration_same_compiled_targets(m: Matrix) -> None:
    """Two TensorFlow releases of one minor with the same tested CUDA/cuDNN carry the same compute capabilities
    (or neither lists them), so they cannot answer differently for one GPU."""
    groups: dict[Any, set[Any]] = defaultdict(set)
    for t in m.tensorflow:
        groups[(t.version.release[:2], t.cuda, t.cudnn)].add(t.archs)
    assert {k: v for k, v in groups.items() if len(v) > 1} == {}


def test_torch_patch_releases_agree_on_a_variants_archs(m: Matrix) -> None:
    groups: dict[Any, set[Any]] = defaultdict(set)
    for r in m.torch:
        for v in r.variants:
            if v.archs is not None:
                groups[(r.version.release[:2], v.tag, v.cuda)].add(v.archs)
    assert {k: v for k, v in groups.items() if len(v) > 1} == {}


# cuDNN versions a framework row names that cudnn.yaml does not have, each a gap documented in
# docs/matrix-sources.md ("What is still unknown"). A new one fails the test until it is added or listed here.
KNOWN_CUDNN_GAPS = {
    "8.3.2.44": "NVIDIA's redist index lists v8.3.2/, but no 8.3.2 support matrix or directory contents were read"
}


def test_framework_cudnn_versions_are_in_cudnn_yaml(m: Matrix) -> None:
    from packaging.version import Version

    oldest, newest = m.cudnn[0].version, m.newest_cudnn()
    assert newest is not None
    missing = set()
    for r in m.torch:
        for v in r.variants:
            if v.cudnn and m.cudnn_release(Version(v.cudnn)) is None:
                missing.add(v.cudnn)
    for t in m.tensorflow:
        if t.cudnn and m.cudnn_release(Version(t.cudnn)) is None and Version(t.cudnn) >= oldest:
            missing.add(t.cudnn)  # TensorFlow's 7.4 / 7.x predate the table (it starts at 7.6.0)
    assert {c for c in missing if Version(c) <= newest} == set(KNOWN_CUDNN_GAPS)


def test_validate_warns_when_a_file_is_older_than_90_days(tmp_path: Path, run: Any) -> None:
    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    text = (d / "pytorch.yaml").read_text(encoding="utf-8")
    (d / "pytorch.yaml").write_text(
        text.replace("updated: 2026-11-22", "updated: 2020-01-01", 1), encoding="utf-8"
    )
    res = run("matrix", "validate", str(d))
    assert res.code == 0
    assert "warning: pytorch.yaml was last updated 2020-01-01" in res.err
    assert "cuda.yaml was last updated" not in res.err or "cuda.yaml" in [
        n for n, _ in load_matrix(d).stale_files(90)
    ]


def test_stale_files_by_date(m: Matrix) -> None:
    newest = max(m.updated.values())
    assert m.stale_files(90, today=newest) == []
    later = newest.fromordinal(newest.toordinal() + 91)
    assert [n for n, _ in m.stale_files(90, today=later)] == sorted(
        n for n, d in m.updated.items() if d == newest or (later - d).days > 90
    )


@pytest.mark.parametrize("subject", ["torch", "tensorflow"])
def test_newest_default_and_oldest_for_python(m: Matrix, run: Any, subject: str) -> None:
    rows = m.torch if subject == "torch" else m.tensorflow
    res = run("matrix", subject, "--newest-default", "--json")
    assert res.code == 0, res.err
    newest = json.loads(res.out)["version"]
    assert newest == max((r for r in rows if not r.version.is_prerelease), key=lambda r: r.version).raw
    res = run("matrix", subject, "--oldest-for-python", "3.13", "--json")
    assert res.code == 0, res.err
    oldest = json.loads(res.out)
    assert "3.13" in oldest["python"]
    assert all(
        "3.13" not in r.python
        for r in rows
        if r.version < __import__("packaging.version").version.Version(oldest["version"])
    )


def test_lookup_answers(run: Any) -> None:
    # Read from the shipped rows: torch 2.5.0 is the first with cp313 wheels, TensorFlow 2.20.0 the first for 3.13.
    assert (
        json.loads(run("matrix", "torch", "--oldest-for-python", "3.13", "--json").out)["version"] == "2.5.0"
    )
    assert (
        json.loads(run("matrix", "tensorflow", "--oldest-for-python", "3.13", "--json").out)["version"]
        == "2.20.0"
    )
    res = run("matrix", "torch", "--newest-default", "--python", "3.10", "--json")
    assert res.code == 0 and json.loads(res.out)["version"] == "2.14.1"


@pytest.mark.parametrize(
    "args",
    [
        ["torch"],
        ["torch", "2.6.0", "--newest-default"],
        ["gpu", "--newest-default"],
        ["torch", "--oldest-for-python", "banana"],
        ["torch", "--oldest-for-python", "2.1"],
    ],
    ids=["nothing", "two-picks", "not-a-framework", "bad-python", "no-release"],
)
def test_lookup_usage_errors(run: Any, args: list[str]) -> None:
    res = run("matrix", *args)
    assert res.code == 2
    assert res.err.startswith("compat: error:") and "Traceback" not in res.err
