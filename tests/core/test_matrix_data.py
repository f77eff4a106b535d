"""The shipped matrix: every row sourced, every version parses, no row contradicts another file; look-ups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from compat.commands.matrix import side_file_owners
from compat.matrix import gpu_keys, load_matrix
from tests.conftest import ROOT

MATRIX = ROOT / "matrix"


def test_shipped_matrix_validates_with_extras() -> None:
    side_file_owners()  # every side file's validator registered, as `compat matrix validate` does
    load_matrix(MATRIX, validate_extras=True)  # raises MatrixError listing every problem


@pytest.mark.parametrize("path", sorted(MATRIX.glob("*.yaml")), ids=lambda p: p.name)
def test_every_row_has_a_source_and_file_an_update(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    assert "updated" in doc
    rows = [r for v in doc.values() if isinstance(v, list) for r in v if isinstance(r, dict)]
    assert rows, "no rows"
    unsourced = [r for r in rows if not str(r.get("source", "")).startswith("http")]
    assert not unsourced, unsourced[:3]


def test_gpu_names_are_unique_after_normalising(matrix) -> None:  # type: ignore[no-untyped-def]
    seen: dict[str, str] = {}
    for g in matrix.gpus:
        for n in {k for name in (g.name, *g.aliases) for k in gpu_keys(name)}:
            assert seen.get(n, g.name) == g.name, (n, seen.get(n), g.name)
            seen[n] = g.name
    assert len(matrix.gpus) >= 80


def test_every_gpu_cc_is_known_to_cuda_yaml(matrix) -> None:  # type: ignore[no-untyped-def]
    known = {r.cc for r in matrix.ccs}
    assert {g.cc for g in matrix.gpus} <= known


# cuDNN releases a framework bundles but whose support matrix was not found (left out, answered "unknown").
CUDNN_GAPS = {"8.3.2"}


def test_torch_variants_consistent(matrix) -> None:  # type: ignore[no-untyped-def]
    from packaging.version import Version

    for r in matrix.torch:
        assert r.pypi_default is None or r.variant(r.pypi_default) is not None
        for v in r.variants:
            if v.is_cuda:
                assert v.index_url == f"https://download.pytorch.org/whl/{v.tag}", (r.raw, v.tag)
                assert v.tag == "cu" + (v.cuda or "").replace(".", ""), (r.raw, v.tag, v.cuda)
            if v.cudnn and ".".join(v.cudnn.split(".")[:3]) not in CUDNN_GAPS:
                assert matrix.cudnn_release(Version(v.cudnn)) is not None, (r.raw, v.tag, v.cudnn)


def test_tf_cuda_and_cudnn_exist(matrix) -> None:  # type: ignore[no-untyped-def]
    from packaging.version import Version

    for t in matrix.tensorflow:
        if t.cuda:
            assert matrix.cuda_release(Version(t.cuda)) is not None, t.raw
        if t.cudnn and Version(t.cudnn) >= Version("7.6"):  # cudnn.yaml starts at 7.6
            assert matrix.cudnn_release(Version(t.cudnn)) is not None, (t.raw, t.cudnn)


def test_cuda_driver_rows_never_decrease_within_a_major(matrix) -> None:  # type: ignore[no-untyped-def]
    from packaging.version import Version

    for os_name in ("linux", "windows"):
        last: dict[int, Version] = {}
        for r in matrix.cuda_releases:
            d = r.min_driver.get(os_name)
            if d is None:
                continue
            major = r.version.release[0]
            if major in last:
                assert Version(d) >= last[major], (r.raw, os_name, d)
            last[major] = Version(d)


# ---------------------------------------------------------------- `compat matrix` look-ups


def test_lookup_cuda_json(run) -> None:  # type: ignore[no-untyped-def]
    r = run("matrix", "cuda", "12.4.1", "--json")
    doc = json.loads(r.out)
    assert r.code == 0 and doc["version"] == "12.4.1"
    assert doc["min_driver"] == {"linux": "550.54.15", "windows": "551.78"}
    assert doc["minor_compat_floor"] == {"linux": "525.60.13", "windows": "527.41"}
    assert set(doc["compute_capabilities"]) == {"min", "max"} and doc["compute_capabilities"]["min"] == "5.0"
    assert doc["source"].startswith("https://")


def test_lookup_gpu_json(run) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("matrix", "gpu", "RTX 4090", "--json").out)
    assert doc["compute_capability"] == "8.9" and doc["architecture"].startswith("Ada")


def test_lookup_cudnn_torch_tf(run) -> None:  # type: ignore[no-untyped-def]
    c = json.loads(run("matrix", "cudnn", "9.1.0", "--json").out)
    assert c["version"] == "9.1.0" and {p["major"] for p in c["cuda"]} == {11, 12} and "min_driver" in c
    t = json.loads(run("matrix", "torch", "2.6.0", "--json").out)
    assert t["pypi_default"] == "cu124" and "3.13" in t["python"]
    v = {x["tag"]: x for x in t["variants"]}
    assert (
        v["cu124"]["cuda"] == "12.4" and v["cu124"]["cudnn"] == "9.1.0.70" and "sm_90" in v["cu124"]["archs"]
    )
    assert v["cu124"]["index_url"] == "https://download.pytorch.org/whl/cu124"
    f = json.loads(run("matrix", "tensorflow", "2.16.1", "--json").out)
    assert (f["cuda"], f["cudnn"]) == ("12.3", "8.9") and "3.12" in f["python"]


def test_lookup_text_and_unknown_keys(run) -> None:  # type: ignore[no-untyped-def]
    assert "CUDA 12.4.1" in run("matrix", "cuda", "12.4.1").out
    r = run("matrix", "torch", "2.6.9")
    assert r.code == 2 and "nearest known" in r.err and "2.6.0" in r.err
    r = run("matrix", "gpu", "RTX 4091")
    assert r.code == 2 and "4090" in r.err
    assert run("matrix", "cuda", "banana").code == 2
