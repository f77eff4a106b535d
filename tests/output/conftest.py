"""Real inputs for the output-layer tests: every command run on recorded data (tests/data, examples/)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FROZEN = DATA / "dockerfile" / "wild" / "frozen"
SNAPSHOT = ROOT / "examples" / "snapshot-a100-cu121-driver470.json"
GOLDEN = Path(__file__).resolve().parent / "golden"
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"

DOCKERFILE = DATA / "dockerfile" / "real" / "mistral-inference-broken.Dockerfile"
COMPOSE = FROZEN / "llama-factory--docker-docker-cuda-docker-compose.yml.compose.yaml"
K8S = FROZEN / "kubernetes-engine-samples--ai-ml-llm-finetuning-gemma-finetune.yaml.k8s.yaml"
FLEET = sorted(str(p) for p in (DATA / "fleet" / "cluster-a").glob("*.json"))


@pytest.fixture
def bare_python(tmp_path: Path) -> str:
    """A real interpreter that sees no site-packages (so no framework): `python -S` behind a script."""
    exe = tmp_path / "bare-python"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n', encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.fixture
def gpu_oom_log(tmp_path: Path) -> str:
    """A real log of tests/data/explain/gpu_oom.yaml (pytorch/pytorch#16417), as a file."""
    case = yaml.safe_load((DATA / "explain" / "gpu_oom.yaml").read_text(encoding="utf-8"))["cases"][1]
    p = tmp_path / "train.log"
    p.write_text(case["log"], encoding="utf-8")
    return str(p)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from a folder whose nearest pyproject.toml is one the test writes (tmp_path/pyproject.toml)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def commands(bare_python: str, log: str) -> dict[str, list[str]]:
    """kind -> the argv of a real run that prints a document of that kind."""
    return {
        "report": ["check", "--snapshot", str(SNAPSHOT)],
        "doctor": ["doctor", "--no-smoke", "--python", bare_python, "--timeout", "20"],
        "dockerfile": ["dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01"],
        "compose": ["compose", str(COMPOSE), "--target-driver", "470.82.01"],
        "k8s": ["k8s", str(K8S), "--target-driver", "470.82.01"],
        "explain": ["explain", log],
        "smoke": ["smoke", "--python", bare_python],
        "fleet": ["fleet", "merge", *FLEET],
        "suggestion": [
            "suggest",
            "--no-probe",
            "--driver",
            "550.54.15",
            "--gpu",
            "RTX 4090",
            "--python",
            "3.11",
            "--os",
            "linux",
        ],
        "matrix-cuda": ["matrix", "cuda", "12.4"],
        "matrix-gpu": ["matrix", "gpu", "A100"],
        "matrix-cudnn": ["matrix", "cudnn", "9.1.0"],
        "matrix-torch": ["matrix", "torch", "2.5.1"],
        "matrix-tensorflow": ["matrix", "tensorflow", "2.17.0"],
        "matrix-jax": ["matrix", "jax", "0.4.30"],
    }


__all__ = ["COMPOSE", "DOCKERFILE", "FLEET", "GOLDEN", "K8S", "ROOT", "SARIF_SCHEMA", "SNAPSHOT", "commands"]
