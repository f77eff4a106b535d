"""Options, the result document, exit codes, findings and text: the public contract of `compat smoke`."""

from __future__ import annotations

import io
import json

import pytest

from compat.errors import InputError
from compat.findings import Fix
from compat.smoke import SmokeOptions, SmokeResult, render_text, smoke_findings

CONTRACT_KEYS = {
    "schema_version",
    "status",
    "framework",
    "framework_version",
    "device",
    "device_name",
    "steps",
    "loss_first",
    "loss_last",
    "seconds",
    "samples_per_second",
    "peak_memory_bytes",
    "cudnn_used",
    "max_batch",
    "signal",
    "cause",
    "message",
    "fixes",
}


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ({"steps": 0}, "--steps"),
        ({"steps": 1}, "--steps"),
        ({"timeout": -1}, "--timeout"),
        ({"timeout": 0}, "--timeout"),
        ({"timeout": float("inf")}, "--timeout"),
        ({"framework": "mxnet"}, "--framework"),
        ({"device": "tpu"}, "--device"),
        ({"batch_size": 0}, "--batch-size"),
        ({"python": "/no/such/python"}, "--python"),
    ],
)
def test_bad_options_are_input_errors(options: dict[str, object], flag: str) -> None:
    with pytest.raises(InputError) as exc:
        SmokeOptions(**options).validate()  # type: ignore[arg-type]
    assert str(exc.value).startswith(flag)
    assert "\n" not in str(exc.value)


def passed(**kw: object) -> SmokeResult:
    base: dict[str, object] = dict(
        verdict="passed",
        framework="torch",
        framework_version="2.13.0+cpu",
        device="cpu",
        device_name="Xeon",
        steps=20,
        loss_first=2.3,
        loss_last=1.9,
        seconds=2.5,
        samples_per_second=1234.5678,
        peak_memory_bytes=300 * 2**20,
        cudnn_used=False,
        details={
            "requested_framework": "auto",
            "requested_device": "auto",
            "timings": {"import": 1.0, "first_step": 0.1, "total": 2.5},
        },
    )
    base.update(kw)
    return SmokeResult(**base)  # type: ignore[arg-type]


def test_json_has_exactly_the_contract_keys_plus_details() -> None:
    doc = passed().to_json()
    assert set(doc) >= CONTRACT_KEYS
    assert set(doc) - CONTRACT_KEYS == {"requested_framework", "requested_device", "timings"}
    assert doc["schema_version"] == 1 and doc["max_batch"] is None and doc["fixes"] == []
    assert doc["samples_per_second"] == 1234.6
    json.dumps(doc, allow_nan=False)


def test_details_cannot_shadow_contract_keys() -> None:
    doc = passed(details={"status": "bogus", "requested_framework": "auto"}).to_json()
    assert doc["status"] == "passed"


@pytest.mark.parametrize(
    ("status", "requested", "code"),
    [
        ("passed", "auto", 0),
        ("failed", "auto", 1),
        ("crashed", "torch", 1),
        ("timed_out", "auto", 1),
        ("skipped", "auto", 0),
        ("skipped", "torch", 1),
        ("skipped", "tensorflow", 1),
    ],
)
def test_exit_codes(status: str, requested: str, code: int) -> None:
    r = SmokeResult(status, None, details={"requested_framework": requested})
    assert r.exit_code == code


def test_findings_for_a_pass_on_the_cpu() -> None:
    fs = smoke_findings(passed())
    assert [f.id for f in fs] == ["smoke.passed", "smoke.cpu_only"]
    assert all(f.group == "smoke" and f.severity == "info" for f in fs)
    assert "2.3 → 1.9" in fs[0].message
    assert fs[0].facts["framework"] == "torch"


def test_findings_for_a_gpu_pass_with_max_batch() -> None:
    r = passed(
        device="cuda",
        device_name="NVIDIA H100",
        cudnn_used=True,
        max_batch=4096,
        details={
            "requested_device": "auto",
            "batch_size": 32,
            "memory_per_sample_bytes": 3 * 2**20,
            "max_batch_search": {"stopped": "out_of_memory"},
        },
    )
    fs = smoke_findings(r)
    assert [f.id for f in fs] == ["smoke.passed", "smoke.max_batch"]
    assert "cuDNN used" in fs[0].message
    assert "4096" in fs[1].title and "3 MiB per sample" in fs[1].title
    assert "ran out of memory" in fs[1].message


def test_find_max_batch_on_cpu_says_gpu_only() -> None:
    r = passed(details={"requested_device": "cpu", "max_batch_note": "--find-max-batch applies to GPUs only"})
    fs = smoke_findings(r)
    assert [f.id for f in fs] == ["smoke.passed", "smoke.max_batch"]
    assert "GPUs only" in fs[1].message


@pytest.mark.parametrize(
    ("status", "fid"),
    [("failed", "smoke.failed"), ("crashed", "smoke.crashed"), ("timed_out", "smoke.timed_out")],
)
def test_findings_for_failures_are_errors_with_the_cause(status: str, fid: str) -> None:
    r = SmokeResult(
        status,
        "torch",
        signal="SIGSEGV" if status == "crashed" else None,
        cause="gpu_oom",
        message="it broke",
        fixes=(Fix("lower the batch size"),),
        details={
            "diagnosis": {
                "category": "gpu_oom",
                "title": "The GPU ran out of memory",
                "evidence": "CUDA out of memory. Tried to allocate 20.00 MiB",
            },
            "stage": "first_step",
        },
    )
    (f,) = smoke_findings(r)
    assert (f.id, f.severity, f.group) == (fid, "error", "smoke")
    assert f.title.endswith("The GPU ran out of memory")
    assert "Tried to allocate" in f.message
    assert f.fixes == (Fix("lower the batch size"),)
    assert f.facts["stage"] == "first_step"


def test_findings_for_skips() -> None:
    (auto,) = smoke_findings(
        SmokeResult("skipped", None, message="nothing installed", details={"requested_framework": "auto"})
    )
    assert (auto.id, auto.severity) == ("smoke.skipped", "info")
    (explicit,) = smoke_findings(
        SmokeResult(
            "skipped", "tensorflow", message="not installed", details={"requested_framework": "tensorflow"}
        )
    )
    assert (explicit.id, explicit.severity) == ("smoke.not_installed", "error")


def test_render_text_pass_and_crash() -> None:
    text = render_text(passed(), io.StringIO())
    assert text.startswith("compat smoke: PASSED  torch 2.13.0+cpu on cpu (Xeon)")
    assert "time to verdict 2.5 s" in text and "import 1.00 s" in text
    crash = SmokeResult(
        "crashed",
        "torch",
        signal="SIGSEGV",
        cause="segfault",
        message="died during first_step",
        details={"stderr_tail": "Fatal Python error: Segmentation fault"},
    )
    text = render_text(crash, io.StringIO())
    assert text.startswith("compat smoke: CRASHED")
    assert "[smoke.crashed]" in text and "Fatal Python error" in text
    assert "\x1b[" not in text  # not a TTY: no colour
