"""Issue 27, item 3: `driver.gpu-too-new` in suggest, dockerfile, doctor and fleet, and matrix/gpu_drivers.yaml."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.version import Version

from compat.checks.first_driver import FILE, validate_document
from compat.matrix import Matrix
from compat.pipeline.check import check_stack
from compat.suggest import suggest
from tests.conftest import ROOT
from tests.solver.sweep import facts_of

TOO_NEW = "driver.gpu-too-new"
DOC = yaml.safe_load((ROOT / "matrix" / FILE).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- suggest


def test_suggest_says_the_driver_must_change_first_and_answers_for_the_driver_the_gpu_needs(
    matrix: Matrix,
) -> None:
    facts = facts_of(driver="535.183.01", gpu="RTX 5090", python="3.12")
    s = suggest(facts, matrix)
    assert s.blocked[0]["what"] == "every GPU build"
    assert (
        "cannot drive GeForce RTX 5090" in s.blocked[0]["why"]
        and "driver must change first (R570" in s.blocked[0]["why"]
    )
    for pick in (s.torch, s.tensorflow, s.jax):
        assert pick is not None
        assert "after upgrading the driver to R570 or newer" in pick.reason
        assert Version(pick.changes["driver"]).release[0] >= 570
        # What suggest proposes, with the driver it names, passes check without an error.
        from compat.facts import apply_flags

        rep = check_stack(apply_flags(facts, pick.changes), matrix)
        assert [f.title for f in rep.findings if f.severity == "error"] == [], pick


def test_suggest_for_h100_on_r470_upgrades_the_driver(matrix: Matrix) -> None:
    s = suggest(facts_of(driver="470.82.01", gpu="H100", python="3.10"), matrix)
    assert s.torch is not None and Version(s.torch.changes["driver"]).release[0] >= 520
    assert "cannot drive H100" in s.blocked[0]["why"]


def test_suggest_unchanged_when_the_driver_drives_the_gpu(matrix: Matrix) -> None:
    s = suggest(facts_of(driver="570.124.06", gpu="RTX 5090", python="3.9"), matrix)
    assert s.torch is not None and "driver" not in s.torch.changes
    assert all(b["what"] != "every GPU build" for b in s.blocked)


# ---------------------------------------------------------------- dockerfile


CU124 = """FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
RUN apt-get update && apt-get install -y python3-pip
RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124
"""


def _dockerfile(tmp_path: Path, matrix: Matrix, driver: str) -> Any:
    from compat.dockerfile import check_dockerfile

    p = tmp_path / "Dockerfile"
    p.write_text(CU124, encoding="utf-8")
    return check_dockerfile(p, matrix, target_driver=driver, target_gpu="RTX 5090")


def test_dockerfile_proposes_no_cu128_wheel_for_a_5090_on_560(tmp_path: Path, matrix: Matrix) -> None:
    rep = _dockerfile(tmp_path, matrix, "560.35.03")
    [f] = [f for f in rep.findings if f.id == TOO_NEW]
    assert f.severity == "error" and "≥ R570" in f.message
    commands = [x.command or "" for g in rep.findings for x in g.fixes]
    assert not any("cu128" in c for c in commands), commands


def test_dockerfile_target_driver_branch_570_gets_the_cu128_wheel(tmp_path: Path, matrix: Matrix) -> None:
    rep = _dockerfile(tmp_path, matrix, "570")
    assert [f for f in rep.findings if f.id == TOO_NEW] == []
    commands = [x.command or "" for g in rep.findings for x in g.fixes]
    assert any("cu128" in c for c in commands), commands


def test_dockerfile_require_cuda_compares_a_branch_as_its_first_release(
    tmp_path: Path, matrix: Matrix
) -> None:
    """R570's first release 570.26 runs a CUDA 12.8 image: no 'container may refuse to start' (570 read as 570.0
    would say it); R560 gets it."""
    from compat.dockerfile import check_dockerfile

    p = tmp_path / "Dockerfile"
    p.write_text("FROM nvidia/cuda:12.8.0-base-ubuntu22.04\n", encoding="utf-8")
    rep = check_dockerfile(p, matrix, target_driver="570")
    assert [f.title for f in rep.findings if f.severity != "info"] == []
    rep = check_dockerfile(p, matrix, target_driver="560")
    assert "dockerfile.require-cuda" in {f.id for f in rep.findings}


# ---------------------------------------------------------------- doctor and fleet


def test_doctor_reports_a_driver_older_than_the_gpu(matrix: Matrix) -> None:
    """The doctor on an H100 node, asked about R470 (COMPAT_OVERRIDE_DRIVER): the error; with its own driver: none."""
    from compat.checks.doctor import doctor_checks
    from compat.probes import gather_facts
    from compat.resolver import resolve
    from tests.doctor.fakes import FakeNvml, env_with

    nvml = FakeNvml.recorded("h100-580.159.04.json")
    facts = gather_facts(environ=env_with(COMPAT_OVERRIDE_DRIVER="470.82.01"), nvml=nvml, frameworks=False)
    rep = resolve(facts, matrix, extra_checks=doctor_checks)
    assert [f.severity for f in rep.findings if f.id == TOO_NEW] == ["error"]
    facts = gather_facts(environ=env_with(), nvml=FakeNvml.recorded("h100-580.159.04.json"), frameworks=False)
    assert [f for f in resolve(facts, matrix, extra_checks=doctor_checks).findings if f.id == TOO_NEW] == []


def test_fleet_lists_the_error_on_the_node_that_has_it(matrix: Matrix) -> None:
    from compat.fleet.report import NodeInput, build_fleet
    from compat.pipeline.doctor import doctor_document

    def node(name: str, driver: str) -> NodeInput:
        rep = check_stack(facts_of(driver=driver, gpu="H100"), matrix)
        return NodeInput(name, f"{name}.json", doc=doctor_document(rep).to_json())

    fleet = build_fleet([node("old", "470.82.01"), node("new", "570.124.06")], source="test")
    by_name = {n["name"]: n for n in fleet["nodes"]}
    assert any(TOO_NEW in str(e) for e in by_name["old"]["errors"]), by_name["old"]["errors"]
    assert by_name["new"]["errors"] == []


# ---------------------------------------------------------------- the data


def test_the_shipped_file_is_valid_and_every_row_cites_a_source() -> None:
    assert validate_document(DOC) == []
    assert all(r["source"].startswith("https://") for r in DOC["architectures"])


def test_derived_rows_are_the_table3_driver_of_the_cuda_release_that_added_the_cc(matrix: Matrix) -> None:
    """A derived first driver is exactly what cuda.yaml says: `added` of the CC, and that release's GA drivers."""
    for row in DOC["architectures"]:
        if row["basis"] != "derived":
            continue
        cc = next(c for c in matrix.ccs if str(c.cc) == row["cc"])
        assert cc.added is not None and f"{cc.added.release[0]}.{cc.added.release[1]}" == row["cuda"], row
        ga = min(
            (r for r in matrix.cuda_releases if r.version.release[:2] == cc.added.release[:2]),
            key=lambda r: r.version,
        )
        assert {o: d for o, d in ga.min_driver.items() if d} == row["first_driver"], (row["cc"], ga.raw)
        assert cc.source == row["cuda_source"], row["cc"]


