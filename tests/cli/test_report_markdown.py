"""The markdown doctor report and the inventory it shares with the text doctor: built from JSON documents."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from compat.inventory import inventory_rows
from compat.redact import Redactor
from compat.report_markdown import doctor_markdown, fence
from tests.conftest import DATA

UUID = "GPU-3f2b6c1e-9a4d-4c2b-8e1f-0123456789ab"


def _report() -> dict[str, Any]:
    """A doctor report of an H100 host: the recorded NVML golden's GPU, plus the other probes' shapes."""
    golden = json.loads((DATA / "nvml_profiles" / "golden" / "h100-80gb-hbm3.json").read_text())
    gpu = dict(golden["gpus"][0], uuid=UUID, serial="1654922001234")
    return {
        "schema_version": 1,
        "verdict": "error",
        "matrix": {"updated": "2026-11-22"},
        "host": "gpu-node-17.example.org",
        "interpreter": {
            "python": "/home/alice/envs/train/bin/python",
            "reason": "the active virtual environment",
        },
        "facts": {
            "driver": golden["driver"],
            "driver_cuda": golden["driver_cuda"],
            "cuda": {
                "raw": "12.4",
                "source": "nvcc --version (/usr/local/cuda-12.4/bin/nvcc)",
                "value": "12.4",
            },
            "cudnn": {"missing": True, "reason": "no cuDNN found", "source": "cudnn"},
            "torch": {"raw": "2.5.1+cu124", "source": "torch.__version__", "value": "2.5.1+cu124"},
            "torch_cuda": {"raw": "12.4", "source": "torch.version.cuda", "value": "12.4"},
            "torch_cudnn": {"raw": "9.1.0", "source": "torch.backends.cudnn.version()", "value": "9.1.0"},
            "python": {"raw": "3.11.7", "source": "sys.version", "value": "3.11"},
            "os": {"raw": "linux", "source": "this machine", "value": "linux"},
            "gpus": [gpu],
        },
        "gpus": [gpu],
        "findings": [
            {
                "id": "driver.cuda",
                "severity": "error",
                "title": "Driver too old | for <CUDA>",
                "message": "The driver supports CUDA 12.2 but torch needs 12.4.",
                "fixes": [
                    {"text": "Install an older torch", "command": "pip install torch==2.4.1", "kind": "shell"}
                ],
                "group": "driver",
            }
        ],
        "skipped": [{"id": "cudnn.cuda", "reason": "no cuDNN found on this machine"}],
        "probes": {
            "resources": {
                "memory": {"total": 512 * 1024**3, "available": 400 * 1024**3},
                "cpus": {"count": 64, "affinity": 32},
                "shm": {"total": 64 * 1024**3, "free": 64 * 1024**3, "path": "/dev/shm"},
                "disk": [{"path": "/home/alice/work", "free": 100 * 1024**3, "total": 1000 * 1024**3}],
            },
            "environment": {"container": {"in_container": True, "signs": ["/.dockerenv"]}, "wsl": False},
            "toolkits": {
                "chosen": {"path": "/usr/local/cuda-12.4/bin/nvcc"},
                "installed": {"/usr/local/cuda-12.4": "12.4"},
            },
        },
    }


def test_inventory_names_every_subject() -> None:
    rows = dict(inventory_rows(_report()))
    assert rows["GPU 0"] == "NVIDIA H100 80GB HBM3, 79.6 GiB, cc 9.0"
    assert rows["Driver"] == "590.48.01 (supports CUDA ≤ 13.1)"
    assert rows["CUDA toolkit"] == "12.4 (/usr/local/cuda-12.4/bin/nvcc)"
    assert rows["cuDNN"] == "none found"
    assert rows["PyTorch"] == "2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0)"
    assert rows["Python"] == "3.11.7 (/home/alice/envs/train/bin/python)"
    assert rows["RAM"] == "512.0 GiB total, 400.0 GiB available"
    assert rows["CPUs"] == "32 usable of 64"
    assert rows["/dev/shm"] == "64.0 GiB (64.0 GiB free)"
    assert rows["Container/WSL"] == "container (/.dockerenv), not WSL"


def test_inventory_of_a_facts_only_snapshot_says_unknown_not_crash() -> None:
    rows = dict(inventory_rows({"facts": {"os": {"raw": "linux"}}}))
    assert rows["GPU"] == "unknown" and rows["Driver"] == "unknown" and rows["Frameworks"] == "none installed"
    assert "RAM" not in rows


def test_markdown_has_the_table_findings_and_details() -> None:
    md = doctor_markdown(_report())
    assert md.startswith("## compat doctor report\n")
    assert "**Verdict: ERROR** (1 error)" in md
    assert "| **GPU 0** | NVIDIA H100 80GB HBM3, 79.6 GiB, cc 9.0 |" in md
    assert "| **PyTorch** | 2.5.1+cu124 (CUDA 12.4, cuDNN 9.1.0) |" in md
    # a finding's text cannot open an HTML tag in the page
    assert "#### ❌ error: Driver too old | for &lt;CUDA&gt; `driver.cuda`" in md
    assert "```sh\n  pip install torch==2.4.1\n  ```" in md
    assert "<details><summary>Skipped checks (1)</summary>" in md
    assert "<details><summary>Facts and where they came from</summary>" in md
    assert md.count("<details>") == md.count("</details>") == 4  # skipped, facts, GPUs, probes; no smoke
    assert "Smoke" not in md


def test_redact_removes_host_user_uuid_and_serial() -> None:
    doc = _report()
    plain = doctor_markdown(doc)
    assert UUID in plain and "alice" in plain and "1654922001234" in plain and "gpu-node-17" in plain
    md = doctor_markdown(doc, redact=True)
    for secret in (UUID, "alice", "1654922001234", "gpu-node-17"):
        assert secret not in md
    assert "/home/<user>/envs/train/bin/python" in md
    assert "NVIDIA H100 80GB HBM3" in md and "590.48.01" in md  # what a maintainer needs stays
    assert doc == _report()  # the caller's document is not changed


def test_redactor_names_this_machines_host(monkeypatch: pytest.MonkeyPatch) -> None:
    r = Redactor(hosts=["buildbox"], users=["bob"])
    assert r.text("ssh bob@buildbox: /home/bob/x") == "ssh <user>@<host>: /home/<user>/x"


def test_fence_outlives_backticks_in_the_body() -> None:
    assert fence("a ``` b").startswith("````\n")
    assert fence("plain").startswith("```\n")


def test_huge_probe_output_is_cut() -> None:
    doc = _report()
    doc["probes"]["frameworks"] = {"output": "x" * 100_000}
    md = doctor_markdown(copy.deepcopy(doc))
    assert len(md) < 40_000 and "more characters left out" in md
