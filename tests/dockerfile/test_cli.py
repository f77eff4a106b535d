"""`compat dockerfile` on the command line: exit codes, JSON keys, and one-line errors for bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WriteDf = Callable[..., Path]


@pytest.fixture
def mdir(dmatrix: Any) -> str:
    return str(dmatrix.directory)


def test_ok_exit_0_and_json_document(run: Any, write_df: WriteDf, mdir: str) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
        "RUN pip install torch==2.1.1\n"
    )
    r = run("dockerfile", str(p), "--json", "--matrix", mdir)
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["schema_version"] == 1 and doc["verdict"] in ("ok", "warning")
    assert [s["name"] for s in doc["stages"]] == [None]
    assert set(doc["stages"][0]) >= {"name", "base", "facts"}
    assert doc["stages"][0]["facts"]["torch"]["source"] == "Dockerfile:3"
    assert all("line" in f for f in doc["findings"])


def test_error_exit_1_and_fail_on(run: Any, write_df: WriteDf, mdir: str) -> None:
    bad = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"
        "RUN pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cpu\n"
    )
    r = run("dockerfile", str(bad), "--matrix", mdir)
    assert r.code == 1 and "dockerfile.cpu-wheel" in r.out and "(line 2)" in r.out
    warn = write_df("FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04\nRUN pip install torch==2.1.1\n", name="w")
    assert run("dockerfile", str(warn), "--matrix", mdir).code == 0
    assert run("dockerfile", str(warn), "--fail-on", "warning", "--matrix", mdir).code == 1


def test_target_flags(run: Any, write_df: WriteDf, mdir: str) -> None:
    p = write_df("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    r = run("dockerfile", str(p), "--target-driver", "545.23.08", "--json", "--matrix", mdir)
    assert r.code == 1 and "dockerfile.require-cuda" in {f["id"] for f in json.loads(r.out)["findings"]}
    r = run("dockerfile", str(p), "--target-gpu", "H100 SXM5", "--matrix", mdir)
    assert r.code == 0, r.err


def test_directory_and_context(run: Any, write_df: WriteDf, mdir: str, tmp_path: Path) -> None:
    write_df("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nCOPY req.txt /r.txt\nRUN pip install -r /r.txt\n")
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "req.txt").write_text("tensorflow-cpu==2.15.0\n", encoding="utf-8")
    r = run("dockerfile", str(tmp_path), "--context", str(ctx), "--json", "--matrix", mdir)
    assert r.code == 1 and "dockerfile.cpu-wheel" in r.out


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("", (), "is empty"),
        ("   \n# only a comment\n", (), "not a Dockerfile"),
        ("import os\nprint(os.getcwd())\n", (), "not a Dockerfile"),
        ("RUN echo hi\nFROM ubuntu:22.04\n", (), "not a Dockerfile"),
        ("FROM ubuntu:22.04\n", ("--build-arg", "NOEQUALS_UNSET_X"), "--build-arg"),
        ("FROM ubuntu:22.04\n", ("--build-arg", "=x"), "--build-arg"),
        ("FROM ubuntu:22.04\n", ("--target-gpu", "H100 SXM5", "--target-cc", "9.0"), "not both"),
        ("FROM ubuntu:22.04\n", ("--target-driver", "banana"), "driver"),
        ("FROM ubuntu:22.04\n", ("--target-cc", "99"), "compute capability"),
        ("FROM ubuntu:22.04\n", ("--target-gpu", "Quantum Flux 9000"), "unknown GPU"),
        ("FROM ubuntu:22.04\n", ("--fail-on", "info"), "--fail-on"),
        ("FROM a\nRUN <<EOF\necho\n", (), "never closed"),
    ],
)
def test_bad_input_exit_2_one_line(
    run: Any, write_df: WriteDf, mdir: str, content: str, args: tuple[str, ...], message: str
) -> None:
    p = write_df(content)
    r = run("dockerfile", str(p), *args, "--matrix", mdir)
    assert r.code == 2, (r.out, r.err)
    assert message in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err


def test_missing_file_and_binary(run: Any, tmp_path: Path, mdir: str) -> None:
    r = run("dockerfile", str(tmp_path / "nope" / "Dockerfile"), "--matrix", mdir)
    assert r.code == 2 and "does not exist" in r.err
    b = tmp_path / "bin"
    b.write_bytes(b"\x7fELF\x00\x00")
    r = run("dockerfile", str(b), "--matrix", mdir)
    assert r.code == 2 and "binary" in r.err


def test_build_arg_from_environment(
    run: Any, write_df: WriteDf, mdir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASE_TAG", "12.1.0-runtime-ubuntu22.04")
    p = write_df("ARG BASE_TAG\nFROM nvidia/cuda:${BASE_TAG}\n")
    r = run("dockerfile", str(p), "--build-arg", "BASE_TAG", "--json", "--matrix", mdir)
    assert r.code == 0 and json.loads(r.out)["stages"][0]["facts"]["cuda"]["raw"] == "12.1.0"


def test_odd_but_usable_input_is_a_finding(run: Any, write_df: WriteDf, mdir: str) -> None:
    r = run("dockerfile", str(write_df("ARG BASE\nFROM $BASE\n")), "--matrix", mdir)
    assert r.code == 0 and "dockerfile.arg-unset" in r.out
    r = run("dockerfile", str(write_df("FROM ubuntu:22.04\nFROBNICATE x\n", name="u")), "--matrix", mdir)
    assert r.code == 1 and "dockerfile.syntax" in r.out


def test_pre_commit_hook_manifest() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    hooks = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "compat-dockerfile")
    assert "compat dockerfile" in hook["entry"] and hook["language"] == "python"
    import re

    rx = re.compile(hook["files"])
    assert (
        rx.search("Dockerfile")
        and rx.search("docker/Dockerfile.gpu")
        and not rx.search("Dockerfile_notes.md")
    )
