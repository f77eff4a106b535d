"""The environment compat inspects: --python, python -m compat, $VIRTUAL_ENV, $CONDA_PREFIX, its own, PATH."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from compat import target
from compat.target import HANDOFF_ENV, find_target, handoff_env, header_line, tool_install


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

    env = {"VIRTUAL_ENV": str(tmp_path / "broken"), "PATH": str(bindir)}
    t = find_target(
        None, env, which=which, prefix=str(tmp_path / "pipx" / "venvs" / "compat"), as_module=False
    )
    assert t.python == str(tmp_path / "python3")
    assert (t.reason, t.rule) == ("the python3 on PATH", "python3 on PATH")


def test_nothing_found_is_compats_own_interpreter(tmp_path: Path) -> None:
    t = find_target(
        None, {}, which=_no_which, prefix=str(tmp_path / "uv" / "tools" / "compat"), as_module=False
    )
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
    assert t.to_json() == {"python": sys.executable, "reason": "--python", "rule": "--python"}


def _which_to(exe: Path) -> object:
    def which(name: str, path: str | None = None) -> str | None:
        return str(exe) if name == "python3" else None

    return which


def test_python_m_compat_inspects_its_own_interpreter_even_with_a_venv_active(tmp_path: Path) -> None:
    """`/opt/venv/bin/python -m compat doctor` inspects /opt/venv, as `python -m pip` installs into it."""
    _fake_env(tmp_path / "venv")
    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which, as_module=True)
    assert (t.python, t.rule, t.reason) == (sys.executable, "python -m compat", "python -m compat")
    assert t.is_own


def test_compats_own_environment_comes_before_the_python3_on_path(tmp_path: Path) -> None:
    other = _fake_env(tmp_path / "system")
    t = find_target(None, {}, which=_which_to(other), prefix=str(tmp_path / "opt" / "venv"), as_module=False)
    assert (t.python, t.rule) == (sys.executable, "compat's own environment")


def test_an_active_venv_comes_before_compats_own_environment(tmp_path: Path) -> None:
    exe = _fake_env(tmp_path / "venv")
    t = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which, as_module=False)
    assert (t.python, t.rule) == (str(exe), "$VIRTUAL_ENV")


@pytest.mark.parametrize(
    ("prefix", "marker", "tool"),
    [
        ("home/u/.local/share/pipx/venvs/compat", None, "pipx"),
        ("home/u/.local/share/uv/tools/compat", None, "uv tool"),
        ("opt/tools/compat", "pipx_metadata.json", "pipx"),
        ("opt/tools/compat", "uv-receipt.toml", "uv tool"),
        ("home/u/.cache/uv/environments-v2/compat-1a2b/3c4d", None, "uv tool"),
        ("home/u/.local/share/pipx/.cache/5e6f", None, "pipx"),
        ("home/u/.cache/pipx/5e6f", None, "pipx"),
        ("opt/venv", None, None),
        ("srv/environments-venv/app", None, None),
        ("home/u/pipx-project/venvs", None, None),
    ],
)
def test_tool_installs_are_recognised(
    tmp_path: Path, prefix: str, marker: str | None, tool: str | None
) -> None:
    root = tmp_path / prefix
    root.mkdir(parents=True)
    if marker:
        (root / marker).write_text("", encoding="utf-8")
    assert tool_install(str(root)) == tool


def test_a_tool_install_skips_its_own_environment_for_the_python3_on_path(tmp_path: Path) -> None:
    other = _fake_env(tmp_path / "system")
    prefix = tmp_path / "pipx" / "venvs" / "compat"
    t = find_target(None, {}, which=_which_to(other), prefix=str(prefix), as_module=False)
    assert (t.python, t.rule) == (str(other), "python3 on PATH")


def test_the_handoff_of_a_parent_compat_beats_python_m_compat(tmp_path: Path) -> None:
    exe = _fake_env(tmp_path / "venv")
    chosen = find_target(None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which, as_module=False)
    t = find_target(None, handoff_env(chosen), which=_no_which, as_module=True)
    assert (t.python, t.rule, t.reason) == (str(exe), "$VIRTUAL_ENV", chosen.reason)
    # A handoff that names no interpreter is ignored, not trusted.
    bad = {HANDOFF_ENV: '{"python": "/nonexistent/python", "reason": "x", "rule": "$VIRTUAL_ENV"}'}
    assert find_target(None, bad, which=_no_which, as_module=True).rule == "python -m compat"


def test_note_when_compats_own_interpreter_has_a_framework(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = _fake_env(tmp_path / "venv")
    monkeypatch.setattr(target, "own_frameworks", lambda: {"torch": "2.13.0"})
    monkeypatch.setattr(target, "frameworks_in", lambda p: {})
    t = find_target(
        None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which, as_module=False, note=True
    )
    assert t.python == str(exe)
    assert t.note == (
        f"compat's own interpreter {sys.executable} has torch 2.13.0; pass --python {sys.executable} to inspect it"
    )
    assert t.to_json()["note"] == t.note
    assert header_line(t.to_json()).splitlines()[1] == t.note
    # --python is the user's own choice: no note.
    assert find_target(str(exe), {}, note=True).note == ""
    # The inspected one has torch too: nothing to say.
    monkeypatch.setattr(target, "frameworks_in", lambda p: {"torch": "2.5.1"} if p == str(exe) else {})
    t = find_target(
        None, {"VIRTUAL_ENV": str(tmp_path / "venv")}, which=_no_which, as_module=False, note=True
    )
    assert t.note == ""


def test_note_when_compats_own_is_inspected_without_a_framework_and_the_next_one_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = _fake_env(tmp_path / "system")
    monkeypatch.setattr(target, "own_frameworks", dict)
    monkeypatch.setattr(target, "frameworks_in", lambda p: {"torch": "2.5.1"} if p == str(other) else {})
    t = find_target(
        None, {}, which=_which_to(other), prefix=str(tmp_path / "opt"), as_module=False, note=True
    )
    assert t.rule == "compat's own environment"
    assert t.note == f"the python3 on PATH {other} has torch 2.5.1; pass --python {other} to inspect it"
    monkeypatch.setattr(target, "frameworks_in", lambda p: {})
    t = find_target(
        None, {}, which=_which_to(other), prefix=str(tmp_path / "opt"), as_module=False, note=True
    )
    assert t.note == "" and "note" not in t.to_json()


def test_the_markdown_report_carries_the_note() -> None:
    from compat.report_markdown import doctor_markdown

    note = (
        "compat's own interpreter /opt/venv/bin/python has torch 2.13.0; pass --python /opt/venv/bin/python"
    )
    interp = {
        "python": "/usr/bin/python3",
        "reason": "the python3 on PATH",
        "rule": "python3 on PATH",
        "note": note,
    }
    text = doctor_markdown({"verdict": "ok", "findings": [], "skipped": [], "interpreter": interp})
    lines = text.splitlines()
    at = lines.index("Interpreter inspected: `/usr/bin/python3` (the python3 on PATH)")
    assert lines[at + 2] == note
