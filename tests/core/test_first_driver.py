"""Issue 27, item 3: the driver each GPU needs (`driver.gpu-too-new`) and drivers given as a branch (`--driver 570`)."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat.checks.first_driver import branch_first_release, first_drivers, given_driver
from compat.facts import make_fact
from compat.matrix import Matrix
from tests.core.helpers import by_id, check, severity

TOO_NEW = "driver.gpu-too-new"


# ---------------------------------------------------------------- the real cases of the issue


def test_h100_on_r470_is_an_error(matrix: Matrix) -> None:
    rep = check(matrix, gpu="H100", driver="470.82.01")
    [f] = by_id(rep, TOO_NEW)
    assert f.severity == "error"
    assert f.title == "Driver 470.82.01 cannot drive H100 (Hopper, sm_90)"
    assert "R520 (520.61.05, the driver of CUDA 11.8)" in f.message and "derived" in f.message
    # The re-checked fix is a driver that drives Hopper.
    driver_fixes = [x for x in f.fixes if "driver" in x.change_map]
    assert driver_fixes and Version(driver_fixes[0].change_map["driver"]).release[0] >= 520


def test_rtx_5090_on_r535_is_an_error_not_only_a_minor_compat_warning(matrix: Matrix) -> None:
    rep = check(matrix, gpu="RTX 5090", driver="535.183.01", torch="2.8.0")
    [f] = by_id(rep, TOO_NEW)
    assert f.severity == "error" and "Blackwell" in f.title and "sm_120" in f.title
    assert "≥ R570" in f.message


def test_rtx_5090_on_560_is_an_error(matrix: Matrix) -> None:
    assert severity(check(matrix, gpu="RTX 5090", driver="560.35.03"), TOO_NEW) == "error"


@pytest.mark.parametrize(
    ("gpu", "driver"),
    [
        ("H100", "520.61.05"),  # the first driver (derived) itself
        ("H100", "520.56.06"),  # an earlier R520 release: compared by branch (derived row)
        ("RTX 5090", "570.124.06"),
        ("RTX 4090", "535.104.05"),
        ("A100", "450.51.05"),
        ("Tesla K80", "470.82.01"),  # no first driver known for Kepler: nothing said
    ],
)
def test_a_driver_that_drives_the_gpu_passes(matrix: Matrix, gpu: str, driver: str) -> None:
    assert by_id(check(matrix, gpu=gpu, driver=driver), TOO_NEW) == []


def test_windows_compares_the_windows_first_driver(matrix: Matrix) -> None:
    assert severity(check(matrix, os="windows", gpu="RTX 5090", driver="566.36"), TOO_NEW) == "error"
    assert by_id(check(matrix, os="windows", gpu="RTX 5090", driver="572.16"), TOO_NEW) == []


def test_no_finding_on_macos_or_without_a_driver(matrix: Matrix) -> None:
    assert by_id(check(matrix, os="macos", gpu="H100", driver="470.82.01"), TOO_NEW) == []
    assert by_id(check(matrix, gpu="H100"), TOO_NEW) == []


def test_unknown_first_driver_is_a_skip_not_a_pass(matrix: Matrix) -> None:
    rep = check(matrix, gpu="GTX 1080", driver="390.46")
    assert by_id(rep, TOO_NEW) == []
    assert any(s.id == TOO_NEW and "6.1" in s.reason for s in rep.skipped)


def test_a_gpu_the_driver_itself_listed_is_driven(matrix: Matrix) -> None:
    """NVML listing the GPU is proof the driver drives it: a derived first driver never contradicts it."""
    from compat.checks.context import build_context
    from compat.checks.driver import check_driver_gpu_too_new
    from compat.facts import Facts, Gpu

    values = {"os": make_fact("os", "linux", "t"), "driver": make_fact("driver", "515.65.01", "nvml")}
    live = Facts(values).with_gpus((Gpu("H100", "9.0", "nvml", 0),), "nvml")
    given = Facts(values).with_gpus((Gpu("H100", "9.0", "--gpu", 0),), "--gpu")
    assert list(check_driver_gpu_too_new(build_context(live, matrix))) == []
    assert [f.id for f in check_driver_gpu_too_new(build_context(given, matrix))] == [TOO_NEW]


# ---------------------------------------------------------------- branches: --driver 535 / 570


def test_branch_is_accepted_and_compared_as_its_first_release(matrix: Matrix) -> None:
    assert branch_first_release(matrix, 535, "linux") == "535.54.03"
    assert branch_first_release(matrix, 570, "linux") == "570.26"
    assert branch_first_release(matrix, 536, "windows") == "536.25"
    rep = check(matrix, driver="535", torch="2.1.0+cu121")
    [note] = by_id(rep, "driver.branch")
    assert note.severity == "info" and "535.54.03" in note.title
    # R535's first release runs CUDA 12.1 (needs 530.30.02): no driver.cuda finding.
    assert by_id(rep, "driver.cuda") == []


def test_branch_findings_say_how_the_branch_was_compared(matrix: Matrix) -> None:
    rep = check(matrix, driver="535", gpu="RTX 5090")
    [f] = by_id(rep, TOO_NEW)
    assert f.title.startswith("Driver branch R535 (compared as its first release 535.54.03) cannot drive")
    rep = check(matrix, driver="R470", torch="2.1.0+cu121")
    [f] = by_id(rep, "driver.cuda")
    assert f.title.startswith("Driver branch R470 (compared as its first release 470.42.01) is too old")


def test_branch_570_drives_blackwell(matrix: Matrix) -> None:
    assert by_id(check(matrix, driver="570", gpu="RTX 5090", torch="2.8.0"), TOO_NEW) == []


def test_unlisted_branch_is_compared_as_branch_dot_zero_and_says_so(matrix: Matrix) -> None:
    g = given_driver(matrix, "565", "565", "linux")
    assert g.version == Version("565.0") and not g.listed
    assert "its first release is not in the matrix" in g.text()


@pytest.mark.parametrize("raw", ["535", "570", "R535", "r570", " 535 "])
def test_branch_spellings_are_valid_driver_facts(raw: str) -> None:
    assert make_fact("driver", raw, "--driver").value == raw.strip().lstrip("Rr")


@pytest.mark.parametrize("raw", ["5", "53", "535.", "R53", "535a", "RR535"])
def test_malformed_drivers_are_still_rejected(raw: str) -> None:
    from compat.errors import InputError

    with pytest.raises(InputError, match="malformed driver version"):
        make_fact("driver", raw, "--driver")


def test_cli_accepts_a_branch(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--driver", "535", "--gpu", "RTX 5090")
    assert r.code == 1, r.out + r.err
    assert (
        "Driver branch R535 (compared as its first release 535.54.03) cannot drive GeForce RTX 5090" in r.out
    )


# ---------------------------------------------------------------- the sweep


def test_sweep_every_gpu_by_branch_floors(matrix: Matrix) -> None:
    """Every GPU in the matrix x the first release of every branch in NVIDIA's table: an error exactly when the
    driver's branch is older than the first driver of the GPU's architecture."""
    from compat.checks.context import build_context
    from compat.checks.driver import check_driver_gpu_too_new
    from compat.facts import Facts, Gpu

    floors = sorted({Version(d).release[0] for r in matrix.cuda_releases if (d := r.min_driver.get("linux"))})
    firsts = first_drivers(matrix, "linux")
    n = errors = 0
    for row in matrix.gpus:
        for branch in floors:
            facts = Facts(
                {"os": make_fact("os", "linux", "t"), "driver": make_fact("driver", str(branch), "t")}
            )
            ctx = build_context(facts.with_gpus((Gpu(row.name, None, "--gpu", 0),), "--gpu"), matrix)
            got = [f for f in check_driver_gpu_too_new(ctx) if getattr(f, "severity", None) == "error"]
            need = firsts.get(row.cc)
            expect = need is not None and branch < need.branch
            assert bool(got) == expect, (row.name, branch, need)
            n += 1
            errors += bool(got)
    assert n > 2000 and errors > 300, (n, errors)
