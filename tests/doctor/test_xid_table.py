"""matrix/xid.yaml: the Xid table is data, validated like the rest of the matrix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from compat.checks.doctor_health import xid_table
from compat.probes.health import validate_document
from tests.doctor.fakes import ROOT


def _doc() -> Any:
    return yaml.safe_load((ROOT / "matrix" / "xid.yaml").read_text(encoding="utf-8"))


def test_shipped_table_is_valid_and_covers_the_codes_training_meets() -> None:
    doc = _doc()
    assert validate_document(doc) == []
    table = xid_table(doc)
    assert {13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 154} <= set(table)
    assert table[79]["severity"] == "error" and table[45]["severity"] == "info"
    assert all(
        row["source"].startswith("https://docs.nvidia.com/deploy/xid-errors/") for row in table.values()
    )


def test_validator_lists_every_problem() -> None:
    bad = {
        "xids": [
            {
                "code": 79,
                "name": "x",
                "meaning": "m",
                "action": "a",
                "source": "http://example.com",
                "severity": "fatal",
                "cause": "bus",
            },
            {
                "code": 79,
                "name": "",
                "meaning": "m",
                "action": "a",
                "source": "https://x",
                "severity": "error",
                "cause": "gremlins",
            },
            "not a row",
        ]
    }
    problems = validate_document(bad)
    text = "\n".join(problems)
    assert "missing or malformed 'updated: YYYY-MM-DD'" in text
    assert "'severity' must be one of" in text and "'source' must be an https URL" in text
    assert "duplicate code 79" in text and "'name' must be a non-empty string" in text
    assert "'cause' must be one of" in text and "xids[2]: must be a mapping, got str 'not a row'" in text
    assert validate_document([]) == ["top level must be a mapping, got list []"]


def test_matrix_loader_runs_the_validator(matrix_dir: Path, tmp_path: Path) -> None:
    import shutil

    import pytest

    from compat.errors import MatrixError
    from compat.matrix import load_matrix

    d = tmp_path / "m"
    shutil.copytree(matrix_dir, d)
    m = load_matrix(d, validate_extras=True)
    assert xid_table(m.raw["xid.yaml"])[79]["name"] == "GPU has fallen off the bus"
    text = (d / "xid.yaml").read_text().replace("severity: error", "severity: fatal", 1)
    (d / "xid.yaml").write_text(text)
    with pytest.raises(MatrixError, match="xid.yaml"):
        load_matrix(d, validate_extras=True)
