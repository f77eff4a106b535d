"""The pure parts of the child scripts: loss check, CPU comparison tolerance, the max-batch doubling loop."""

from __future__ import annotations

import importlib.util
import math
from typing import Any, Optional

import pytest

from compat.smoke.job import HERE


def _common() -> Any:
    spec = importlib.util.spec_from_file_location("_smoke_common_under_test", HERE / "_child_common.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


common = _common()


def test_losses_decreased() -> None:
    assert common.losses_decreased([2.0, 1.9, 1.5]) == (True, "")
    ok, why = common.losses_decreased([2.0, 2.1, 2.0])
    assert not ok and "did not decrease" in why
    ok, why = common.losses_decreased([2.0, math.nan, 1.0])
    assert not ok and "step 2" in why
    assert not common.losses_decreased([2.0])[0]
    assert not common.losses_decreased([2.0, math.inf])[0]


def test_forward_matches() -> None:
    assert common.forward_matches(0.0, 3.0)
    assert common.forward_matches(0.01, 3.0)  # 1e-3 + 5e-3 * 3 = 0.016
    assert not common.forward_matches(0.05, 3.0)
    assert not common.forward_matches(math.nan, 3.0)


def fake_device(capacity: int, per_sample: int = 1000, fixed: int = 50_000) -> Any:
    """try_batch for a device with `capacity` bytes: peak = fixed + per_sample * n, OOM beyond capacity."""
    calls: list[int] = []

    def try_batch(n: int) -> Optional[int]:
        calls.append(n)
        peak = fixed + per_sample * n
        if peak > capacity:
            raise common.OutOfMemory(f"CUDA out of memory at {n}")
        return peak

    try_batch.calls = calls  # type: ignore[attr-defined]
    return try_batch


def test_find_max_batch_doubles_until_out_of_memory() -> None:
    dev = fake_device(capacity=600_000)
    out = common.find_max_batch(dev, 32)
    assert dev.calls == [32, 64, 128, 256, 512, 1024]
    assert out["max_batch"] == 512 and out["stopped"] == "out_of_memory"
    assert out["bytes_per_sample"] == 1000  # the slope, without the fixed cost
    assert out["tried"][-1] == [1024, None, "oom"]


def test_find_max_batch_when_nothing_fits() -> None:
    out = common.find_max_batch(fake_device(capacity=10), 32)
    assert out["max_batch"] == 0 and out["bytes_per_sample"] is None and out["stopped"] == "out_of_memory"


def test_find_max_batch_cap_and_limit() -> None:
    dev = fake_device(capacity=10**12)
    out = common.find_max_batch(dev, 16, cap=100)
    assert dev.calls == [16, 32, 64] and out["max_batch"] == 64 and out["stopped"] == "cap"
    out = common.find_max_batch(fake_device(capacity=10**12), 1, limit=8)
    assert out["max_batch"] == 8 and out["stopped"] == "limit"


def test_find_max_batch_lets_other_errors_through() -> None:
    def broken(n: int) -> Optional[int]:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(RuntimeError):
        common.find_max_batch(broken, 8)


def test_clean_float() -> None:
    assert common.clean_float(1.5) == 1.5
    assert common.clean_float(math.nan) == "nan"
    assert common.clean_float("x") is None
