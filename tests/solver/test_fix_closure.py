"""The fix each seen case gets is the smallest one that works and passes its own re-check (closure): no no-op
reinstalls, the installer respected, no fix compat itself would reject, none that overshoots or points nowhere."""

from __future__ import annotations

from compat.facts import make_fact
from compat.findings import Finding
from compat.pipeline.check import check_stack
from tests.solver.sweep import closure_failures, facts_of


def _finding(report, fid: str) -> Finding:  # type: ignore[no-untyped-def]
    return next(f for f in report.findings if f.id == fid)


# -- No-op reinstalls ---------------------------------------------------------------------------------------------


def test_cpu_wheel_of_the_same_version_is_reinstalled_with_its_exact_pin(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(torch="2.13.0+cpu", driver="580.65.06", gpu="RTX 4090", python="3.12")
    f = _finding(check_stack(facts, matrix), "framework.cpu-build")
    fix = f.fixes[0]
    # A plain `pip install torch==2.13.0 --index-url …/cu130` answers "Requirement already satisfied".
    assert fix.command == (
        "pip install --force-reinstall torch==2.13.0+cu130 --index-url https://download.pytorch.org/whl/cu130"
    )
    assert fix.change_map == {"torch": "2.13.0+cu130"} and fix.kind == "shell"
    assert not list(closure_failures(matrix, facts, "cpu wheel"))


def test_another_cuda_variant_of_the_installed_version_is_reinstalled(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(torch="2.1.0+cu121", driver="470.82.01")
    f = _finding(check_stack(facts, matrix), "driver.cuda")
    assert f.fixes[0].command == (
        "pip install --force-reinstall torch==2.1.0+cu118 --index-url https://download.pytorch.org/whl/cu118"
    )
    assert not list(closure_failures(matrix, facts, "cu121 on 470"))


def test_tensorflow_cpu_is_uninstalled_before_the_cuda_build(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(tensorflow="2.21.0", driver="580.65.06", gpu="RTX 4090", python="3.12")
    facts = facts.with_values(
        {"tf_build": make_fact("tf_build", "cpu", "installed distribution tensorflow-cpu")}
    )
    f = _finding(check_stack(facts, matrix), "framework.cpu-build")
    assert (
        f.fixes[0].command == "pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]==2.21.0'"
    )
    assert not list(closure_failures(matrix, facts, "tensorflow-cpu"))


def test_the_installer_is_respected(matrix) -> None:  # type: ignore[no-untyped-def]
    base = facts_of(torch="2.1.0+cu121", driver="470.82.01")
    uv = base.with_values({"installer": make_fact("installer", "uv", "torch's INSTALLER file")})
    cmd = _finding(check_stack(uv, matrix), "driver.cuda").fixes[0].command or ""
    assert cmd.startswith("uv pip install --reinstall-package torch torch==2.1.0+cu118 ")
    conda = base.with_values({"installer": make_fact("installer", "conda", "torch's INSTALLER file")})
    assert (_finding(check_stack(conda, matrix), "driver.cuda").fixes[0].command or "").startswith(
        "python -m pip install --force-reinstall torch==2.1.0+cu118"
    )


# -- Fixes compat itself rejects ----------------------------------------------------------------------------------


def test_python_fix_for_pascal_on_535_is_a_release_check_accepts(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(torch="2.4.0", python="3.13", driver="535.104.05", gpu="GTX 1080")
    f = _finding(check_stack(facts, matrix), "python.framework")
    changes = [x.change_map for x in f.fixes if x.change_map]
    assert changes[0] == {"torch": "2.5.1+cu121"}  # the nearest newer minor with cp313 wheels that runs here
    assert {"python": "3.12"} in changes
    assert all(c.get("torch", "").split("+")[0] != "2.15.0" for c in changes)
    assert not list(closure_failures(matrix, facts, "2.4.0 py3.13"))


def test_tensorflow_fix_on_a_cuda_11_driver_does_not_need_cuda_12(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(tensorflow="2.13", python="3.12", driver="470.82.01")
    f = _finding(check_stack(facts, matrix), "python.framework")
    assert all(x.change_map.get("tensorflow") != "2.21.0" for x in f.fixes)
    assert not list(closure_failures(matrix, facts, "tf 2.13 py3.12 470"))


def test_cpu_build_on_535_gets_the_same_release_not_a_downgrade(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(torch="2.13.0+cpu", driver="535.104.05", gpu="RTX 4090", python="3.12")
    f = _finding(check_stack(facts, matrix), "framework.cpu-build")
    first = f.fixes[0].change_map["torch"]
    assert first.startswith("2.13.0+cu")  # not 2.7.1+cu118
    assert not list(closure_failures(matrix, facts, "cpu on 535"))


# -- Fixes that overshoot or point nowhere -----------------------------------------------------------------------


def test_toolkit_fix_for_ada_on_cuda_11_7_is_11_8(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(cuda="11.7", gpu="RTX 4090", driver="535.104.05")
    f = _finding(check_stack(facts, matrix), "toolkit.arch")
    assert f.fixes[0].change_map == {"cuda": "11.8"} and f.fixes[0].kind == "manual"
    assert not list(closure_failures(matrix, facts, "11.7 on 4090"))


def test_toolkit_fix_matches_the_framework_cuda_major(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(cuda="11.7", gpu="RTX 4090", driver="580.65.06", torch="2.4.0+cu121")
    f = _finding(check_stack(facts, matrix), "toolkit.arch")
    assert f.fixes[0].change_map == {"cuda": "12.0"}
