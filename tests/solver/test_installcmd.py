"""compat.installcmd: the one place that writes install commands, in each installer and form (issue 26, item 3)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compat.installcmd import (
    JAX_CUDA_RELEASES,
    PIP,
    Installer,
    dockerfile_installer,
    jax_command,
    jax_requirement_command,
    no_isolation_command,
    pin_command,
    requirement_command,
    tf_and_cuda,
    venv_command,
)
from compat.jaxmatrix import jax_table
from compat.matrix import Matrix
from tests.conftest import ROOT


def test_the_shell_form_keeps_the_commands_compat_wrote_before() -> None:
    assert pin_command("torch", "2.4.1") == "pip install torch==2.4.1"
    assert (
        pin_command("torch", "2.4.1", index="https://download.pytorch.org/whl/cu121")
        == "pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121"
    )
    assert pin_command("torchvision", "0.19.*") == "pip install torchvision==0.19.*"
    assert pin_command("xformers", "VERSION", no_deps=True) == "pip install --no-deps xformers==VERSION"
    assert requirement_command("nvidia-cudnn-cu12>=9") == "pip install 'nvidia-cudnn-cu12>=9'"
    assert requirement_command("jax[cuda12]", upgrade=True) == "pip install -U 'jax[cuda12]'"
    assert tf_and_cuda("2.17.0") == "pip install 'tensorflow[and-cuda]==2.17.0'"
    assert tf_and_cuda(None) == "pip install 'tensorflow[and-cuda]'"
    assert (
        venv_command(".venv-tf", "tensorflow[and-cuda]")
        == "python -m venv .venv-tf && .venv-tf/bin/pip install 'tensorflow[and-cuda]'"
    )
    assert no_isolation_command("flash-attn==2.8.3") == "pip install --no-build-isolation flash-attn==2.8.3"
    assert jax_requirement_command("jax==0.10.2") == 'pip install -U "jax==0.10.2"'


def test_the_installer_is_respected() -> None:
    uv, conda = Installer("uv", True), Installer("conda", True)
    assert pin_command("torch", "2.4.1", inst=uv) == "uv pip install torch==2.4.1"
    assert tf_and_cuda("2.17.0", conda) == "python -m pip install 'tensorflow[and-cuda]==2.17.0'"


@pytest.mark.parametrize(("tool", "head"), [("pip", "RUN pip"), ("uv", "RUN uv pip"), ("conda", "RUN pip")])
def test_the_dockerfile_form_is_the_same_command_as_a_run_line(tool: str, head: str) -> None:
    inst = dockerfile_installer(tool)
    assert inst.form == "dockerfile" and PIP.form == "shell"
    assert jax_requirement_command("jaxlib==0.4.25+cuda12.cudnn89", JAX_CUDA_RELEASES, inst) == (
        f'{head} install -U "jaxlib==0.4.25+cuda12.cudnn89" -f {JAX_CUDA_RELEASES}'
    )
    assert pin_command("torch", "2.4.1", inst=inst) == f"{head} install torch==2.4.1"


def test_jax_commands_in_both_forms(matrix: Matrix) -> None:
    table = jax_table(matrix)
    old = table.release("0.4.25")
    assert old is not None
    assert jax_command(old, 12) == f'pip install -U "jax[cuda12_pip]==0.4.25" -f {JAX_CUDA_RELEASES}'
    assert jax_command(old, 12, dockerfile_installer("uv")) == (
        f'RUN uv pip install -U "jax[cuda12_pip]==0.4.25" -f {JAX_CUDA_RELEASES}'
    )
    new = table.release("0.10.2")
    assert new is not None
    assert jax_command(new, None, dockerfile_installer("pip")) == 'RUN pip install -U "jax==0.10.2"'


# -- no install command is assembled outside compat/installcmd.py

_HEADS = (
    "pip install",
    "pip uninstall",
    "uv pip ",
    "python -m pip ",
    "RUN pip",
    "RUN uv pip",
    "conda install",
)
# (module, function) that still write one, each with the reason.
_ALLOWED = {
    # Prose: the command the user typed, quoted in the message, not a fix.
    ("compat/checks/torch.py", "check_torch_variant"),
}


def _head_text(node: ast.AST) -> str | None:
    """The literal text of an f-string, a constant or a `+` chain, with `{}` for what is filled in."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_head_text(v) or "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _head_text(node.left)
    return None


def _extension_labels(tree: ast.AST) -> set[int]:
    return {
        id(arg)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "ExtensionBuild"
        for arg in call.args
    }


def test_no_install_command_is_assembled_outside_installcmd() -> None:
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "compat").rglob("*.py")):
        if path.name == "installcmd.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        labels = _extension_labels(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if id(node) in labels or not _assembled_node(node):
                    continue
                found.add((Path(path).relative_to(ROOT).as_posix(), fn.name))
    assert found <= _ALLOWED, sorted(found - _ALLOWED)


def _assembled_node(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "replace" and node.args:
        text = _head_text(node.args[0])
    elif isinstance(node, (ast.JoinedStr, ast.BinOp)):
        text = _head_text(node)
    else:
        return False
    if text is None:
        return False
    text = text.lstrip("'`\"")
    return text.startswith(_HEADS) or (text.startswith("RUN {}") and " install " in text)
