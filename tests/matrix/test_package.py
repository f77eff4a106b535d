"""compat.matrix as a package: re-exports, module sizes, registered side-file validators, N/A markers, the schemas."""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import compat.matrix
from compat.commands.matrix import side_file_owners
from compat.errors import MatrixError
from compat.matrix import load_matrix
from compat.matrix.schema import render, schema_file_name, schemas, shipped_dir
from compat.matrixfiles import side_file_validators

ROOT = Path(__file__).resolve().parent.parent.parent
PKG = ROOT / "compat" / "matrix"


def _imported_names() -> set[str]:
    """Every name another module imports from compat.matrix (`from compat.matrix import a, b`)."""
    names: set[str] = set()
    pattern = re.compile(r"from compat\.matrix import ([^\n(]+|\([^)]*\))")
    for base in ("compat", "tests", "bench"):
        for path in (ROOT / base).rglob("*.py"):
            if PKG in path.parents or path == Path(__file__).resolve():
                continue
            for m in pattern.finditer(path.read_text(encoding="utf-8")):
                text = m.group(1).strip("()").split("#")[0]
                for n in text.split(","):
                    ident = re.match(r"\s*([A-Za-z_]\w*)", n)
                    if ident:
                        names.add(ident.group(1))
    return names


def test_every_imported_name_is_still_exported() -> None:
    names = _imported_names()
    assert {"load_matrix", "Matrix", "get_matrix"} <= names
    missing = [n for n in names if not hasattr(compat.matrix, n)]
    assert missing == []


@pytest.mark.parametrize("path", sorted(PKG.glob("*.py")), ids=lambda p: p.name)
def test_modules_stay_under_500_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) < 500


def test_every_side_file_has_a_registered_validator_and_the_matrix_imports_no_owner() -> None:
    owners = side_file_owners()
    validators = side_file_validators()
    shipped = {p.name for p in (ROOT / "matrix").glob("*.yaml")} - set(compat.matrix.CORE_FILES)
    assert set(validators) == shipped  # `compat matrix validate` checks every file the matrix ships
    assert {func.__module__ for func in validators.values()} == {m.__name__ for m in owners}
    for path in PKG.glob("*.py"):  # the owners register themselves: the matrix names none of them
        source = path.read_text(encoding="utf-8")
        assert "importlib" not in source
        assert not any(m.__name__ in source for m in owners), path.name


def test_validate_extras_reports_an_extra_files_problem(tmp_path: Path) -> None:
    side_file_owners()
    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    (d / "xid.yaml").write_text("updated: 2026-01-01\n", encoding="utf-8")
    load_matrix(d, cache=False)  # extras are not read on the default path
    with pytest.raises(MatrixError) as exc:
        load_matrix(d, validate_extras=True, cache=False)
    assert "xid.yaml: missing 'xids'" in exc.value.problems


def test_matrix_validate_lists_every_side_file_problem_at_once(tmp_path: Path, run: Any) -> None:
    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    for name in ("xid.yaml", "driver_branches.yaml", "images.yaml", "jax.yaml", "error_codes.yaml"):
        (d / name).write_text("[]\n", encoding="utf-8")
    (d / "signatures.yaml").write_text("updated: 2026-01-01\n", encoding="utf-8")
    res = run("matrix", "validate", str(d))
    assert res.code == 2, res.err
    for name in ("xid.yaml", "driver_branches.yaml", "images.yaml", "jax.yaml", "error_codes.yaml"):
        assert f"  {name}: top level must be a mapping, got list []" in res.err, name
    assert "  signatures.yaml: " in res.err


def test_default_matrix_dir_is_the_source_tree_matrix() -> None:
    # In the wheel the data sits at compat/_matrix (pyproject force-include), beside the compat/matrix package.
    assert compat.matrix.default_matrix_dir() == ROOT / "matrix"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"matrix" = "compat/_matrix"' in pyproject


# ------------------------------------------------------------------ N/A markers


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "m"
    d.mkdir()
    for name in compat.matrix.CORE_FILES:
        shutil.copy(ROOT / "matrix" / name, d / name)
    return d


