"""Skipped checks speak the command's language: dockerfile names only its own flags; the list is collapsed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DOCKERFILES = {
    "plain": "FROM ubuntu:22.04\nRUN echo hi\n",
    "multi": (
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04 AS build\nRUN pip install torch==2.1.0\n"
        "FROM ubuntu:22.04\nCOPY --from=build /x /x\n"
    ),
    "tf": "FROM python:3.11-slim\nRUN pip install tensorflow==2.15.0\n",
    "conda": "FROM continuumio/miniconda3\nRUN conda install -y pytorch\n",
}
OWN = ("--target-driver", "--target-gpu", "--target-cc", "--build-arg", "--context")


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_dockerfile_skips_name_no_foreign_flag(run, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "Dockerfile"
    f.write_text(DOCKERFILES[name])
    doc = json.loads(run("dockerfile", str(f), "--json").out)
    for s in doc["skipped"]:
        for flag in re.findall(r"--[a-z][a-z-]*", s["reason"]):
            assert flag in OWN, s


def test_multi_stage_skips_name_their_stage(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "Dockerfile"
    f.write_text(DOCKERFILES["multi"])
    doc = json.loads(run("dockerfile", str(f), "--json").out)
    assert doc["skipped"] and all(re.search(r"\[stage \w+\]$", s["reason"]) for s in doc["skipped"])


@pytest.mark.parametrize("cmd", ["dockerfile", "check"])
def test_skipped_collapse_to_a_count(run, tmp_path: Path, cmd: str) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "Dockerfile"
    f.write_text(DOCKERFILES["plain"])
    args = [str(f)] if cmd == "dockerfile" else ["--driver", "535.104.05", "--os", "linux"]
    short = run(cmd, *args).out
    m = re.search(
        r"^Skipped: (\d+) checks? without the facts they need \(--show-skipped lists them\)$", short, re.M
    )
    assert m, short
    full = run(cmd, *args, "--show-skipped").out
    listed = re.findall(r"^  - ", full, re.M)
    assert len(listed) == int(m.group(1)) > 0
    assert "  - " not in short
