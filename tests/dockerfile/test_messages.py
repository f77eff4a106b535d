"""Issue 19 item 11 / issue 20: an empty FROM and an unparsable pin are findings; skip hints name this command's
own flags and, in a multi-stage build, the stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "Dockerfile"
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_empty_from_is_an_error(run: Any, tmp_path: Path) -> None:
    path = _write(tmp_path, "ARG BASE\nFROM ${BASE}\nRUN pip install torch==2.5.1\n")
    r = run("dockerfile", path, "--build-arg", "BASE=", "--json")
    assert r.code == 1
    doc = json.loads(r.out)
    assert [(f["id"], f["line"]) for f in doc["findings"] if f["severity"] == "error"] == [
        ("dockerfile.empty-from", 2)
    ]


def test_unparsable_framework_pin_is_an_error(run: Any, tmp_path: Path) -> None:
    path = _write(tmp_path, "FROM python:3.11-slim\nRUN pip install torch==notaversion\n")
    r = run("dockerfile", path, "--json")
    assert r.code == 1
    doc = json.loads(r.out)
    bad = [f for f in doc["findings"] if f["id"] == "dockerfile.invalid-requirement"]
    assert len(bad) == 1 and bad[0]["line"] == 2 and "\n" not in bad[0]["message"]


def test_skip_hints_name_only_dockerfile_flags(run: Any, tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04 AS build\nRUN pip install torch==2.5.1\n"
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install torch==2.5.1\n",
    )
    r = run("dockerfile", path, "--json")
    doc = json.loads(r.out)
    reasons = [s["reason"] for s in doc["skipped"]]
    assert reasons
    for reason in reasons:
        for flag in ("--driver", "--gpu", "--cc", "--torch", "--tensorflow", "--cuda", "--cudnn"):
            assert f"{flag})" not in reason and f"{flag} " not in reason and f"{flag}," not in reason, reason
        assert "[stage " in reason
    assert any("--target-driver" in x for x in reasons)
