"""doctor, smoke and suggest inspect the active environment (compat/target.py), and their header names it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.doctor.fakes import ROOT, fake_python
from tests.doctor.test_cli import CONSOLE_SCRIPT, doctor


def _without_note(interpreter: dict[str, str]) -> dict[str, str]:
    """The note depends on what compat's own environment has (tests/target covers it)."""
    return {k: v for k, v in interpreter.items() if k != "note"}


def _venv(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "userenv"
    exe = fake_python(root / "bin", "import-error")
    assert exe == root / "bin" / "python"
    return root, exe


def test_doctor_inspects_the_active_venv_and_names_it(matrix_dir: Path, tmp_path: Path) -> None:
    root, exe = _venv(tmp_path)
    env = dict(os.environ, VIRTUAL_ENV=str(root))
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json", env=env)
    doc = json.loads(res.stdout)
    assert _without_note(doc["interpreter"]) == {
        "python": str(exe),
        "reason": f"the active virtual environment $VIRTUAL_ENV={root}",
        "rule": "$VIRTUAL_ENV",
    }
    # The facts are the user's environment's, not compat's own (the fake answers Python 3.10.12, torch 2.5.1).
    assert doc["facts"]["python"]["raw"] == "3.10.12"
    assert doc["facts"]["torch"]["raw"].startswith("2.5.1")
    text = doctor(matrix_dir, "doctor", "--no-smoke", env=env).stdout
    assert text.splitlines()[1] == f"Interpreter: {exe} (the active virtual environment $VIRTUAL_ENV={root})"


def test_explicit_python_beats_the_active_venv(matrix_dir: Path, tmp_path: Path) -> None:
    root, _ = _venv(tmp_path)
    other = fake_python(tmp_path / "other" / "bin", "import-error")
    env = dict(os.environ, VIRTUAL_ENV=str(root))
    doc = json.loads(
        doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--python", str(other), env=env).stdout
    )
    assert _without_note(doc["interpreter"]) == {
        "python": str(other),
        "reason": "--python",
        "rule": "--python",
    }


def test_suggest_takes_python_from_the_active_venv(matrix_dir: Path, tmp_path: Path) -> None:
    root, exe = _venv(tmp_path)
    env = dict(os.environ, VIRTUAL_ENV=str(root))
    doc = json.loads(doctor(matrix_dir, "suggest", "--json", env=env).stdout)
    assert doc["interpreter"]["python"] == str(exe)
    assert doc["facts"]["python"]["raw"] == "3.10.12"
    text = doctor(matrix_dir, "suggest", env=env).stdout
    assert text.startswith(f"Interpreter: {exe} (")


def test_smoke_names_the_interpreter_it_trained_with(tmp_path: Path) -> None:
    root, exe = _venv(tmp_path)
    env = dict(os.environ, VIRTUAL_ENV=str(root), PYTHONPATH=str(ROOT))
    argv = [*CONSOLE_SCRIPT, "smoke", "--json", "--framework", "torch", "--device", "cpu"]
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    doc = json.loads(res.stdout)
    assert doc["status"] != "passed"  # the fake interpreter cannot import torch: compat's own could
    assert _without_note(doc["interpreter"]) == {
        "python": str(exe),
        "reason": f"the active virtual environment $VIRTUAL_ENV={root}",
        "rule": "$VIRTUAL_ENV",
    }
