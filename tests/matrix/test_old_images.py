"""The Python of tensorflow/tensorflow and pytorch/pytorch images (issue 16, "Data"), read from matrix/images.yaml.

Sources (see the rows' comments): TensorFlow's Docker Hub description as quoted in tensorflow/tensorflow#30057,
#57072 and Delta-ML/delta#238 (Python-3-only images built before September 2021 are Ubuntu 18.04, Python 3.6),
measured in tensorflow/tensorflow#41153 ("tensorflow/tensorflow:2.1.1-gpu ... Python 3.6.9"); pytorch/pytorch#60932
("pytorch/pytorch:1.9.0-cuda11.1-cudnn8-runtime ... Python 3.7.10") and #42604 (1.6.0 images "purposefully have 3.7").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _findings(run: Any, path: Path) -> tuple[int, dict[str, Any], dict[str, Any]]:
    r = run("dockerfile", str(path), "--json")
    doc = json.loads(r.out)
    return r.code, {f["id"]: f for f in doc["findings"]}, doc["facts"]


def _python_fact(facts: Any) -> str | None:
    py = facts.get("python") if isinstance(facts, dict) else None
    return py.get("value") if isinstance(py, dict) else None


@pytest.mark.parametrize(
    ("image", "python"),
    [
        ("tensorflow/tensorflow:2.1.1-gpu", "3.6"),
        ("tensorflow/tensorflow:2.4.1-gpu-jupyter", "3.6"),
        ("tensorflow/tensorflow:2.6.0-gpu", "3.6"),
        ("pytorch/pytorch:1.9.0-cuda11.1-cudnn8-runtime", "3.7"),
        ("pytorch/pytorch:1.6.0-cuda10.1-cudnn7-devel", "3.7"),
        ("pytorch/pytorch:1.7.1-cuda11.0-cudnn8-runtime", "3.8"),
    ],
)
def test_image_python_is_known(run: Any, tmp_path: Path, image: str, python: str) -> None:
    df = tmp_path / "Dockerfile"
    df.write_text(f"FROM {image}\nRUN pip install numpy\n", encoding="utf-8")
    _, _, facts = _findings(run, df)
    assert _python_fact(facts) == python


@pytest.mark.parametrize(
    "image",
    [
        "tensorflow/tensorflow:2.1.0-gpu",  # Python 2.7 in tags without "py": not representable, left unknown
        "tensorflow/tensorflow:2.7.0-gpu",  # built after September 2021 (Ubuntu 20.04): no Python stated
        "pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime",  # its tags disagree (3.8.8 vs 3.7)
    ],
)
def test_image_python_stays_unknown_without_a_source(run: Any, tmp_path: Path, image: str) -> None:
    df = tmp_path / "Dockerfile"
    df.write_text(f"FROM {image}\nRUN pip install numpy\n", encoding="utf-8")
    _, _, facts = _findings(run, df)
    assert _python_fact(facts) is None


def test_torch_without_wheels_for_the_tf_image_python(run: Any, tmp_path: Path) -> None:
    # torch 1.11.0's PyPI wheels start at cp37; the 2.4.1-gpu image's Python is 3.6
    df = tmp_path / "Dockerfile"
    df.write_text("FROM tensorflow/tensorflow:2.4.1-gpu\nRUN pip install torch==1.11.0\n", encoding="utf-8")
    code, found, _ = _findings(run, df)
    assert code == 1
    assert found["python.framework"]["severity"] == "error"
    assert "3.6" in found["python.framework"]["title"]


def test_tensorflow_without_wheels_for_the_pytorch_image_python(run: Any, tmp_path: Path) -> None:
    # TensorFlow 2.12.0 has no cp37 wheels (tensorflow.yaml: 3.8 .. 3.11); the 1.9.0 image's Python is 3.7
    df = tmp_path / "Dockerfile"
    df.write_text(
        "FROM pytorch/pytorch:1.9.0-cuda11.1-cudnn8-runtime\nRUN pip install tensorflow==2.12.0\n",
        encoding="utf-8",
    )
    code, found, _ = _findings(run, df)
    assert code == 1
    assert "3.7" in found["python.framework"]["title"]
