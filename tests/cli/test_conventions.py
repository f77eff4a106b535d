"""CLI conventions: --version/-V/-h, help text (examples, no Python types, no cut summaries), completion, colour."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from compat.cli import COMMANDS, _take_color
from compat.render import use_color
from tests.conftest import ROOT

TYPE_WORDS = re.compile(r"<(?:str|int|float|bool|list\[[^\]]*\])>|\b(?:TEXT|INTEGER|FLOAT|BOOLEAN)\b")


def test_version_flags(run) -> None:  # type: ignore[no-untyped-def]
    from compat.about import __version__

    for flag in ("--version", "-V"):
        r = run(flag)
        assert (r.code, r.out) == (0, f"compat {__version__}\n")
    assert run("-h").out.startswith("Usage: compat")


def test_root_help_lists_every_command_uncut(run) -> None:  # type: ignore[no-untyped-def]
    out = run("--help").out
    commands = out.split("Commands:")[1]
    for c in COMMANDS:
        assert re.search(rf"^  {re.escape(c.name)}\s", commands, re.M), c.name
    assert "…" not in commands and "..." not in commands
    assert "--color auto|always|never" in out


@pytest.mark.parametrize("name", [c.name for c in COMMANDS] + ["fleet merge"])
def test_every_command_help_has_an_example_and_no_python_types(run, name: str) -> None:  # type: ignore[no-untyped-def]
    r = run(*name.split(), "--help")
    assert r.code == 0, r.err
    assert not TYPE_WORDS.search(r.out), r.out
    example = re.search(r"^\s+Example: (.+)$", r.out, re.M)
    assert example, r.out
    assert "compat " + name in example.group(1) or name == "mcp"


def _complete(words: str, cword: int) -> list[str]:
    env = dict(os.environ, _COMPAT_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword))
    env["PYTHONPATH"] = str(ROOT)
    res = subprocess.run(
        [sys.executable, "-m", "compat"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_shell_completion_protocol() -> None:
    assert _complete("compat do", 1) == ["doctor", "dockerfile"]
    assert "--format" in _complete("compat doctor --fo", 2)


def test_completion_script(run) -> None:  # type: ignore[no-untyped-def]
    r = run("completion", "bash")
    assert r.code == 0 and "_COMPAT_COMPLETE=complete_bash" in r.out and "complete -o default" in r.out
    assert "compdef" in run("completion", "zsh").out
    bad = run("completion", "tcsh")
    assert bad.code == 2 and "bash, zsh, fish, powershell" in bad.err
    bash = shutil.which("bash")
    if bash:
        script = r.out
        res = subprocess.run(
            [bash, "-c", script + "\ncomplete -p compat"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert res.returncode == 0 and "_compat_completion" in res.stdout


class _Tty:
    def isatty(self) -> bool:
        return True


class _Pipe:
    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("env", "mode", "stream", "want"),
    [
        ({}, "auto", _Tty(), True),
        ({}, "auto", _Pipe(), False),
        ({"NO_COLOR": "1"}, "auto", _Tty(), False),
        ({"NO_COLOR": ""}, "auto", _Tty(), True),  # no-color.org: only a non-empty value counts
        ({"FORCE_COLOR": "1"}, "auto", _Pipe(), True),
        ({"FORCE_COLOR": ""}, "auto", _Pipe(), False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, "auto", _Tty(), False),
        ({"TERM": "dumb"}, "auto", _Tty(), False),
        ({"NO_COLOR": "1"}, "always", _Pipe(), True),
        ({"FORCE_COLOR": "1"}, "never", _Tty(), False),
    ],
)
def test_use_color(env: dict[str, str], mode: str, stream: object, want: bool) -> None:
    assert use_color(stream, env, mode) is want  # type: ignore[arg-type]


def test_color_flag_anywhere(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    args = ("check", "--cuda", "12.1", "--driver", "470.82.01", "--os", "linux")
    assert "\x1b[31m" in run(*args, "--color", "always").out
    assert "\x1b[31m" in run("--color=always", *args).out
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\x1b[" not in run(*args, "--color", "never").out
    assert "\x1b[31m" in run(*args).out
    bad = run(*args, "--color", "sometimes")
    assert bad.code == 2 and "--color must be one of auto, always, never" in bad.err


def test_color_is_not_taken_from_a_command_compat_runs() -> None:
    assert _take_color(["run", "--", "ls", "--color=auto"]) == ["run", "--", "ls", "--color=auto"]
    assert _take_color(["run", "ls", "--color", "auto"]) == ["run", "ls", "--color", "auto"]
    assert _take_color(["doctor", "--color", "never", "--json"]) == ["doctor", "--json"]
