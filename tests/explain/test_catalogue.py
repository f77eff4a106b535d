"""The signature catalogue is data: validated row by row, every problem listed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compat.errors import MatrixError
from compat.explain.catalogue import load_catalogue, validate_document
from compat.explain.categories import CATEGORIES
from compat.explain.signature import CONVERTERS, FACT_NAMES, Catalogue
from tests.explain.helpers import signatures_doc


def test_shipped_catalogue_is_valid(catalogue: Catalogue) -> None:
    assert validate_document(signatures_doc()) == []
    assert set(catalogue.categories) == set(CATEGORIES)
    assert catalogue.updated == str(signatures_doc()["updated"])  # the file's own date, as an ISO string
    assert len(catalogue.updated) == 10 and catalogue.updated[4] == catalogue.updated[7] == "-"
    assert len(catalogue.signatures) >= 60
    for name in CATEGORIES:
        assert any(s.category == name for s in catalogue.signatures), name
        assert catalogue.categories[name].fixes


def test_registered_for_matrix_validate() -> None:
    from compat.matrixfiles import side_file_validators

    assert side_file_validators()["signatures.yaml"] is validate_document


def _doc() -> dict[str, Any]:
    return copy.deepcopy(signatures_doc())


def _problems(doc: Any) -> str:
    return "\n".join(validate_document(doc))


def test_missing_updated_and_categories() -> None:
    doc = _doc()
    del doc["updated"]
    del doc["categories"]["segfault"]
    doc["categories"]["made_up"] = doc["categories"]["gpu_oom"]
    out = _problems(doc)
    assert "updated" in out
    assert "missing 'segfault'" in out
    assert "unknown category 'made_up'" in out


def test_bad_rows_are_all_reported() -> None:
    doc = _doc()
    rows = doc["signatures"]
    rows[0]["pattern"] = "(unclosed"
    rows[1]["category"] = "gpu_melted"
    rows[2]["keywords"] = ["UPPER case"]
    rows[3]["confidence"] = 1.5
    rows[4]["examples"] = ["a line that matches nothing at all"]
    rows[5]["pattern"] = r"(?P<nonsense_fact>\d+) " + rows[5]["pattern"]
    rows[6]["pattern"] = r"(?P<driver_cuda__roman>\d+)"
    rows[7]["id"] = rows[8]["id"]
    rows[9]["meaning"] = "uses {missing_fact}"
    del rows[10]["source"]
    out = _problems(doc)
    for needle in (
        "does not compile",
        "'category' must be one of driver_too_old,",
        "got 'gpu_melted'",
        "must be lower-case",
        "'confidence'",
        "does not match the pattern",
        "unknown fact 'nonsense_fact'",
        "unknown converter 'roman'",
        "duplicate id",
        "{missing_fact}",
        "missing 'source'",
    ):
        assert needle in out, needle


def test_suppression_must_name_categories() -> None:
    doc = _doc()
    doc["categories"]["gpu_oom"]["suppresses"] = ["gpu_oom", "nope"]
    out = _problems(doc)
    assert "cannot suppress itself" in out
    assert "categories.gpu_oom: 'suppresses[1]' must be one of" in out and "got 'nope'" in out


def test_not_a_mapping() -> None:
    assert validate_document(["a", "list"])
    with pytest.raises(MatrixError) as exc:
        load_catalogue({"updated": "2026-11-22"})
    assert exc.value.problems


def test_every_row_documents_itself(catalogue: Catalogue) -> None:
    for s in catalogue.signatures:
        assert s.meaning and s.source.startswith("https://"), s.id
        assert 0 < s.confidence <= 1
        for g in s.regex.groupindex:
            name, _, conv = g.partition("__")
            assert name in FACT_NAMES and (not conv or conv in CONVERTERS)


@pytest.mark.parametrize(
    ("conv", "raw", "want"),
    [
        ("cuda_int", "11040", "11.4"),
        ("cuda_int", "12080", "12.8"),
        ("cuda_int", "6050", "6.5"),
        ("cuda_int", "9000", "9.0"),
        ("cudnn_int", "7605", "7.6.5"),
        ("cudnn_int", "7003", "7.0.3"),
        ("cudnn_int", "90100", "9.1.0"),
        ("tuple", "8, 9, 2", "8.9.2"),
        ("signame", "Bus error", "7"),
        ("signame", "Segmentation fault", "11"),
    ],
)
def test_converters(conv: str, raw: str, want: str) -> None:
    assert CONVERTERS[conv](raw) == want


def test_prefilter_covers_every_keyword(catalogue: Catalogue) -> None:
    for s in catalogue.all_rows:
        for k in s.keywords:
            assert catalogue.prefilter.search(k), k


def test_loading_through_the_matrix_when_it_loads() -> None:
    from compat.explain.catalogue import default_catalogue
    from compat.matrix import get_matrix

    try:
        m = get_matrix()
    except MatrixError:
        pytest.skip("the core matrix files are not all present yet")
    cat = default_catalogue(m)
    assert set(cat.categories) == set(CATEGORIES)
