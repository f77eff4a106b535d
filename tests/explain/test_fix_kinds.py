"""Issue 31: a fix's `kind` says what its command is: Python code is "python", what a shell runs is "shell"."""

from __future__ import annotations

import ast
from pathlib import Path

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


def _literal(node: ast.expr | None) -> str | None:
    """A string the code writes (an f-string with its fields as `1`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "1" for v in node.values)  # type: ignore[misc]
    return None


def test_every_fix_written_in_the_code_has_a_truthful_kind() -> None:
    """Fixes built in Python (checks, the recorder, the smoke tests): the same rule as the catalogue's."""
    root = Path(__file__).resolve().parents[2] / "compat"
    seen, wrong = 0, []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Fix"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            command = _literal(node.args[1] if len(node.args) > 1 else kw.get("command"))
            if not command:
                continue
            kind_node = node.args[2] if len(node.args) > 2 else kw.get("kind")
            if kind_node is not None and _literal(kind_node) is None:
                continue  # a kind computed at run time: the catalogue test covers the data it comes from
            kind = _literal(kind_node) or "shell"
            seen += 1
            if kind != ("python" if is_python_code(command) else "shell") and kind != "config":
                wrong.append(f"{path.relative_to(root)}:{node.lineno} {kind} {command}")
    assert seen > 10
    assert not wrong, wrong
