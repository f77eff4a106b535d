"""`compat compose`: GPU reservations, runtime, NVIDIA_VISIBLE_DEVICES, shm and the Dockerfiles services build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

WILD = Path(__file__).resolve().parents[1] / "data" / "dockerfile" / "wild"


def _ids(doc: dict[str, Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in doc["findings"]:
        out.setdefault(f["id"], []).append(f["line"])
    return out


def _compose(tmp_path: Path, text: str, **files: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    p = tmp_path / "compose.yaml"
    p.write_text(text, encoding="utf-8")
    for rel, content in files.items():
        f = tmp_path / rel.replace("__", "/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(content, encoding="utf-8")
    return p


GPU = """\
services:
  train:
    build: .
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""


def test_real_compose_files_are_clean(run: Any) -> None:
    # LLaMA-Factory's CUDA compose file reserves all GPUs and sets ipc: host (tests/data/dockerfile/wild).
    files = sorted(WILD.glob("**/llama-factory--docker-docker-cuda-docker-compose.yml.compose.yaml"))
    assert files
    r = run("compose", str(files[0]), "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["findings"] == []
    assert doc["files"][0]["services"] == ["llamafactory"]


def test_torch_build_without_shm_and_its_dockerfile_findings(tmp_path: Path, run: Any) -> None:
    p = _compose(
        tmp_path,
        GPU,
        Dockerfile="FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN pip install torch==2.1.0 --index-url "
        "https://download.pytorch.org/whl/cpu\n",
    )
    r = run("compose", str(p), "--json")
    doc = json.loads(r.out)
    ids = _ids(doc)
    assert ids["compose.shm"] == [2]  # the service's line
    assert "dockerfile.cpu-wheel" in ids  # the Dockerfile the service builds is checked too
    cpu = next(f for f in doc["findings"] if f["id"] == "dockerfile.cpu-wheel")
    assert cpu["facts"]["file"].endswith("Dockerfile") and cpu["line"] == 2
    assert r.code == 1


def test_ipc_host_or_shm_size_silence_shm(tmp_path: Path, run: Any) -> None:
    df = "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\n"
    for extra in ("    ipc: host\n", "    shm_size: 8gb\n"):
        p = _compose(tmp_path, GPU + extra, Dockerfile=df)
        doc = json.loads(run("compose", str(p), "--json").out)
        assert "compose.shm" not in _ids(doc), extra


def test_cuda_image_without_gpu_and_visible_devices_alone(tmp_path: Path, run: Any) -> None:
    p = _compose(
        tmp_path,
        "services:\n  a:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
        "  b:\n    image: python:3.11-slim\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n",
    )
    r = run("compose", str(p), "--json")
    ids = _ids(json.loads(r.out))
    assert ids["compose.no-gpu"] == [2]
    assert ids["compose.visible-devices"] == [7]
    assert r.code == 0  # warnings only
    assert run("compose", str(p), "--json", "--fail-on", "warning").code == 1


def test_device_reservation_errors(tmp_path: Path, run: Any) -> None:
    p = _compose(
        tmp_path,
        "services:\n  a:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    deploy:\n      resources:\n"
        "        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n"
        "              device_ids: ['0']\n",
    )
    r = run("compose", str(p), "--json")
    doc = json.loads(r.out)
    titles = [f["title"] for f in doc["findings"] if f["id"] == "compose.gpu-device"]
    assert any("no capabilities" in t for t in titles)
    assert any("count and device_ids" in t for t in titles)
    assert "compose.no-gpu" not in _ids(doc)
    assert r.code == 1


def test_runtime_nvidia_is_a_gpu_request(tmp_path: Path, run: Any) -> None:
    p = _compose(
        tmp_path, "services:\n  a:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    runtime: nvidia\n"
    )
    ids = _ids(json.loads(run("compose", str(p), "--json").out))
    assert ids == {"compose.runtime": [4]}


def test_target_driver_reaches_images_and_default_branch_warning(tmp_path: Path, run: Any) -> None:
    p = _compose(
        tmp_path, "services:\n  a:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n    gpus: all\n"
    )
    r = run("compose", str(p), "--json", "--target-driver", "535.54.03")
    assert _ids(json.loads(r.out)) == {"driver.cuda": [3]}  # CUDA 12.4 on 535: minor-version compatibility
    r = run("compose", str(p), "--json", "--target-driver", "450.80.02")
    doc = json.loads(r.out)
    assert r.code == 1 and [f["line"] for f in doc["findings"] if f["severity"] == "error"] == [3]


def test_merge_keys_and_directory_argument(tmp_path: Path, run: Any) -> None:
    _compose(
        tmp_path,
        "x-gpu: &gpu\n  deploy:\n    resources:\n      reservations:\n        devices:\n"
        "          - {driver: nvidia, count: all, capabilities: [gpu]}\n"
        "services:\n  a:\n    <<: *gpu\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n",
    )
    r = run("compose", str(tmp_path), "--json")
    assert r.code == 0 and json.loads(r.out)["findings"] == []


def test_several_files_in_one_run(tmp_path: Path, run: Any) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    _compose(a, "services:\n  x:\n    image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    _compose(b, "services:\n  y:\n    image: python:3.12\n")
    doc = json.loads(run("compose", str(a), str(b), "--json").out)
    assert [f["file"].split("/")[-2] for f in doc["files"]] == ["a", "b"]
    assert [f["facts"]["file"].split("/")[-2] for f in doc["findings"]] == ["a"]


@pytest.mark.parametrize(
    "text,msg",
    [
        ("services: [1, 2]\n", "not a Compose file"),
        ("services:\n  a: {image: x\n", "not valid YAML"),
        ("version: '3'\n", "not a Compose file"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, run: Any, text: str, msg: str) -> None:
    p = _compose(tmp_path, text)
    r = run("compose", str(p))
    assert r.code == 2 and msg in r.err and len(r.err.strip().splitlines()) == 1


def test_missing_file_and_alias_bomb(tmp_path: Path, run: Any) -> None:
    r = run("compose", str(tmp_path / "nope.yaml"))
    assert r.code == 2 and "does not exist" in r.err
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=False)
    )
    p = _compose(tmp_path, bomb + "services: {}\n")
    r = run("compose", str(p))
    assert r.code == 2 and "YAML values" in r.err


@pytest.mark.parametrize(
    "v", ["null", "1", "[]", "{}", "[1, {a: b}]", "'all'", "99999999999999999999999999999999999999999999"]
)
def test_odd_values_never_crash(tmp_path: Path, run: Any, v: str) -> None:
    text = (
        f"services:\n  a:\n    environment: {v}\n    build: {v}\n    gpus: {v}\n    runtime: {v}\n"
        f"  b:\n    deploy: {{resources: {{reservations: {{devices: [{{capabilities: {v}, count: {v}, device_ids: {v}}}]}}}}}}\n"
        f"  c: {v}\n"
    )
    r = run("compose", str(_compose(tmp_path, text)), "--json")
    assert r.code in (0, 1) and "Traceback" not in r.err, r.err
    json.loads(r.out)