def test_every_gpu_architecture_with_a_row_is_named_as_in_gpus_yaml(matrix: Matrix) -> None:
    by_cc = {str(r.cc): r.architecture for r in matrix.gpus}
    for row in DOC["architectures"]:
        if row["cc"] in by_cc:
            assert by_cc[row["cc"]] == row["architecture"], row["cc"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["architectures"][0].pop("source"), "'source'"),
        (lambda d: d["architectures"][0].update(basis="guessed"), "basis"),
        (lambda d: d["architectures"][0].pop("cuda"), "a derived row needs cuda"),
        (lambda d: d["architectures"][0]["first_driver"].update(linux="520"), "first_driver"),
        (lambda d: d["architectures"].append(dict(d["architectures"][0])), "cc"),
    ],
)
def test_the_validator_names_each_problem(mutate: Any, message: str) -> None:
    doc = copy.deepcopy(DOC)
    mutate(doc)
    problems = validate_document(doc)
    assert problems and any(message in p for p in problems), problems


def test_sweep_suggest_on_each_architecture_and_branch_passes_check(matrix: Matrix) -> None:
    """One GPU per compute capability (Jetson aside) x the branches 470, 535, 560, 570, 580 (each compared as its
    first release): what suggest proposes, with the changes it names, has no error in check; where the branch
    cannot drive the GPU it says so first and its picks carry the driver change."""
    from compat.checks.context import build_context
    from compat.checks.driver import undriven_gpus
    from compat.facts import apply_flags

    one: dict[str, str] = {}
    for g in matrix.gpus:
        if g.segment != "jetson":
            one.setdefault(str(g.cc), g.name)
    picks = undriven = 0
    for name in one.values():
        for branch in ("470", "535", "560", "570", "580"):
            facts = facts_of(driver=branch, gpu=name, python="3.12")
            s = suggest(facts, matrix)
            if undriven_gpus(build_context(facts, matrix)):
                undriven += 1
                assert s.blocked and s.blocked[0]["what"] == "every GPU build", (name, branch)
            for p in (s.torch, s.tensorflow):
                if p is None:
                    continue
                picks += 1
                rep = check_stack(apply_flags(facts, p.changes), matrix)
                assert [f.id for f in rep.findings if f.severity == "error"] == [], (name, branch, p.changes)
    assert picks > 100 and undriven >= 10, (picks, undriven)
