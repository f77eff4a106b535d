"""The doctor on a real NVIDIA GPU (opt-in: -m gpu; skipped where no NVIDIA driver is loaded)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compat.checks.doctor import doctor_checks
from compat.probes import gather_facts
from compat.resolver import resolve

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not Path("/proc/driver/nvidia/version").exists(), reason="no NVIDIA driver loaded here"
    ),
]


def test_real_nvml_sees_the_gpus(doctor_matrix: Any) -> None:
    facts = gather_facts(frameworks=False)
    assert facts.probes["nvml"]["status"] == "ok", facts.probes["nvml"]
    assert facts.gpus, facts.gpus_source
    g = facts.gpus[0]
    assert (
        g.cc is not None and g.details["memory_total"] > 0 and g.details["uuid"].startswith(("GPU-", "MIG-"))
    )
    assert isinstance(g.details["health"]["temperature"], int)
    driver = facts.get("driver")
    assert driver is not None and driver.source == "nvml"
    # The kernel module and the NVML library report the same version on a healthy machine.
    assert facts.probes["driver"]["kernel_version"] == driver.raw
    assert facts.probes["driver"]["mismatch"] is False
    ids = {f.id for f in resolve(facts, doctor_matrix, extra_checks=doctor_checks).findings}
    assert not ids & {"gpu.none", "driver.missing", "driver.mismatch", "driver.dev-nodes", "driver.nvml"}


def test_real_framework_child_uses_the_gpu() -> None:
    facts = gather_facts(cache=False)
    child = (facts.probes["frameworks"].get("children") or {}).get("torch")
    if child is None:
        pytest.skip("torch is not installed")
    assert child["status"] == "ok", child
    doc = child["result"]
    if doc.get("cuda"):
        assert doc["cuda_available"] is True and doc["device_count"] >= 1
        assert any("libcudart" in p or "libcuda.so" in p for p in doc["libs"])
