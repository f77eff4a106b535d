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
    ("NVIDIA GeForce GTX 1650", "7.5"),
    ("NVIDIA GeForce GTX 1050 Ti", "6.1"),
]


@pytest.mark.parametrize(("name", "cc"), NEW_ROWS)
def test_new_rows_resolve_by_their_device_name(run, name: str, cc: str) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", name, "--driver", "535.104.05", "--torch", "2.5.1", "--os", "linux", "--json")
    doc = json.loads(r.out)
    gpu = doc["facts"]["gpus"][0]
    assert (gpu["cc"], gpu["cc_source"]) == (cc, "matrix"), gpu


@pytest.mark.parametrize(
    "typed", ["NVIDIA GeForce GTX 1660", "GTX 1660", "GeForce GTX 1660 Ti", "RTX 2070 SUPER"]
)
def test_a_super_or_ti_row_does_not_answer_for_its_sibling(matrix, typed: str) -> None:  # type: ignore[no-untyped-def]
    # The plain GTX 1660 and the 1660 Ti have no cited capture: the lenient lookup must not lend them the
    # SUPER's row (nor the RTX 2070 SUPER the RTX 2070's), whatever the value would be.
    row = matrix.gpu(typed)
    assert row is None, row


def test_the_family_name_still_resolves_where_every_variant_agrees(matrix) -> None:  # type: ignore[no-untyped-def]
    row = matrix.gpu("RTX PRO 6000")
    assert row is not None and str(row.cc) == "12.0"


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
    new = {"GeForce GTX 1660 SUPER", "GeForce GTX 1650 SUPER", "GeForce GTX 1650", "GeForce GTX 1050 Ti"}
    assert new <= {g["name"] for g in capture_rows}
    for g in capture_rows:
        assert pinned.match(str(g["source"])), g
