from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.errors import InputError
from compat.facts import Facts, Gpu, apply_flags, apply_overrides, load_snapshot, make_fact, save_snapshot


def test_fact_keeps_raw_and_parsed() -> None:
    f = make_fact("driver", "535.104.05", "nvml")
    assert f.raw == "535.104.05" and f.value == "535.104.5" and f.source == "nvml" and f.present


def test_missing_fact_has_reason() -> None:
    f = make_fact("driver", "", "COMPAT_OVERRIDE_DRIVER", reason="COMPAT_OVERRIDE_DRIVER is empty")
    assert not f.present and f.reason == "COMPAT_OVERRIDE_DRIVER is empty"


def test_malformed_fact_is_input_error() -> None:
    with pytest.raises(InputError, match="malformed driver"):
        make_fact("driver", "banana", "--driver")


def test_snapshot_round_trip(tmp_path: Path) -> None:
    facts = Facts(
        values={
            "driver": make_fact("driver", "550.54.15", "nvml"),
            "torch": make_fact("torch", "2.5.1+cu124", "torch"),
            "cudnn": make_fact("cudnn", "", "probe", reason="no cuDNN found"),
        },
        gpus=(Gpu("NVIDIA H100 80GB HBM3", "9.0", "nvml", 0, {"memory_total": 85520809984}),),
        probes={"resources": {"shm_bytes": 67108864}},
    )
    p = tmp_path / "snap.json"
    save_snapshot(facts, p)
    back = load_snapshot(p)
    assert back.to_snapshot() == facts.to_snapshot()
    assert json.loads(p.read_text())["schema_version"] == 1
    assert back.values["cudnn"].reason == "no cuDNN found"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ("not json", "is not JSON"),
        ("[1, 2]", "not a compat snapshot"),
        ('{"schema_version": 2, "facts": {}}', "unsupported snapshot schema_version 2"),
        ('{"facts": {}}', "unsupported snapshot schema_version null"),
        ('{"schema_version": "ghp_secret", "facts": {}}', "schema_version a string \\(this"),
        ('{"schema_version": 1}', "no 'facts' object"),
        ('{"schema_version": 1, "facts": {"driver": {"raw": "banana", "source": "x"}}}', "malformed driver"),
        ('{"schema_version": 1, "facts": {"gpus": [{"name": "x", "cc": "99"}]}}', "compute capability"),
    ],
)
def test_bad_snapshots(tmp_path: Path, content: str, message: str) -> None:
    p = tmp_path / "s.json"
    p.write_text(content)
    with pytest.raises(InputError, match=message):
        load_snapshot(p)


def test_missing_snapshot(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_snapshot(tmp_path / "nope.json")


def test_overrides_replace_and_empty_means_absent() -> None:
    base = Facts(
        values={
            "driver": make_fact("driver", "550.54.15", "nvml"),
            "torch": make_fact("torch", "2.5.1", "dist"),
            "torch_cuda": make_fact("torch_cuda", "12.4", "torch.version.cuda"),
        },
        gpus=(Gpu("NVIDIA A100-SXM4-80GB", "8.0", "nvml"),),
    )
    out = apply_overrides(
        base,
        {
            "COMPAT_OVERRIDE_DRIVER": "470.82.01",
            "COMPAT_OVERRIDE_TORCH": "2.1.0+cu121",
            "COMPAT_OVERRIDE_GPU": "",
        },
    )
    assert out.values["driver"].raw == "470.82.01" and out.values["driver"].source == "COMPAT_OVERRIDE_DRIVER"
    assert out.values["torch"].raw == "2.1.0+cu121"
    # A new torch invalidates the facts measured from the old one.
    assert "torch_cuda" not in out.values
    assert out.gpus == ()


def test_override_empty_driver_is_missing_with_reason() -> None:
    out = apply_overrides(
        Facts(values={"driver": make_fact("driver", "550.54.15", "nvml")}), {"COMPAT_OVERRIDE_DRIVER": ""}
    )
    assert out.get("driver") is None
    assert "COMPAT_OVERRIDE_DRIVER" in (out.reason("driver") or "")


def test_cc_override_refines_known_gpus() -> None:
    base = Facts(gpus=(Gpu("Mystery GPU", None, "nvml", 0),))
    out = apply_overrides(base, {"COMPAT_OVERRIDE_CC": "8.9"})
    assert out.gpus is not None and out.gpus[0].cc == "8.9" and out.gpus[0].name == "Mystery GPU"


def test_flags_gpu_and_cc() -> None:
    out = apply_flags(Facts(), {"gpu": "RTX 4090", "cc": None})
    assert out.gpus is not None and out.gpus[0].name == "RTX 4090" and out.gpus[0].cc is None
    with pytest.raises(InputError):
        apply_flags(Facts(), {"cc": "99"})
