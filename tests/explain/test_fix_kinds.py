"""Issue 31: a fix's `kind` says what its command is: Python code is "python", what a shell runs is "shell"."""

from __future__ import annotations

import ast

from compat.explain.catalogue import default_catalogue
from compat.explain.render import render
from compat.findings import Fix

_CODE = (ast.Call, ast.Assert, ast.Import, ast.ImportFrom, ast.Assign, ast.Attribute)


def is_python_code(command: str) -> bool:
    """Parses as Python and does something Python does (a call, an assert, an import, an assignment).
    `nvidia-smi -L` parses too (a subtraction of names), but does none of these."""
    try:
        tree = ast.parse(command)
    except SyntaxError:
        return False
    return any(isinstance(n, _CODE) for n in ast.walk(tree))


def catalogue_fixes() -> list[tuple[str, Fix]]:
    cat = default_catalogue()
    out: list[tuple[str, Fix]] = []
    for name, c in cat.categories.items():
        out += [(name, f) for f in c.fixes]
        out += [(name, c.confirm)] if c.confirm else []
        out += [(f"{name}/{fw}", f) for fw, f in c.confirm_for]
    for s in cat.signatures:
        out += [(s.id, f) for f in s.fixes]
    return [(w, f) for w, f in out if f.command]


def test_the_classifier_itself() -> None:
    assert is_python_code("assert labels.min() >= 0 and labels.max() < num_classes")
    assert is_python_code("DataLoader(dataset, num_workers=0)")
    assert not is_python_code("nvidia-smi -L")
    assert not is_python_code("CUDA_LAUNCH_BLOCKING=1 python train.py")
    assert not is_python_code('python -c "import torch; print(torch.__version__)"')
    assert not is_python_code("export NCCL_SOCKET_IFNAME=eth0 NCCL_IB_DISABLE=1")


def test_every_catalogue_fix_kind_is_truthful() -> None:
    fixes = catalogue_fixes()
    assert len(fixes) > 50
    wrong = [
        (where, f.kind, f.command)
        for where, f in fixes
        if f.kind != ("python" if is_python_code(f.command or "") else "shell")
    ]
    assert not wrong, wrong


def test_explain_does_not_show_python_as_a_shell_command() -> None:
    out = render(
        __import__("compat.explain", fromlist=["diagnose_lines"]).diagnose_lines(
            ["RuntimeError: CUDA error: an illegal memory access was encountered"]
        ),
        "x.log",
        1,
    )
    assert "assert labels.min() >= 0" in out
    assert "$ assert" not in out
