"""Fixes are a stage after resolution: checks say how a finding could be repaired, the pipeline's solver stage
attaches the re-checked fixes, and its re-check memo lives for one call only."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Optional

import pytest

from compat.findings import Finding, Fix, Repair
from compat.pipeline.check import check_stack, fixes_for
from compat.resolver import resolve
from compat.solver.solve import Recheck, closes, closes_all
from tests.solver.sweep import facts_of

ROOT = Path(__file__).resolve().parents[2]

# Stacks and the fixes `compat check` gave for them before fixes became a stage of their own (issue 26): text and
# changes, in order. The first of each pair is the solver's cheapest re-checked change.
AND_CUDA_2_16_1 = "Install TensorFlow 2.16.1's pip CUDA libraries (CUDA 12.3, cuDNN 8.9.7) (pip assumed)"
CASES: list[tuple[dict[str, Optional[str]], bool, str, list[tuple[str, dict[str, str]]]]] = [
    (  # driver too old for the torch wheel's CUDA: another variant, else a driver upgrade (an RTX 3090: R470 drives
        # Ampere; an RTX 4090 it cannot drive at all, driver.gpu-too-new)
        {"torch": "2.5.1+cu121", "driver": "470.82.01", "gpu": "RTX 3090", "python": "3.12"},
        False,
        "driver.cuda",
        [
            ("Install the cu118 build of torch 2.5.1 (pip assumed)", {"torch": "2.5.1+cu118"}),
            ("Install NVIDIA driver ≥ 530.30.02 (Linux)", {"driver": "530.30.02"}),
        ],
    ),
    (  # the wheel has no kernels for the GPU
        {"torch": "2.1.0+cu118", "driver": "580.65.06", "gpu": "RTX 5090", "python": "3.12"},
        False,
        "wheel.arch",
        [("Install the cu128 build of torch 2.7.1 (pip assumed)", {"torch": "2.7.1+cu128"})],
    ),
    (  # no wheels for this Python: the solver's Python change replaces the manual advice
        {"torch": "1.13.1+cu117", "driver": "580.65.06", "gpu": "RTX 4090", "python": "3.12"},
        False,
        "python.framework",
        [
            ("Install the cu121 build of torch 2.2.2 (pip assumed)", {"torch": "2.2.2+cu121"}),
            (
                "Use Python 3.11 (torch 1.13.1 publishes wheels for it), e.g. in a new virtual environment",
                {"python": "3.11"},
            ),
        ],
    ),
    (  # ... and when no re-checked fix changes the Python, the manual advice comes last
        {"torch": "2.5.1+cu121", "driver": "580.65.06", "gpu": "RTX 4090", "python": "3.13t"},
        False,
        "python.framework",
        [
            ("Install the cu126 build of torch 2.7.1 (pip assumed)", {"torch": "2.7.1+cu126"}),
            ("Use a Python PyTorch 2.5.1+cu121 has wheels for: 3.9, 3.10, 3.11, 3.12, 3.13", {}),
        ],
    ),
    (  # cuDNN for the wrong CUDA: the solver's changes replace the generic advice
        {"cuda": "12.8", "cudnn": "8.2.4", "driver": "535.104.05", "gpu": "RTX 4090"},
        False,
        "cudnn.cuda",
        [
            ("Install cuDNN 8.8.0 (published for CUDA 11.x, CUDA 12.x)", {"cudnn": "8.8.0"}),
            ("Use CUDA toolkit 11.8 (CUDA 11.8 GA)", {"cuda": "11.8"}),
        ],
    ),
    (  # TensorFlow: its pip CUDA libraries first, a solver fix that changes CUDA and cuDNN to its wheels' (#27)
        {"tensorflow": "2.16.1", "cuda": "11.2", "cudnn": "8.1.0", "python": "3.12", "gpu": "RTX 4090"},
        True,
        "tensorflow.cuda",
        [
            (AND_CUDA_2_16_1, {"cuda": "12.3", "cudnn": "8.9.7"}),
            ("Use CUDA toolkit 12.3 (CUDA 12.3 GA)", {"cuda": "12.3"}),
        ],
    ),
    (
        {"tensorflow": "2.16.1", "cuda": "11.2", "cudnn": "8.1.0", "python": "3.12", "gpu": "RTX 4090"},
        True,
        "tensorflow.cudnn",
        [
            (AND_CUDA_2_16_1, {"cuda": "12.3", "cudnn": "8.9.7"}),
            ("Install cuDNN 8.9.0 (published for CUDA 11.x, CUDA 12.x)", {"cudnn": "8.9.0"}),
        ],
    ),
    (  # only the driver's CUDA version known: the static advice first, then the solver's framework change
        {"torch": "2.5.1+cu124", "driver_cuda": "11.4"},
        False,
        "driver.cuda",
        [
            ("Install an NVIDIA driver for CUDA 12.x (≥ 525.60.13)", {}),
            ("Install the cu118 build of torch 2.5.1 (pip assumed)", {"torch": "2.5.1+cu118"}),
        ],
    ),
]


def _one(findings: list[Finding], fid: str) -> Finding:
    found = [f for f in findings if f.id == fid]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("flags", "require_gpu", "fid", "expected"), CASES)
def test_the_pipeline_attaches_the_same_fixes_as_before(
    matrix: Any, flags, require_gpu, fid, expected
) -> None:  # type: ignore[no-untyped-def]
    rep = check_stack(facts_of(**flags), matrix, require_gpu=require_gpu)
    f = _one(rep.findings, fid)
    assert [(x.text, x.change_map) for x in f.fixes] == expected


@pytest.mark.parametrize(("flags", "require_gpu", "fid", "expected"), CASES)
def test_resolve_alone_gives_repair_axes_and_no_solver_fix(
    matrix: Any, flags, require_gpu, fid, expected
) -> None:  # type: ignore[no-untyped-def]
    del expected
    f = _one(resolve(facts_of(**flags), matrix, require_gpu=require_gpu).findings, fid)
    assert f.repair is not None and f.repair.axes
    # Only the check's own (static) advice: every fix with stack changes comes from the solver stage.
    assert not any(x.changes for x in f.fixes)


def test_repair_is_not_in_the_json_nor_in_equality() -> None:
    a = Finding("x.y", "error", "t", "m", repair=Repair(("torch",)))
    b = Finding("x.y", "error", "t", "m")
    assert a == b
    assert "repair" not in a.to_json()


def test_repair_combines_as_each_check_said() -> None:
    own, s1, s2 = (
        Fix("own"),
        Fix("s1", changes=(("torch", "2.5.1"),)),
        Fix("s2", changes=(("python", "3.11"),)),
    )
    assert Repair(("torch",)).combine((), (s1,)) == (s1,)
    assert Repair(("torch",)).combine((own,), (s1,)) == (s1, own)  # the driver's manual way round, after
    assert Repair(("cuda",), static="before").combine((own,), (s1,)) == (own, s1)  # TensorFlow
    assert Repair(("cudnn",), static="fallback").combine((own,), (s1,)) == (s1,)  # cuDNN: replaced ...
    assert Repair(("cudnn",), static="fallback").combine((own,), ()) == (own,)  # ... only when it found any
    py = Repair(("torch", "python"), unless_axis="python")
    assert py.combine((own,), (s1,)) == (s1, own)  # no solver fix changes the Python: the manual one stays
    assert py.combine((own,), (s1, s2)) == (s1, s2)
    assert py.combine((own,), ()) == (own,)
    with pytest.raises(ValueError):
        Repair(("torch",), static="first")


def test_checks_never_import_the_solver() -> None:
    for path in sorted((ROOT / "compat" / "checks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            assert not any(n.startswith(("compat.solver", "compat.pipeline")) for n in names), path.name


def test_no_module_level_cache_in_the_solver() -> None:
    src = (ROOT / "compat" / "solver" / "solve.py").read_text()
    for node in ast.parse(src).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = node.value
            assert not isinstance(value, (ast.Dict, ast.List, ast.Set, ast.Call)), ast.unparse(node)


def test_the_recheck_memo_is_local_to_one_call(matrix: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return resolve(*a, **k)

    monkeypatch.setattr("compat.solver.solve.resolve", counting)
    facts = facts_of(torch="2.5.1+cu121", driver="470.82.01", gpu="RTX 3090", python="3.12")
    first = check_stack(facts, matrix)
    n = len(calls)
    assert n > 1  # the unchanged stack and at least one candidate
    second = check_stack(facts, matrix)
    assert len(calls) == 2 * n  # nothing remembered from the first call
    assert first.to_json() == second.to_json()
    # One Recheck resolves each stack once; another starts empty.
    r = Recheck(facts, matrix)
    r.findings((("torch", "2.5.1+cu118"),))
    r.findings((("torch", "2.5.1+cu118"),))
    assert len(calls) == 2 * n + 1
    Recheck(facts, matrix).findings((("torch", "2.5.1+cu118"),))
    assert len(calls) == 2 * n + 2


def test_one_closure_rule() -> None:
    err = Finding("driver.cuda", "error", "old", "m", subject="torch")
    same_key = Finding("driver.cuda", "error", "another title", "m", subject="torch")
    weaker = Finding("driver.cuda", "warning", "old", "m", subject="torch")
    other = Finding("wheel.arch", "error", "t", "m", facts={"torch": "2.5.1"})
    assert not closes([err], [same_key], err)  # matched on (id, subject), not on the title
    assert closes([err], [weaker], err)  # a weaker finding of the same problem closes it
    assert not closes([err], [other], err)  # a new error
    assert closes_all([err, other], [], [err, other]) and closes_all([], [], [])


def test_fixes_for_goes_through_the_pipeline(matrix: Any) -> None:
    facts = facts_of(torch="2.5.1+cu121", driver="470.82.01", gpu="RTX 3090", python="3.12")
    got = fixes_for(facts, matrix, "driver.cuda", "torch", "torch")
    assert [x.change_map for x in got] == [{"torch": "2.5.1+cu118"}]
    assert fixes_for(facts, matrix, "driver.cuda", "torch", "driver")[0].change_map == {"driver": "530.30.02"}