def _edit(d: Path, name: str, old: str, new: str) -> None:
    text = (d / name).read_text(encoding="utf-8")
    assert old in text
    (d / name).write_text(text.replace(old, new, 1), encoding="utf-8")


def test_na_is_distinct_from_unknown(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    _edit(
        d,
        "cuda.yaml",
        'min_driver: {linux: "580.65.06", windows: null}',
        'min_driver: {linux: "580.65.06", windows: "N/A"}',
    )
    _edit(
        d,
        "cudnn.yaml",
        'min_driver: &drv_cu13 {linux: "580.65.06", windows: null}',
        'min_driver: &drv_cu13 {linux: "580.65.06", windows: {na: "support matrix prints N/A"}}',
    )
    m = load_matrix(d, cache=False)
    rel = next(r for r in m.cuda_releases if r.raw == "13.0.0")
    assert rel.min_driver["windows"] is None
    assert rel.na == {"min_driver.windows": "the source lists N/A"}
    other = next(r for r in m.cuda_releases if r.raw == "12.4.0")
    assert other.na == {}
    pk = next(p for r in m.cudnn for p in r.packages if p.cuda_major == 13 and p.na)
    assert pk.na["min_driver.windows"] == "support matrix prints N/A"
    assert pk.min_driver["windows"] is None


def test_na_where_a_value_is_required_is_a_problem(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    _edit(d, "gpus.yaml", 'cc: "9.0"', 'cc: "N/A"')
    with pytest.raises(MatrixError) as exc:
        load_matrix(d, cache=False)
    assert any("gpus.yaml" in p and "'cc'" in p for p in exc.value.problems)


def test_lookup_json_names_what_is_not_listed(tmp_path: Path, run: Any) -> None:
    d = _copy(tmp_path)
    _edit(
        d,
        "cuda.yaml",
        'min_driver: {linux: "580.65.06", windows: null}',
        'min_driver: {linux: "580.65.06", windows: "N/A"}',
    )
    res = run("matrix", "cuda", "13.0", "--json", "--matrix", str(d))
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["min_driver"]["windows"] is None
    assert doc["not_listed"]["min_driver.windows"] == "the source lists N/A"
    assert "minor_compat_floor.windows" in doc["not_listed"]  # the shipped 13.x floor has no Windows value
    assert "not_listed" in doc and json.loads(run("matrix", "cuda", "12.4", "--json").out)["not_listed"] == {}


# ------------------------------------------------------------------ JSON Schemas


@pytest.mark.parametrize("file", sorted(schemas()))
def test_published_and_shipped_schemas_match_the_generator(file: str) -> None:
    text = render(schemas()[file])
    assert (ROOT / "docs" / "schema" / "matrix" / schema_file_name(file)).read_text(encoding="utf-8") == text
    assert (shipped_dir() / schema_file_name(file)).read_text(encoding="utf-8") == text


def _jsonable(o: Any) -> Any:
    if isinstance(o, _dt.date):
        return o.isoformat()
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_jsonable(x) for x in o]
    return o


@pytest.mark.parametrize("file", sorted(schemas()))
def test_shipped_files_validate_against_their_schema(file: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = _jsonable(yaml.safe_load((ROOT / "matrix" / file).read_text(encoding="utf-8")))
    errors = list(jsonschema.Draft202012Validator(schemas()[file]).iter_errors(doc))
    assert errors == []


def test_schema_catches_what_an_editor_should_flag() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    v = jsonschema.Draft202012Validator(schemas()["cuda.yaml"])
    ok = {
        "updated": "2026-01-01",
        "releases": [
            {"version": "13.0.0", "min_driver": {"linux": "N/A", "windows": {"na": "x"}}, "source": "u"}
        ],
        "minor_compat": [],
        "compute_capabilities": [],
    }
    assert list(v.iter_errors(ok)) == []
    bad = {
        "updated": "2026-01-01",
        "releases": [{"version": 13.0, "min_driver": {"linux": 580}}],
        "minor_compat": [],
        "compute_capabilities": [],
    }
    messages = " ".join(e.message for e in v.iter_errors(bad))
    assert "'source' is a required property" in messages
    assert len(list(v.iter_errors(bad))) >= 3  # every problem at once: version, driver, source
