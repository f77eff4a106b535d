"""`compat smoke` on the command line: flags, one-line errors, skips and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    "args",
    [
        ["--steps", "0"],
        ["--timeout", "-1"],
        ["--framework", "mxnet"],
        ["--device", "tpu"],
        ["--batch-size", "0"],
        ["--steps", "many"],
        ["--python", "/no/such/python"],
        ["--no-such-flag"],
    ],
)
def test_bad_flags_are_one_line_exit_2(run, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    res = run("smoke", *args)
    assert res.code == 2, res.err
    assert res.out == ""
    assert res.err.startswith("compat: error: ") and res.err.count("\n") == 1


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with neither framework: a fresh virtual environment without pip."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)],
        check=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return str(venv / "bin" / "python")


def test_auto_with_no_framework_is_skipped_exit_0(run, bare_python: str) -> None:  # type: ignore[no-untyped-def]
    res = run("smoke", "--python", bare_python, "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert (doc["status"], doc["framework"], doc["schema_version"]) == ("skipped", None, 1)
    assert "no torch, tensorflow or jax" in doc["message"]
    assert [f["command"] for f in doc["fixes"]] == ["compat suggest", "compat suggest"]


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_explicit_framework_missing_is_exit_1(run, bare_python: str, framework: str) -> None:  # type: ignore[no-untyped-def]
    res = run("smoke", "--python", bare_python, "--framework", framework, "--json")
    assert res.code == 1
    doc = json.loads(res.out)
    assert (doc["status"], doc["framework"]) == ("skipped", framework)
    assert "not installed" in doc["message"]


def test_explicit_framework_missing_text(run, bare_python: str) -> None:  # type: ignore[no-untyped-def]
    res = run("smoke", "--python", bare_python, "--framework", "torch")
    assert res.code == 1
    assert res.out.startswith("compat smoke: SKIPPED")
    assert "[smoke.not_installed]" in res.out


def test_smoke_is_listed_in_help(run) -> None:  # type: ignore[no-untyped-def]
    res = run("smoke", "--help")
    assert res.code == 0
    for flag in (
        "--framework",
        "--device",
        "--steps",
        "--batch-size",
        "--amp",
        "--find-max-batch",
        "--timeout",
        "--json",
        "--python",
    ):
        assert flag in res.out


def test_command_module_imports_no_framework() -> None:
    code = (
        "import sys, compat.cli, compat.smoke; "
        "print(sorted(m for m in ('torch', 'tensorflow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        stdin=subprocess.DEVNULL,
    ).stdout
    assert out.strip() == "[]"
