"""The environment compat inspects: --python, then $VIRTUAL_ENV, $CONDA_PREFIX, the python on PATH, its own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from compat.target import find_target


def _fake_env(root: Path, windows: bool = False) -> Path:
    exe = root / ("Scripts/python.exe" if windows else "bin/python")
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


def _no_which(name: str, path: str | None = None) -> None:
    return None


def test_explicit_python_wins(tmp_path: Path) -> None:
    venv = _fake_env(tmp_path / "venv")
    t = find_target("/opt/py/bin/python3", {"VIRTUAL_ENV": str(venv.parent.parent)})
    assert (t.python, t.reason) == ("/opt/py/bin/python3", "--python")


def test_active_venv_is_inspected_not_compats_own(tmp_path: Path) -> None:
    exe = _fake_env(tmp_path / "venv")
    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv"), "CONDA_PREFIX": "/nope"}, which=_no_which)
    assert t.python == str(exe)
    assert "$VIRTUAL_ENV" in t.reason
    assert not t.is_own


def test_conda_when_no_venv(tmp_path: Path) -> None:
    exe = _fake_env(tmp_path / "conda")
    t = find_target(None, {"CONDA_PREFIX": str(tmp_path / "conda")}, which=_no_which)
    assert t.python == str(exe)
    assert "$CONDA_PREFIX" in t.reason


def test_windows_layout(tmp_path: Path) -> None:
    exe = _fake_env(tmp_path / "venv", windows=True)
    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, windows=True, which=_no_which)
    assert t.python == str(exe)


def test_a_venv_without_an_interpreter_falls_through_to_path(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    bindir = tmp_path / "bin"
    exe = _fake_env(tmp_path / "other")
    os.symlink(exe, tmp_path / "python3")

    def which(name: str, path: str | None = None) -> str | None:
        return str(tmp_path / "python3") if name == "python3" and path == str(bindir) else None

    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "broken"), "PATH": str(bindir)}, which=which)
    assert t.python == str(tmp_path / "python3")
    assert t.reason == "the python3 on PATH"


def test_nothing_found_is_compats_own_interpreter() -> None:
    t = find_target(None, {}, which=_no_which)
    assert t.python == sys.executable
    assert t.is_own


def test_a_venv_linking_to_compats_own_base_interpreter_is_not_compats_own(tmp_path: Path) -> None:
    """pipx's venv and the user's venv both link to one base python: the user's venv is still another one."""
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    os.symlink(sys.executable, venv / "python")
    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which)
    assert t.python == str(venv / "python")
    assert not t.is_own
    assert t.argument == str(venv / "python")


def test_own_interpreter_is_probed_in_process() -> None:
    t = find_target(sys.executable, {})
    assert t.is_own and t.argument is None
    assert t.to_json() == {"python": sys.executable, "reason": "--python"}
