"""A diagnosis's confirm command speaks the framework of the log (issue 17: explain for JAX; issue 14: confirm).

The cases are real excerpts of the corpus (tests/data/explain, tuning split of the wild corpus), each with its URL."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import compat.explain as ex
from tests.explain.helpers import ROOT, case
from tests.explain.wild import wild_cases


@pytest.fixture(autouse=True)
def _matrix_dir(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMPAT_MATRIX_DIR", str(ROOT / "matrix"))


def _wild(case_id: str) -> dict[str, Any]:
    return next(c for c in wild_cases("tuning") if c["id"] == case_id)


def _confirm(log: str) -> tuple[str, str]:
    d = ex.diagnose_text(log)[0]
    assert d.confirm is not None and d.confirm.command
    return d.category, d.confirm.command


@pytest.mark.parametrize(
    ("case_id", "category"),
    [
        ("gcbfplus-1", "cudnn_mismatch"),  # "but JAX was built against version 8906"
        ("jax-15268", "cudnn_mismatch"),  # external/xla/xla/stream_executor/cuda/cuda_dnn.cc, no word "jax"
    ],
)
# Known limit: only the evidence lines are read, so jaxlib-feedstock-329 (XLA's generic "Loaded runtime CuDNN library"
# line, the word jax only in the command line above it) gets TensorFlow's command.
def test_a_jax_log_gets_a_jax_confirm_command(case_id: str, category: str) -> None:
    got, command = _confirm(_wild(case_id)["log"])
    assert got == category
    assert "import jax" in command and "import torch" not in command


@pytest.mark.parametrize(
    ("case_id", "category"),
    [
        ("tensorflow-35376", "cudnn_mismatch"),  # tensorflow/stream_executor/cuda/cuda_dnn.cc
        (
            "colabtools-2626",
            "cudnn_mismatch",
        ),  # "Loaded runtime CuDNN library ... but source was compiled with"
        ("tensorflow-23385", "arch_not_supported"),  # gpu_device.cc "Ignoring visible gpu device"
    ],
)
def test_a_tensorflow_log_gets_a_tensorflow_confirm_command(case_id: str, category: str) -> None:
    got, command = _confirm(case(case_id)["log"])
    assert got == category
    assert "import tensorflow" in command and "import torch" not in command


@pytest.mark.parametrize(
    ("case_id", "category"),
    [("kohya-ss-1096", "cudnn_mismatch"), ("flymyai-lora-trainer-47", "arch_not_supported")],
)
def test_a_pytorch_log_keeps_the_pytorch_command(case_id: str, category: str) -> None:
    got, command = _confirm(case(case_id)["log"])
    assert got == category
    assert "import torch" in command


def test_confirm_for_is_validated() -> None:
    from compat.explain.catalogue import validate_document

    doc = yaml.safe_load((ROOT / "matrix" / "signatures.yaml").read_text(encoding="utf-8"))
    assert validate_document(doc) == []
    doc["categories"]["cudnn_mismatch"]["confirm_for"]["mxnet"] = {"text": "x", "command": "y"}
    doc["categories"]["arch_not_supported"]["confirm_for"]["jax"] = {"text": "no command"}
    problems = validate_document(doc)
    assert any("unknown framework 'mxnet'" in p for p in problems), problems
    assert any("arch_not_supported.confirm_for.jax: missing 'command'" in p for p in problems), problems
