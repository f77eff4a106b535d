"""The public Python API the smoke job uses: diagnose_text / diagnose_lines / Diagnosis."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys

import pytest

import compat.explain as ex
from compat.explain.diagnosis import Diagnosis
from compat.findings import Fix
from tests.explain.helpers import ROOT, log


@pytest.fixture(autouse=True)
def _matrix_dir(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMPAT_MATRIX_DIR", str(ROOT / "matrix"))


def test_diagnose_text_and_lines_agree() -> None:
    text = log("kohya-ss-1096")
    a = ex.diagnose_text(text)
    b = ex.diagnose_lines(io.StringIO(text))
    c = ex.diagnose_lines(text.splitlines())
    assert a == b == c
    d = a[0]
    assert isinstance(d, Diagnosis)
    assert d.category == "cudnn_mismatch"
    assert d.facts["cudnn_built"] == "8.7.0" and d.facts["cudnn_runtime"] == "8.2.4"
    assert all(isinstance(f, Fix) for f in d.fixes)


def test_diagnosis_is_frozen_with_the_contract_fields() -> None:
    names = [f.name for f in dataclasses.fields(Diagnosis)]
    # the shipped fields keep their order; issue 14 added confirm, evidence_at and suspected after them
    assert names[:7] == ["category", "confidence", "title", "evidence", "explanation", "facts", "fixes"]
    assert names[7:] == ["confirm", "evidence_at", "suspected"]
    d = ex.diagnose_text(log("mgfn-35"))[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.category = "x"  # type: ignore[misc]
    j = d.to_json()
    assert j["category"] == "gpu_oom" and isinstance(j["evidence"], list)


def test_streaming_a_generator_of_child_output() -> None:
    def child_output():  # the smoke job reads its child's stderr line by line
        yield "starting\n"
        yield "Traceback (most recent call last):\n"
        yield "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"

    assert ex.diagnose_lines(child_output())[0].category == "arch_not_supported"


def test_notebook_text_through_diagnose_text() -> None:
    nb = (
        '{"nbformat": 4, "cells": [{"outputs": [{"output_type": "error", "ename": "RuntimeError", '
        '"evalue": "x", "traceback": ["\\u001b[31mRuntimeError\\u001b[0m: Cannot re-initialize CUDA in forked '
        "subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method\"]}]}]}"
    )
    assert ex.diagnose_text(nb)[0].category == "cuda_fork"


def test_import_is_light() -> None:
    code = (
        "import sys, compat, compat.explain, compat.explain.diagnosis; "
        "bad = [m for m in ('yaml', 'typer', 'rich', 'torch', 'pynvml') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        check=True,
    ).stdout.strip()
    assert out == ""
