"""The smoke documents of real training runs (PyTorch on the CPU, single and DDP with 2 gloo ranks) validate
against their schemas and render in every format. Slow: real training; `.ci/run` runs it with -m slow."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import jsonschema
import pytest

from tests.output.conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed"),
]


def _schema(kind: str) -> Any:
    return json.loads((ROOT / "compat" / "schema" / f"{kind}.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("kind", "argv"),
    [
        ("smoke", ["smoke", "--framework", "torch", "--device", "cpu", "--steps", "3"]),
        ("smoke-distributed", ["smoke", "--distributed", "--device", "cpu", "--steps", "3"]),
    ],
)
def test_real_training_documents(run: Any, kind: str, argv: list[str]) -> None:
    r = run(*argv, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["status"] == "passed" and doc["framework"] == "torch"
    errors = [e.message for e in jsonschema.Draft202012Validator(_schema(kind)).iter_errors(doc)]
    assert errors == []
    sarif = json.loads(run(*argv, "--format", "sarif").out)
    levels = [res["level"] for res in sarif["runs"][0]["results"]]
    assert levels and "error" not in levels  # a passed run is a note, never an error
    md = run(*argv, "--format", "markdown")
    assert md.code == 0 and "| status | passed |" in md.out
