"""--redact: host names, user names in paths, GPU UUIDs and serials go; versions and models stay."""

from __future__ import annotations

from compat.redact import Redactor


def r() -> Redactor:
    return Redactor(hosts=["gpu-node-17.cluster.example.org", "gpu-node-17"], users=["alice"])


def test_text() -> None:
    line = (
        "alice@gpu-node-17: /home/alice/venv/bin/python on GPU-5d2c2c6d-1a2b-4c3d-8e9f-0123456789ab "
        "MIG-5d2c2c6d-1a2b-4c3d-8e9f-0123456789ab C:\\Users\\alice\\x /Users/alice/y 10.1.2.3 127.0.0.1 "
        "00:1b:21:3a:4f:5c driver 535.104.05 NVIDIA A100-SXM4-80GB"
    )
    out = r().text(line)
    assert "alice" not in out
    assert "gpu-node-17" not in out
    assert "5d2c2c6d" not in out
    assert "10.1.2.3" not in out and "00:1b:21" not in out
    assert "/home/<user>/venv/bin/python" in out
    assert "C:\\Users\\<user>\\x" in out and "/Users/<user>/y" in out
    assert "GPU-<uuid>" in out and "MIG-<uuid>" in out
    assert "127.0.0.1" in out
    assert "535.104.05" in out and "A100-SXM4-80GB" in out


def test_document_keeps_structure_and_versions() -> None:
    doc = {
        "schema_version": 1,
        "host": "gpu-node-17",
        "gpus": [
            {
                "name": "NVIDIA H100 80GB HBM3",
                "uuid": "GPU-5d2c2c6d-1a2b-4c3d-8e9f-0123456789ab",
                "serial": "1652222014738",
                "memory_total": 85899345920,
            }
        ],
        "python": {"executable": "/home/alice/.venv/bin/python", "version": "3.11.7"},
        "driver": "550.54.15",
    }
    out = r().document(doc)
    assert out["schema_version"] == 1
    assert out["host"] == "<redacted>"
    assert out["gpus"][0]["uuid"] == "<redacted>"
    assert out["gpus"][0]["serial"] == "<redacted>"
    assert out["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert out["gpus"][0]["memory_total"] == 85899345920
    assert out["python"]["executable"] == "/home/<user>/.venv/bin/python"
    assert out["driver"] == "550.54.15"
    assert doc["host"] == "gpu-node-17"  # a copy, not in place


def test_short_or_generic_names_are_not_redacted_everywhere() -> None:
    red = Redactor(hosts=[], users=["root"])
    # "root" was given explicitly, so it is redacted; the automatic discovery skips such names.
    assert "torch" in red.text("torch 2.5.1 at /root/x")
