"""GPU rows added from a driver- or CUDA-reported compute capability (issue 20, "GPU facts").

Each new row resolves by the device name the driver reports (NVML / deviceQuery), with the matrix's compute
capability; each row sourced outside NVIDIA's own pages cites a pinned public capture; cards without such
evidence stay unknown rather than guessed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

# Device names exactly as the captures show them (with and without the driver's leading "NVIDIA ").
NEW_ROWS = [
    ("NVIDIA GeForce GTX 1660 SUPER", "7.5"),
    ("GeForce GTX 1660 SUPER", "7.5"),
    ("GeForce GTX 1650 SUPER", "7.5"),
    ("NVIDIA GeForce GTX 1650 SUPER", "7.5"),
]


@pytest.mark.parametrize(("name", "cc"), NEW_ROWS)
def test_new_rows_resolve_by_their_device_name(run, name: str, cc: str) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", name, "--driver", "535.104.05", "--torch", "2.5.1", "--os", "linux", "--json")
    doc = json.loads(r.out)
    gpu = doc["facts"]["gpus"][0]
    assert (gpu["cc"], gpu["cc_source"]) == (cc, "matrix"), gpu


def test_the_1660_super_is_not_confused_with_its_siblings(matrix) -> None:  # type: ignore[no-untyped-def]
    names = {g.name for g in matrix.gpus}
    assert "GeForce GTX 1660 SUPER" in names
    # The plain GTX 1660 / 1660 Ti have no capture cited here: they must not resolve through the SUPER row.
    assert "GeForce GTX 1660" not in names


@pytest.mark.parametrize("name", ["NVIDIA H800", "NVIDIA A800-SXM4-80GB", "NVIDIA GeForce MX150"])
def test_cards_without_evidence_stay_unknown(run, name: str) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", name, "--os", "linux", "--json")
    assert r.code == 2, r.out
    assert "unknown GPU" in r.err


def _rows() -> list[dict[str, Any]]:
    import yaml

    root = Path(__file__).resolve().parents[2]
    doc = yaml.safe_load((root / "matrix" / "gpus.yaml").read_text(encoding="utf-8"))
    return list(doc["gpus"])


def test_rows_sourced_from_a_repository_cite_a_pinned_commit() -> None:
    pinned = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/\S+$")
    github_rows = [g for g in _rows() if str(g["source"]).startswith("https://github.com/")]
    capture_rows = [g for g in github_rows if "/blob/" in str(g["source"])]
    assert {"GeForce GTX 1660 SUPER", "GeForce GTX 1650 SUPER"} <= {g["name"] for g in capture_rows}
    for g in capture_rows:
        assert pinned.match(str(g["source"])), g
