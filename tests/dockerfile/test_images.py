"""Base-image tags → stacks, and the images.yaml validator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from compat.dockerfile.images import infer, parse_ref, validate_document

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return {"images.yaml": yaml.safe_load((ROOT / "matrix" / "images.yaml").read_text(encoding="utf-8"))}


def test_shipped_images_yaml_is_valid(raw: dict[str, Any]) -> None:
    assert validate_document(raw["images.yaml"]) == []
    assert str(raw["images.yaml"]["updated"]) == "2026-11-27"


def test_registered_as_a_matrix_side_file() -> None:
    from compat.matrixfiles import side_file_validators

    assert side_file_validators()["images.yaml"] is validate_document


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ({"updated": "x"}, "updated"),
        (
            {"updated": __import__("datetime").date(2026, 1, 1), "os": [{"name": "u", "python": "3.10"}]},
            "source",
        ),
        (
            {
                "updated": __import__("datetime").date(2026, 1, 1),
                "ngc": [{"release": "24.1", "cuda": "12.3", "images": ["pytorch"], "source": "s"}],
            },
            "release",
        ),
        (
            {
                "updated": __import__("datetime").date(2026, 1, 1),
                "nvidia_cuda": {"require_cuda": [{"cuda": "12.4", "branches": [535], "source": "s"}]},
            },
            "branches",
        ),
        ([], "mapping"),
    ],
)
def test_validator_reports_problems(doc: Any, problem: str) -> None:
    assert any(problem in p for p in validate_document(doc))


def test_ref_parsing() -> None:
    r = parse_ref("docker.io/library/python:3.10@sha256:abc")
    assert (r.repository, r.tag, r.digest) == ("python", "3.10", "sha256:abc")
    r = parse_ref("localhost:5000/team/img")
    assert (r.repository, r.tag) == ("localhost:5000/team/img", None)


@pytest.mark.parametrize(
    ("image", "cuda", "flavour", "cudnn_major", "python"),
    [
        ("nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04", "12.1.0", "devel", 8, "3.10"),
        ("nvcr.io/nvidia/cuda:11.8.0-runtime-ubuntu20.04", "11.8.0", "runtime", 0, "3.8"),
        ("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "12.4.1", "runtime", 9, "3.10"),
        ("nvidia/cuda:12.6.3-base-ubuntu24.04", "12.6.3", "base", 0, "3.12"),
        ("nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "10.2", "devel", 7, "3.6"),
    ],
)
def test_nvidia_cuda_tags(
    raw: dict[str, Any], image: str, cuda: str, flavour: str, cudnn_major: int, python: str
) -> None:
    st = infer(parse_ref(image), raw)
    assert (st.kind, st.cuda, st.flavour, st.cudnn_major, st.python) == (
        "cuda",
        cuda,
        flavour,
        cudnn_major,
        python,
    )
    assert st.known


def test_cudnn8_tag_gets_its_minor_from_data(raw: dict[str, Any]) -> None:
    assert infer(parse_ref("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"), raw).cudnn == "8.9"
    assert infer(parse_ref("nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04"), raw).cudnn == "8.2"
    assert infer(parse_ref("nvidia/cuda:10.1-cudnn7-runtime-ubuntu18.04"), raw).cudnn is None


@pytest.mark.parametrize(
    "tag,cudnn,major",
    [
        # NV_CUDNN_VERSION in NVIDIA's dist/<cuda>/<os>/runtime/cudnn*/Dockerfile (matrix/images.yaml rows)
        ("11.6.2-cudnn8-runtime-ubuntu20.04", "8.4", 8),
        ("11.7.1-cudnn8-devel-ubuntu20.04", "8.5", 8),
        ("12.4.1-cudnn-runtime-ubuntu22.04", "9.1", 9),
        ("12.6.3-cudnn-devel-ubuntu22.04", "9.5", 9),
        ("12.8.1-cudnn-runtime-ubuntu22.04", "9.8", 9),
        ("11.0.3-cudnn8-runtime-ubuntu20.04", "8.0", 8),
        ("11.2.2-cudnn8-devel-ubuntu20.04", "8.1", 8),
        ("11.5.2-cudnn8-runtime-ubuntu20.04", "8.3", 8),
        ("12.0.1-cudnn8-devel-ubuntu22.04", "8.8", 8),
        ("12.3.2-cudnn9-runtime-ubuntu22.04", "9.0", 9),
        ("12.5.1-cudnn-runtime-ubuntu22.04", "9.2", 9),
        # a row for one patch release wins over the major.minor row
        ("12.9.0-cudnn-runtime-ubuntu22.04", "9.9", 9),
        ("12.6.1-cudnn-devel-ubuntu22.04", "9.3", 9),
        ("12.6.2-cudnn-devel-ubuntu22.04", "9.5", 9),  # no patch row: the 12.6 row
        ("12.8.0-cudnn-runtime-ubuntu22.04", "9.7", 9),
        ("12.9.1-cudnn-runtime-ubuntu24.04", "9.10", 9),
        ("13.0.0-cudnn-devel-ubuntu24.04", "9.12", 9),
        ("13.0.2-cudnn-runtime-ubuntu24.04", None, 9),  # no row read: major from the tag, minor unknown
    ],
)
def test_cudnn_of_nvidia_cuda_tags(raw: dict[str, Any], tag: str, cudnn: str | None, major: int) -> None:
    st = infer(parse_ref(f"nvidia/cuda:{tag}"), raw)
    assert (st.cudnn, st.cudnn_major) == (cudnn, major)


def test_pytorch_images(raw: dict[str, Any]) -> None:
    rt = infer(parse_ref("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"), raw)
    assert (rt.torch, rt.torch_cuda, rt.cuda, rt.nvcc) == ("2.1.0", "12.1", None, False)
    dev = infer(parse_ref("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel"), raw)
    assert (dev.cuda, dev.cudnn_major, dev.nvcc) == ("12.1", 8, True)


def test_ngc_known_and_unknown(raw: dict[str, Any]) -> None:
    st = infer(parse_ref("nvcr.io/nvidia/pytorch:24.05-py3"), raw)
    assert (st.kind, st.cuda, st.cudnn, st.python) == ("ngc-pytorch", "12.4.1", "9.1", "3.10")
    tf = infer(parse_ref("nvcr.io/nvidia/tensorflow:24.02-tf2-py3"), raw)
    assert (tf.kind, tf.cuda, tf.cudnn, tf.min_driver) == ("ngc-tensorflow", "12.3.2", "9.0", "545")
    # a release whose notes were not verified is not guessed from its neighbours
    unverified = infer(parse_ref("nvcr.io/nvidia/tensorflow:24.01-tf2-py3"), raw)
    assert not unverified.known and "24.01" in unverified.reason
    old = infer(parse_ref("nvcr.io/nvidia/pytorch:19.01-py3"), raw)
    assert not old.known and "19.01" in old.reason


@pytest.mark.parametrize("image", ["nvidia/cuda:latest", "pytorch/pytorch", "nvidia/cuda", "foo/bar:1.0"])
def test_unknown_or_latest_is_not_guessed(raw: dict[str, Any], image: str) -> None:
    st = infer(parse_ref(image), raw)
    assert not st.known and st.cuda is None and st.reason


def test_python_and_os_images(raw: dict[str, Any]) -> None:
    assert infer(parse_ref("python:3.11-slim-bookworm"), raw).python == "3.11"
    ub = infer(parse_ref("ubuntu:22.04"), raw)
    assert ub.kind == "os" and ub.os == "ubuntu22.04" and ub.cuda is None
    assert infer(parse_ref("tensorflow/tensorflow:2.15.0-gpu"), raw).tensorflow == "2.15.0"


def test_ngc_cuda_dl_base_tag_is_read_by_rule(raw: dict[str, Any]) -> None:
    st = infer(parse_ref("nvcr.io/nvidia/cuda-dl-base:25.06-cuda12.9-devel-ubuntu24.04"), raw)
    assert (st.kind, st.cuda, st.flavour, st.os, st.nvcc, st.known) == (
        "ngc-base",
        "12.9",
        "devel",
        "ubuntu24.04",
        True,
        True,
    )
    assert st.cudnn_major is None and st.python is None  # not inferred: unknown, not "none"
    rt = infer(parse_ref("nvcr.io/nvidia/cuda-dl-base:25.10-cuda13.0-runtime-ubuntu24.04"), raw)
    assert (rt.cuda, rt.nvcc) == ("13.0", False)
    odd = infer(parse_ref("nvcr.io/nvidia/cuda-dl-base:latest-devel"), raw)
    assert not odd.known


def test_ngc_cuda_dl_base_nvcc_against_torch(tmp_path: Path) -> None:
    from compat.dockerfile import check_dockerfile
    from compat.matrix import load_matrix

    shipped = load_matrix(Path(__file__).resolve().parents[2] / "matrix")
    df = tmp_path / "Dockerfile"
    df.write_text(
        "FROM nvcr.io/nvidia/cuda-dl-base:25.12-cuda13.1-devel-ubuntu24.04\n"
        "RUN apt-get update && apt-get install -y python3-pip\nRUN pip install torch==2.8.0\n"
        "RUN pip install flash-attn --no-build-isolation\n"
    )
    ids = {f.id for f in check_dockerfile(df, shipped).findings if f.severity == "error"}
    assert "dockerfile.nvcc-torch" in ids


def test_pytorch_image_python_where_a_row_says_it(raw: dict[str, Any]) -> None:
    st = infer(parse_ref("pytorch/pytorch:1.12.0-cuda11.3-cudnn8-devel"), raw)
    assert st.python == "3.7" and "pytorch/pytorch:1.12.0" in st.python_how
    assert infer(parse_ref("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"), raw).python == "3.11"
    assert (
        infer(parse_ref("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"), raw).python is None
    )  # no row: unknown
    bad = {"updated": raw["images.yaml"]["updated"], "pytorch_images": [{"version": "2.0.0", "python": 3.1}]}
    problems = validate_document(bad)
    assert any("missing 'source'" in p for p in problems) and any("'python'" in p for p in problems)
