"""matrix/jax.yaml: valid, sourced, and right on facts read from the published wheels and JAX's install page."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compat.jaxmatrix import JaxTable, jax_table, parse_document, parse_jax, validate_document
from compat.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def table() -> JaxTable:
    return jax_table(load_matrix(ROOT / "matrix"))


def test_shipped_file_is_valid_and_every_row_sourced() -> None:
    doc = yaml.safe_load((ROOT / "matrix" / "jax.yaml").read_text(encoding="utf-8"))
    assert validate_document(doc) == []
    for row in doc["releases"]:
        assert row["source"].startswith("https://pypi.org/project/jax/")
        for build in row.get("cuda") or []:
            if build.get("plugin_version"):
                assert build["plugin_source"].startswith("https://files.pythonhosted.org/packages/")
    for major in doc["cuda_majors"]:
        assert major["source"].startswith("https://github.com/jax-ml/jax/blob/jax-v")


@pytest.mark.parametrize(
    ("version", "python", "expected"),
    [
        # jaxlib wheels' CPython tags on PyPI (Linux x86_64).
        ("0.4.30", "3.9", True),
        ("0.4.31", "3.9", False),  # jaxlib 0.4.31: Requires-Python >=3.10
        ("0.6.2", "3.10", True),
        ("0.7.0", "3.10", False),  # jaxlib 0.7.0: Requires-Python >=3.11
        ("0.7.1", "3.14", True),
        ("0.10.2", "3.11", True),
        ("0.11.0", "3.11", False),  # jaxlib 0.11.0: Requires-Python >=3.12
    ],
)
def test_python_per_release(table: JaxTable, version: str, python: str, expected: bool) -> None:
    release = table.release(version)
    assert release is not None
    assert release.python_ok(python) is expected


def test_cuda_builds_per_release(table: JaxTable) -> None:
    r = table.release("0.10.2")
    assert r is not None
    b12, b13 = r.build_for(12), r.build_for(13)
    assert b12 is not None and b13 is not None
    # jax-cuda12-plugin 0.10.2 [with-cuda]: nvidia-cuda-runtime-cu12>=12.1.105, nvidia-cudnn-cu12<10.0,>=9.8
    assert (b12.cuda_min, b12.cudnn) == ("12.1.105", "<10.0,>=9.8")
    # jax-cuda13-plugin 0.10.2 [with-cuda]: nvidia-cuda-runtime>=13.0.48, nvidia-cudnn-cu13<10.0,>=9.12.0.46
    assert (b13.cuda_min, b13.cudnn) == ("13.0.48", "<10.0,>=9.12.0.46")
    assert r.cuda_extra == 12  # jax[cuda] installs jax-cuda12-plugin
    old = table.release("0.6.2")
    assert old is not None and old.build_for(13) is None  # no cuda13 extra before 0.7.0
    mono = table.release("0.4.20")
    assert mono is not None
    b = mono.build_for(12)
    assert b is not None and b.kind == "monolithic" and b.jaxlib == "0.4.20+cuda12.cudnn89"


def test_cuda_majors_from_the_install_page(table: JaxTable) -> None:
    assert table.majors[12].cc_min == "5.2"
    assert table.majors[13].cc_min == "7.5"
    assert table.majors[12].driver_min_linux == "525.60.13"
    assert table.majors[13].driver_min_linux == "580"


def test_validation_lists_every_problem() -> None:
    doc = {
        "updated": "yesterday",
        "cuda_majors": [{"major": 12, "cc_min": "x", "driver_min_linux": "525", "source": "s"}],
        "releases": [
            {"version": "nope"},
            {"version": "1.0", "requires_python": ">=3.10", "cuda": [{"major": 14, "kind": "plugin"}]},
            {"version": "1.0", "source": "s", "requires_python": "??"},
        ],
    }
    _, problems = parse_document(doc)
    text = "\n".join(problems)
    assert "updated" in text
    assert "cc_min and driver_min_linux must be versions" in text
    assert "'version' is not a version" in text
    assert "missing 'source'" in text
    assert "CUDA major 14 has no row" in text
    assert "needs 'package' and 'pin'" in text
    assert "duplicate version" in text
    assert "'requires_python' is not a specifier" in text


@pytest.mark.parametrize(
    ("raw", "major"),
    [("0.10.2", None), ("0.10.2+cuda12", 12), ("0.10.2+cuda13", 13), ("0.4.20+cuda12.cudnn89", 12)],
)
def test_parse_jax(raw: str, major: int | None) -> None:
    assert parse_jax(raw).cuda_major == major


@pytest.mark.parametrize("raw", ["latest", "0.10.2+cpu", "0.10.2+rocm6"])
def test_parse_jax_rejects(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_jax(raw)
