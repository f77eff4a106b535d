"""Closed and full standard streams (issue 19, item 5), and terminal escapes in text output (item 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.chaos.harness import Run, assert_contract, compat_env, run

CHECK = ["check", "--driver", "535.104.05", "--torch", "2.5.1+cu124"]


def test_stdin_closed_is_an_input_error() -> None:
    # On main: exit 3 with an AttributeError ('NoneType' object has no attribute 'buffer').
    r = _closed_stdin()
    assert_contract(r, codes=(2,))
    assert r.err_lines == ["compat: error: standard input is closed: give a file, or pipe the log in"]


def _closed_stdin() -> Run:
    # Popen cannot close a standard descriptor itself: a shell does it (`<&-`).
    return run(["sh", "-c", f'exec "{sys.executable}" -m compat explain - <&-'], python=False)


def test_stdout_closed_is_one_line_and_exit_2() -> None:
    # On main: a raw traceback.
    r = run(["sh", "-c", f'exec "{sys.executable}" -m compat {" ".join(CHECK)} >&-'], python=False)
    assert_contract(r, codes=(2,))
    assert r.err_lines == ["compat: error: standard output is closed: the report was not printed"]


def test_stdout_on_a_full_device() -> None:
    # On main: exit 3.
    with open("/dev/full", "wb") as full:
        r = run(CHECK, stdout=full)
    assert_contract(r, codes=(2,))
    assert r.err_lines == ["compat: error: cannot write to standard output: no space left on device"]


def test_stdout_full_with_json() -> None:
    with open("/dev/full", "wb") as full:
        r = run([*CHECK, "--json"], stdout=full)
    assert_contract(r, codes=(2,))


def test_stderr_closed_keeps_exit_2() -> None:
    # On main: the error could not be written and exit 2 became 1.
    r = run(["sh", "-c", f'exec "{sys.executable}" -m compat check --driver nope 2>&-'], python=False)
    assert r.code == 2 and r.err == b""


def test_stderr_full_keeps_exit_2() -> None:
    with open("/dev/full", "wb") as full:
        r = run(["check", "--driver", "nope"], stderr=full)
    assert r.code == 2


def test_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    env = compat_env("pipe", str(tmp_path))
    p = subprocess.run(
        [
            "sh",
            "-c",
            f'"{sys.executable}" -m compat matrix list --json | head -c 1; echo " rc=${{PIPESTATUS:-x}}"',
        ],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert b"Traceback" not in p.stderr and b"Broken pipe" not in p.stderr, p.stderr


ESCAPE_NAME = "\x1b]0;pwned\x07\x1b[2JTesla \x9b31mV100"


def _snapshot(tmp_path: Path) -> str:
    doc = {
        "schema_version": 1,
        "facts": {
            "driver": {"raw": "535.104.05", "source": "nvml"},
            "gpus": [{"index": 0, "name": ESCAPE_NAME, "cc": "7.0", "source": "nvml"}],
        },
    }
    p = tmp_path / "snap.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_escapes_from_outside_are_shown_not_sent(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path)
    r = run(["check", "--snapshot", snap, "--torch", "2.5.1+cu124"])
    assert_contract(r, codes=(0, 1))
    assert b"\x1b]" not in r.out and b"\x07" not in r.out and b"\x1b[2J" not in r.out
    assert "\x9b".encode() not in r.out
    assert b"gpu \\x1b]0;pwned\\x07\\x1b[2JTesla \\x9b31mV100" in r.out  # shown, visibly, on main sent raw
    over = run(CHECK, env={"COMPAT_OVERRIDE_GPU": ESCAPE_NAME, "COMPAT_OVERRIDE_CC": "7.0"})
    assert b"\x1b" not in over.out and b"\x07" not in over.out


def test_json_keeps_external_strings_exact(tmp_path: Path) -> None:
    r = run(["check", "--snapshot", _snapshot(tmp_path), "--torch", "2.5.1+cu124", "--json"])
    assert_contract(r, codes=(0, 1))
    doc = json.loads(r.out)
    names = json.dumps(doc, ensure_ascii=False)
    assert json.dumps(ESCAPE_NAME, ensure_ascii=False)[1:-1] in names


def test_stdin_from_an_endless_device_is_refused() -> None:
    with open("/dev/zero", "rb") as zero:
        r = run(["explain", "-"], stdin=zero, cap_s=15)
    assert_contract(r, codes=(2,), cap_s=15)
    assert len(r.err_lines) == 1 and "never ends" in r.err_lines[0]
    with open("/dev/null", "rb") as null:  # empty input is not an endless one
        assert run(["explain", "-"], stdin=null).code != 3
