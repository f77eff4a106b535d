"""Issue 13, "What was seen": each case, with the fix compat gives now and its re-check (closure)."""

from __future__ import annotations

from compat.facts import make_fact
from compat.findings import Finding
from compat.pipeline.check import check_stack
from compat.suggest import suggest
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


# -- suggest and check agree --------------------------------------------------------------------------------------


def _check_of(matrix, facts, changes):  # type: ignore[no-untyped-def]
    from compat.facts import apply_flags

    return check_stack(apply_flags(facts, changes), matrix)


def test_suggest_on_535_and_4090_passes_check_without_warning(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(driver="535.104.05", gpu="RTX 4090", python="3.11")
    s = suggest(facts, matrix)
    assert s.torch is not None
    rep = _check_of(matrix, facts, s.torch.changes)
    assert [f.title for f in rep.findings if f.severity in ("error", "warning")] == []


def test_suggest_prefers_pypi_cu128_over_cu129_with_a_warning(matrix) -> None:  # type: ignore[no-untyped-def]
    s = suggest(facts_of(driver="570.124.06", gpu="RTX 5090", python="3.9"), matrix)
    assert s.torch is not None and (s.torch.version, s.torch.variant) == ("2.8.0", "cu128")
    assert s.torch.wheel == "pypi-default" and s.torch.command == "pip install torch==2.8.0"


def test_what_blocks_newer_names_cu118_builds_for_2_1_to_2_7(matrix) -> None:  # type: ignore[no-untyped-def]
    s = suggest(facts_of(driver="470.82.01", gpu="RTX 3090", python="3.10"), matrix)
    for b in s.blocked:
        if "525.60.13" in b["why"] and b["what"].startswith("torch"):
            lo = b["what"].split()[1]
            assert tuple(int(x) for x in lo.split(".")[:2]) >= (2, 8), b


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


# -- Framework-specific advice ------------------------------------------------------------------------------------

OOM_LOG = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "23.65 GiB of which 1.12 GiB is free."
)


def test_oom_advice_invents_no_flags_and_python_is_not_a_shell_command() -> None:
    from compat.explain import diagnose_text
    from compat.explain.render import render

    diags = diagnose_text(OOM_LOG)
    oom = next(d for d in diags if d.category == "gpu_oom")
    assert all("--batch-size" not in (f.command or "") for f in oom.fixes)
    py = [f for f in oom.fixes if (f.command or "").startswith("torch.")]
    assert py and all(f.kind == "python" for f in py)
    text = render(diags, "log", 1)
    assert "$ torch.autocast" not in text and "torch.autocast(" in text


def test_no_kernel_image_advice_names_no_foreign_arch() -> None:
    from compat.explain import diagnose_text

    log = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    d = next(d for d in diagnose_text(log) if d.category == "arch_not_supported")
    assert all('TORCH_CUDA_ARCH_LIST="3.5"' not in (f.command or "") for f in d.fixes)


TF_OOM_LOG = (
    "(0) Resource exhausted: OOM when allocating tensor with shape[8,64,224,224] and type float on "
    "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
)


def test_oom_advice_names_only_the_framework_of_the_log() -> None:
    from compat.explain import diagnose_text

    tf = next(d for d in diagnose_text(TF_OOM_LOG) if d.category == "gpu_oom")
    assert not [
        f for f in tf.fixes if "torch" in f"{f.text} {f.command}".lower() or "XLA_" in (f.command or "")
    ]
    torch = next(d for d in diagnose_text(OOM_LOG) if d.category == "gpu_oom")
    assert not [f for f in torch.fixes if "XLA" in f"{f.text} {f.command}" or "tf." in (f.command or "")]
    assert any("torch.autocast" in (f.command or "") for f in torch.fixes)


def test_no_framework_install_command_is_built_outside_the_solver() -> None:
    # Issue 13: the `pip install torch==… --index-url …` fix was built in about five places; the signature
    # catalogue now points at `compat suggest` (re-checked) instead of a fixed index.
    from tests.conftest import ROOT

    text = (ROOT / "matrix" / "signatures.yaml").read_text(encoding="utf-8")
    assert "download.pytorch.org" not in text
    for path in (ROOT / "compat").rglob("*.py"):
        if path.name == "installcmd.py":  # the one place that writes install commands
            continue
        assert "download.pytorch.org" not in path.read_text(encoding="utf-8"), path
