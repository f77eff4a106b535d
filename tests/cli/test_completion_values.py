"""Tab completion offers the values of options with a fixed set (not file names), and check ids for --select/--ignore.

Each shell is driven for real where it is installed: bash calls the `compat completion bash` function with
COMP_WORDS/COMP_CWORD set, zsh runs the `compat completion zsh` function with `_arguments` replaced by a printer,
fish answers `complete -C`. The completion protocol of each shell's mode is tested without the shell too.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from compat.commands import values
from tests.conftest import ROOT

# (the words typed, then what completing the last one must offer, in order)
CASES: list[tuple[list[str], list[str]]] = [
    (["smoke", "--framework", ""], ["auto", "torch", "tensorflow", "jax"]),
    (["smoke", "--framework", "t"], ["torch", "tensorflow"]),
    (["smoke", "--device", ""], ["auto", "cuda", "cpu"]),
    (["doctor", "--format", ""], ["text", "json", "markdown", "sarif", "github"]),
    (["check", "--format", "ma"], ["markdown"]),
    (["doctor", "--fail-on", ""], ["error", "warning"]),
    (["check", "--os", ""], ["linux", "windows", "macos"]),
    (["suggest", "--os", "w"], ["windows"]),
    (["completion", ""], ["bash", "zsh", "fish", "powershell", "pwsh"]),
    (["--color", ""], ["auto", "always", "never"]),
    (["doctor", "--select", "driver.cu"], ["driver.cuda"]),
    (["check", "--ignore", "gpu.ecc,cudnn.a"], ["gpu.ecc,cudnn.arch"]),
]


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env.pop("COMPAT_MATRIX_DIR", None)
    return env


def _protocol(shell: str, words: list[str]) -> str:
    """What compat answers a shell's completion request (the request each shell's script sends)."""
    line = " ".join(["compat", *words])
    if shell == "bash":
        extra = {"COMP_WORDS": line, "COMP_CWORD": str(len(words))}
    else:
        extra = {"_TYPER_COMPLETE_ARGS": line}
        if shell == "fish":
            extra["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    res = subprocess.run(
        [sys.executable, "-m", "compat"],
        env=_env({"_COMPAT_COMPLETE": f"complete_{shell}", **extra}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize(("words", "want"), CASES, ids=[" ".join(w) for w, _ in CASES])
def test_bash_protocol_offers_the_values(words: list[str], want: list[str]) -> None:
    assert _protocol("bash", words).split() == want


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_protocol_offer_the_values(shell: str) -> None:
    out = _protocol(shell, ["smoke", "--framework", ""])
    for v in ("torch", "tensorflow", "jax"):
        assert v in out
    assert "_files" not in out  # zsh's answer when compat had no values: complete file names
    assert "driver.cuda" in _protocol(shell, ["doctor", "--select", "driver.c"])


def test_check_ids_come_from_the_registry() -> None:
    from compat.checks.registry import declared_ids

    ids = values.check_ids()
    assert set(declared_ids()) <= set(ids)
    assert {"driver", "gpu", "known."} <= set(ids)
    assert values.complete_ids("") == ids


def test_the_value_sets_are_the_ones_the_program_accepts() -> None:
    from compat import output, render
    from compat.facts import OS_NAMES
    from compat.output.options import FAIL_ON
    from compat.smoke.result import DEVICES, FRAMEWORKS

    assert values.FORMATS == output.FORMATS
    assert values.FAIL_ON == FAIL_ON
    assert values.OS_NAMES == OS_NAMES
    assert values.SMOKE_FRAMEWORKS == FRAMEWORKS
    assert values.SMOKE_DEVICES == DEVICES
    assert values.COLOR_MODES == render.COLOR_MODES


@pytest.fixture(scope="module")
def on_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `compat` on PATH that runs this checkout (the scripts call `compat` by name)."""
    d = tmp_path_factory.mktemp("bin")
    shim = d / "compat"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m compat "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return d


def _script(shell: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "compat", "completion", shell],
        env=_env({}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return res.stdout


def _shell(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def _run_shell(argv: list[str], on_path: Path) -> list[str]:
    env = _env({"PATH": f"{on_path}{os.pathsep}{os.environ.get('PATH', '')}"})
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    return [line for line in res.stdout.splitlines() if line]


BASH_CASES = [c for c in CASES if c[0][0] in ("smoke", "doctor", "check")]


@pytest.mark.parametrize(("words", "want"), BASH_CASES, ids=[" ".join(w) for w, _ in BASH_CASES])
def test_bash_completes_values_for_real(words: list[str], want: list[str], on_path: Path) -> None:
    bash = _shell("bash")
    quoted = " ".join(["compat", *(f"'{w}'" for w in words)])
    body = f"{_script('bash')}\nCOMP_WORDS=({quoted})\nCOMP_CWORD={len(words)}\n"
    body += '_compat_completion compat\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    assert _run_shell([bash, "--norc", "-c", body], on_path) == want


def test_zsh_completes_values_for_real(on_path: Path) -> None:
    zsh = _shell("zsh")
    # Outside a completion widget, _arguments cannot run: print what compat hands it instead.
    body = 'compdef() { :; }\n_arguments() { print -rl -- "$@"; }\n' + _script("zsh")
    body += "\nwords=(compat smoke --framework '')\nCURRENT=4\n_compat_completion\n"
    out = "\n".join(_run_shell([zsh, "-f", "-c", body], on_path))
    for v in ("auto", "torch", "tensorflow", "jax"):
        assert f'"{v}"' in out
    assert "_files" not in out


def test_fish_completes_values_for_real(on_path: Path) -> None:
    fish = _shell("fish")
    body = (
        _script("fish")
        + "\ncomplete -C 'compat smoke --framework '\ncomplete -C 'compat doctor --fail-on '\n"
    )
    out = _run_shell([fish, "--no-config", "-c", body], on_path)
    # fish sorts what it is given
    assert [line.split("\t")[0] for line in out] == ["auto", "jax", "tensorflow", "torch", "error", "warning"]
