"""The interpreter rule end to end, with real virtual environments: compat installed in the project's environment
or as an isolated tool (pipx), that environment activated or not, started as the console script or as
`python -m compat`. Issue 31: `/opt/venv/bin/python -m compat doctor` inspected the python3 on PATH."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.target.venvs import ROOT, clean_env, dependencies, make_env


@dataclass(frozen=True)
class Envs:
    project: Path
    """compat installed in it, with torch (the image's /opt/venv)."""
    tool: Path
    """compat as a pipx tool: nothing else in it."""
    work: Path
    """the user's environment when compat is a tool: torch, no compat."""
    system: Path
    """the python3 on PATH: no compat, no framework."""


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Envs:
    base = tmp_path_factory.mktemp("interpreters")
    deps = dependencies(base / "deps")
    torch = {"torch": "2.13.0"}
    make_env(base / "opt" / "venv", deps=deps, frameworks=torch, modules=True)
    make_env(base / "pipx" / "venvs" / "compat", deps=deps)
    make_env(base / "work", frameworks=torch, modules=True)
    make_env(base / "system")
    return Envs(base / "opt" / "venv", base / "pipx" / "venvs" / "compat", base / "work", base / "system")


def _compat(
    envs: Envs, install: str, activated: bool, how: str, *args: str
) -> subprocess.CompletedProcess[str]:
    home = envs.project if install == "project" else envs.tool
    user = envs.project if install == "project" else envs.work
    argv = (
        [str(home / "bin" / "compat")] if how == "script" else [str(home / "bin" / "python"), "-m", "compat"]
    )
    env = clean_env(envs.system / "bin", activate=user if activated else None)
    return subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _expected(envs: Envs, install: str, activated: bool, how: str) -> tuple[Path, str]:
    home = envs.project if install == "project" else envs.tool
    user = envs.project if install == "project" else envs.work
    if how == "-m":
        return home / "bin" / "python", "python -m compat"
    if activated:
        return user / "bin" / "python", "$VIRTUAL_ENV"
    if install == "project":
        return home / "bin" / "python", "compat's own environment"
    return envs.system / "bin" / "python3", "python3 on PATH"


TABLE = [
    (install, activated, how)
    for install in ("project", "tool")
    for activated in (False, True)
    for how in ("script", "-m")
]


@pytest.mark.parametrize(("install", "activated", "how"), TABLE)  # ~0.4 s a row: all in the default suite
def test_the_doctor_inspects_the_interpreter_the_rule_names(
    envs: Envs, install: str, activated: bool, how: str
) -> None:
    res = _compat(envs, install, activated, how, "doctor", "--no-smoke", "--json")
    doc = json.loads(res.stdout)
    python, rule = _expected(envs, install, activated, how)
    assert (doc["interpreter"]["python"], doc["interpreter"]["rule"]) == (str(python), rule), res.stderr
    # torch is there in the project's environment and in the user's: the doctor sees it wherever it looks there.
    if python.parent.parent in (envs.project, envs.work):
        assert doc["facts"]["torch"]["raw"].startswith("2.13.0")


def test_the_smoke_job_trains_in_compats_own_environment_not_the_python3_on_path(envs: Envs) -> None:
    """The gate that passed falsely: `/opt/venv/bin/compat smoke` skipped (exit 0) with torch installed."""
    res = _compat(envs, "project", False, "script", "smoke", "--json")
    doc = json.loads(res.stdout)
    assert doc["interpreter"]["python"] == str(envs.project / "bin" / "python")
    assert doc["status"] == "failed"  # the fake torch cannot be imported: not "skipped"
    assert res.returncode == 1


def test_the_header_names_a_framework_the_choice_missed(envs: Envs) -> None:
    """The pipx tool's interpreter is inspected (python -m compat) while the user's venv, active, has torch."""
    res = _compat(envs, "tool", True, "-m", "doctor", "--no-smoke")
    lines = res.stdout.splitlines()
    tool_python = envs.tool / "bin" / "python"
    work_python = envs.work / "bin" / "python"
    assert lines[1] == f"Interpreter: {tool_python} (python -m compat)"
    assert lines[2] == (
        f"the active virtual environment's interpreter {work_python} has torch 2.13.0; "
        f"pass --python {work_python} to inspect it"
    )


def test_the_mcp_tools_inspect_what_the_server_chose(envs: Envs, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server runs each tool as `python -m compat CMD`: the child inspects the server's choice (here the
    active venv), not its own interpreter."""
    from compat import mcp_server

    monkeypatch.setenv("VIRTUAL_ENV", str(envs.work))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    doc = mcp_server.suggest(probe=True)
    assert (doc["interpreter"]["python"], doc["interpreter"]["rule"]) == (
        str(envs.work / "bin" / "python"),
        "$VIRTUAL_ENV",
    )


def test_the_header_names_compats_own_framework_when_another_environment_is_active(envs: Envs) -> None:
    """/opt/venv/bin/compat with an environment without torch active: that one is inspected, and the header says
    where torch is. With torch in the active one too, there is nothing to say."""
    argv = [str(envs.project / "bin" / "compat"), "doctor", "--no-smoke", "--json"]
    own = envs.project / "bin" / "python"
    bare = clean_env(activate=envs.system)
    doc = json.loads(
        subprocess.run(argv, capture_output=True, text=True, env=bare, timeout=120, check=False).stdout
    )
    assert doc["interpreter"]["python"] == str(envs.system / "bin" / "python")
    assert (
        doc["interpreter"]["note"]
        == f"compat's own interpreter {own} has torch 2.13.0; pass --python {own} to inspect it"
    )
    with_torch = clean_env(activate=envs.work)
    doc = json.loads(
        subprocess.run(argv, capture_output=True, text=True, env=with_torch, timeout=120, check=False).stdout
    )
    assert doc["interpreter"]["python"] == str(envs.work / "bin" / "python")
    assert "note" not in doc["interpreter"]
