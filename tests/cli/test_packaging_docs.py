"""Packaging metadata and README snippets that work as written (issue 20)."""

from __future__ import annotations

import re
import sys

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _pyproject() -> dict:  # type: ignore[type-arg]
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib  # a dependency of compat below 3.11

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def test_pyproject_has_classifiers_urls_keywords() -> None:
    p = _pyproject()
    assert "Environment :: GPU :: NVIDIA CUDA" in p["classifiers"]
    assert all(c.count(" :: ") >= 1 for c in p["classifiers"])
    assert {"Homepage", "Source", "Issues"} <= set(p["urls"])
    assert {"cuda", "pytorch", "tensorflow"} <= set(p["keywords"])
    try:
        import trove_classifiers  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return
    assert [c for c in p["classifiers"] if c not in trove_classifiers.classifiers] == []


def test_readme_snippets_name_no_placeholder_and_no_missing_release() -> None:
    assert "<org>" not in README
    assert "rev: v0.1.0" not in README  # no such tag exists
    assert not re.search(r"pip install (?:torch==\S+ )?compat\s*$", README, re.M)  # compat is not on PyPI yet
    assert "pipx install" in README and "uv tool install" in README
    hook_repo = re.search(r"- repo: (\S+)\n\s+rev: (\S+)", README)
    assert hook_repo and hook_repo.group(2) == "main"
    assert (ROOT / ".pre-commit-hooks.yaml").is_file()


def test_readme_markdown_example_is_what_compat_prints(run) -> None:  # type: ignore[no-untyped-def]
    r = run("report", "--snapshot", str(ROOT / "examples" / "snapshot-a100-cu121-driver470.json"), "--no-run")
    assert r.code == 0
    table = [ln for ln in r.out.splitlines() if ln.startswith("| **")]
    assert table and all(ln in README for ln in table)
    headings = [ln for ln in r.out.splitlines() if ln.startswith("#")]
    assert all(h in README for h in headings)


def test_readme_extras_install_from_a_checkout() -> None:
    assert "pip install 'compat[" not in README


def test_the_pythons_claimed_are_the_pythons_ci_runs() -> None:
    """requires-python, the classifiers and .ci/run name the same range: CI tests its oldest and newest Python."""
    p = _pyproject()
    minors = sorted(
        int(c.rsplit(".", 1)[1])
        for c in p["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert p["requires-python"] == f">=3.{minors[0]}"
    assert minors == list(range(minors[0], minors[-1] + 1))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"OLDEST=$(python_for 3.{minors[0]} " in ci and f"NEWEST=$(python_for 3.{minors[-1]} " in ci
    assert sys.version_info >= (3, minors[0])
