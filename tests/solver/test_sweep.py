"""The closure sweep over the matrix, and suggest/check agreement on every machine of the sweep."""

from __future__ import annotations

from typing import Optional

import pytest

from compat.facts import Facts, apply_flags
from compat.findings import Finding
from compat.matrix import Matrix
from compat.resolver import resolve
from compat.suggest import suggest
from tests.solver.sweep import DRIVERS, GPUS, PYTHONS, closure_failures, facts_of, sweep_stacks


@pytest.mark.slow
def test_closure_sweep_over_the_matrix(matrix, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    failures: list[str] = []
    n = 0
    for label, facts in sweep_stacks(matrix):
        n += 1
        failures.extend(closure_failures(matrix, facts, label))
    with capsys.disabled():
        print(f"\nclosure sweep: {n} stacks, {len(failures)} closure failures")
    assert n > 9000
    assert failures == [], failures[:20]


def test_closure_on_a_slice_of_the_sweep(matrix) -> None:  # type: ignore[no-untyped-def]
    # Every 200th stack of the sweep: a fast guard in the default run (the full sweep is marked slow).
    failures = [
        x
        for i, (label, facts) in enumerate(sweep_stacks(matrix))
        if i % 200 == 0
        for x in closure_failures(matrix, facts, label)
    ]
    assert failures == []


def _problems(m: Matrix, facts: Facts, changes: dict[str, str]) -> tuple[list[Finding], bool]:
    """(errors and warnings `compat check` gives with `changes`, whether a check was skipped for lack of data)."""
    rep = resolve(apply_flags(facts, changes), m)
    bad = [f for f in rep.findings if f.severity in ("error", "warning")]
    unproven = any(
        s.id in ("driver.cuda", "wheel.arch") and "matrix" in s.reason and "give --" not in s.reason
        for s in rep.skipped
    )
    return bad, unproven


def _options(m: Matrix, framework: str, gpu: bool) -> list[dict[str, str]]:
    if framework == "torch":
        return [
            {"torch": f"{r.raw}+{v.tag}"}
            for r in m.torch
            for v in r.variants
            if (v.is_cuda if gpu else v.tag == "cpu")
        ]
    return [{"tensorflow": r.raw} for r in m.tensorflow]


def _machines(step: int = 1) -> list[dict[str, Optional[str]]]:
    out = [{"driver": d, "gpu": g, "python": p} for d in DRIVERS for g in GPUS for p in PYTHONS]
    return out[::step]


def _agree(matrix, machine: dict[str, Optional[str]]) -> list[str]:  # type: ignore[no-untyped-def]
    facts = facts_of(**machine)  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    s = suggest(facts, matrix)
    out = []
    for name, pick in (("torch", s.torch), ("tensorflow", s.tensorflow)):
        if pick is None:
            continue
        bad, _ = _problems(matrix, facts, pick.changes)
        errors = [f.title for f in bad if f.severity == "error"]
        warnings = [f.title for f in bad if f.severity == "warning"]
        if errors:
            out.append(f"{machine} {name} {pick.changes}: check errors {errors}")
        if sorted(warnings) != sorted(pick.warnings):
            out.append(
                f"{machine} {name} {pick.changes}: suggest says {pick.warnings}, check says {warnings}"
            )
        if warnings:
            gpu = machine.get("gpu") is not None or machine.get("driver") is not None
            clean = [
                o
                for o in _options(matrix, name, gpu)
                if (lambda r: not r[0] and not r[1])(_problems(matrix, facts, o))
            ]
            if clean:
                out.append(
                    f"{machine} {name}: picked {pick.changes} with warnings although {clean[0]} is clean"
                )
    return out


def test_suggest_and_check_agree_on_a_slice_of_the_sweep(matrix) -> None:  # type: ignore[no-untyped-def]
    problems = [p for m in _machines(step=17) for p in _agree(matrix, m)]
    assert problems == []


@pytest.mark.slow
def test_suggest_and_check_agree_on_every_machine_of_the_sweep(matrix) -> None:  # type: ignore[no-untyped-def]
    problems = [p for m in _machines() for p in _agree(matrix, m)]
    assert problems == []


def _in_range(what: str, name: str, versions: list[str]) -> list[str]:
    from packaging.version import Version

    rest = what[len(name) + 1 :]
    if rest.endswith(" and newer"):
        lo = Version(rest[: -len(" and newer")])
        return [v for v in versions if Version(v) >= lo]
    if " to " in rest:
        a, b = rest.split(" to ")
        return [v for v in versions if Version(a) <= Version(v) <= Version(b)]
    return [v for v in versions if Version(v) == Version(rest)]


def test_what_blocks_newer_is_true_for_every_release_it_names(matrix) -> None:  # type: ignore[no-untyped-def]
    # Every release a "blocked" entry names really fails `compat check` on that machine (an error in every
    # variant), unless the pick itself has no warning and the release only has warnings, or the entry names data
    # the matrix lacks (and a check was skipped for it).
    problems = []
    for machine in _machines(step=17):
        facts = facts_of(**machine)  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
        s = suggest(facts, matrix)
        for name, pick in (("torch", s.torch), ("tensorflow", s.tensorflow)):
            rows = matrix.torch if name == "torch" else matrix.tensorflow
            for b in s.blocked:
                if not b["what"].startswith(name + " "):
                    continue
                for ver in _in_range(b["what"], name, [r.raw for r in rows if not r.version.is_prerelease]):
                    if name == "torch":
                        rel = next(r for r in rows if r.raw == ver)
                        opts = [{"torch": f"{ver}+{v.tag}"} for v in rel.variants if v.is_cuda]  # type: ignore[union-attr]
                    else:
                        opts = [{"tensorflow": ver}]
                    results = [_problems(matrix, facts, o) for o in opts]
                    errors_everywhere = all(any(f.severity == "error" for f in bad) for bad, _ in results)
                    unknown = "unknown to the matrix" in b["why"] and any(u for _, u in results)
                    if not errors_everywhere and not unknown and (pick is None or pick.warnings):
                        problems.append(
                            f"{machine}: {b['what']} says blocked ({b['why']}) but {ver} has no error"
                        )
    assert problems == []
