"""Issue 14: error codes from the official enumerations, status, bare deaths, --context, --with-doctor,
keyword hygiene and the byte-level pre-filter."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from compat.explain.diagnosis import Diagnosis, explain_document, verdict_of
from compat.explain.engine import Scanner
from compat.explain.error_codes import ENUMS, validate_codes
from compat.explain.prefilter import Prefilter
from compat.explain.settle import settle_suspects
from compat.explain.signature import Catalogue
from tests.explain.helpers import ROOT

CODES = ROOT / "matrix" / "error_codes.yaml"
# Enumerator counts in the headers the rows were generated from (CUDA 12.6 driver_types.h / cuda.h, cuDNN
# 8.2 + 9.6, cublas_api.h, nccl.h.in, nvml.h, absl/status/status.h): a row lost is a failure.
ENUM_COUNTS = {
    "cudaError_t": 130,
    "CUresult": 96,
    "cudnnStatus_t": 52,
    "cublasStatus_t": 9,
    "ncclResult_t": 8,
    "nvmlReturn_t": 31,
    "absl::StatusCode": 16,
}


def _doc() -> Any:
    return yaml.safe_load(CODES.read_text(encoding="utf-8"))


def _scan(catalogue: Catalogue, text: str, **kw: Any) -> Scanner:
    s = Scanner(catalogue, **kw)
    s.feed_block(text, final=True)
    return s


# ------------------------------------------------------------------ matrix/error_codes.yaml


def test_error_codes_cover_every_enumeration_with_sources() -> None:
    doc = _doc()
    assert validate_codes(doc) == []
    per = Counter(r["enum"] for r in doc["codes"])
    assert dict(per) == ENUM_COUNTS and set(per) == set(ENUMS)
    for r in doc["codes"]:
        assert r["source"].startswith("https://") and "@" in r["header"], r["name"]
        assert r["meaning"].strip(), r["name"]


def test_error_code_validation_reports_problems() -> None:
    bad = {"updated": "2026-11-23", "codes": [{"enum": "cudaError_t", "name": "x y", "value": "1"}]}
    problems = validate_codes(bad)
    assert any("identifier" in p for p in problems) and any("integer" in p for p in problems)
    assert any("category" in p for p in problems) and validate_codes([]) != []


@pytest.mark.parametrize(
    ("line", "category"),
    [
        ("RuntimeError: CUDA error: cudaErrorInsufficientDriver", "driver_too_old"),
        ("jax: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "no_gpu_visible"),
        (
            "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
            "nvml_mismatch",
        ),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            "gpu_oom",
        ),
        (
            "torch.distributed.DistBackendError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "nccl_distributed",
        ),
        (
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
            "gpu_oom",
        ),
        (
            "CUDA error 217 at ggml-cuda.cu:6292: peer access is not supported between these two devices",
            "nccl_distributed",
        ),
        (
            "RuntimeError: CUDA error: the launch timed out and was terminated cudaErrorLaunchTimeout",
            "gpu_error",
        ),
    ],
)
def test_codes_in_messages_name_a_category(catalogue: Catalogue, line: str, category: str) -> None:
    d = _scan(catalogue, line + "\n").diagnoses()
    assert d and d[0].category == category, [x.category for x in d]


def test_every_code_name_is_recognised(catalogue: Catalogue) -> None:
    """No documented code leaves explain silent: each gives its category with its documented meaning."""
    for r in _doc()["codes"]:
        line = f"RuntimeError: failed with {r['name']} in call"
        if r["enum"] == "absl::StatusCode":
            line = f"jaxlib.xla_extension.XlaRuntimeError: {r['name']}: failed"
        d = _scan(catalogue, line + "\n").diagnoses()
        assert d, r["name"]
        assert r["category"] in [x.category for x in d], (r["name"], [x.category for x in d])
        assert any(r["name"] in x.explanation for x in d), r["name"]


def test_unknown_cuda_error_is_other_gpu_error_not_silence(catalogue: Catalogue) -> None:
    d = _scan(catalogue, "RuntimeError: CUDA error: something nobody documented\n").diagnoses()
    assert [x.category for x in d] == ["gpu_error"] and verdict_of(d) == "inconclusive"
    # a generic "CUDA error" line next to a named cause adds nothing
    d = _scan(catalogue, "RuntimeError: CUDA error: out of memory\n").diagnoses()
    assert [x.category for x in d] == ["gpu_oom"]


# ------------------------------------------------------------------ status and bare deaths


def test_status_values(catalogue: Catalogue) -> None:
    assert verdict_of([]) == "nothing-found"
    doc = explain_document(_scan(catalogue, "RuntimeError: CUDA error: out of memory\n").diagnoses())
    assert doc["status"] == "diagnosed" and doc["schema_version"] == 1
    assert explain_document([])["status"] == "nothing-found"


def test_dying_kernel_is_inconclusive_host_memory_first(catalogue: Catalogue) -> None:
    text = "epoch 3 step 137/2000 loss 0.2\nThe kernel appears to have died. It will restart automatically.\n"
    d = _scan(catalogue, text).diagnoses()
    assert verdict_of(d) == "inconclusive"
    assert [x.category for x in d] == ["host_oom", "segfault", "hardware_xid"]
    assert all(x.suspected and x.confirm is not None and x.confirm.command for x in d)
    assert d[0].confidence > d[1].confidence > d[2].confidence
    assert d[0].evidence_at[0].line == 2
    j = d[0].to_json()
    assert j["suspected"] is True and j["confirm"]["command"] and j["evidence_lines"][0]["line"] == 2


def test_a_named_cause_beats_a_bare_death(catalogue: Catalogue) -> None:
    text = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)\n"
    d = _scan(catalogue, text).diagnoses()
    assert d[0].category == "host_oom" and not d[0].suspected and verdict_of(d) == "diagnosed"


def test_bus_error_suspects_shared_memory_first(catalogue: Catalogue) -> None:
    d = _scan(catalogue, "Creating workers...\nBus error (core dumped)\n").diagnoses()
    assert [x.category for x in d][:2] == ["dataloader_shm", "host_oom"] and d[0].suspected


# ------------------------------------------------------------------ --with-doctor


def _died(catalogue: Catalogue) -> list[Diagnosis]:
    return _scan(catalogue, "The kernel appears to have died. It will restart automatically.\n").diagnoses()


def test_doctor_kernel_log_oom_names_host_memory(catalogue: Catalogue) -> None:
    probes = {
        "health": {
            "status": "ok",
            "oom": [{"time": "2026-11-23T10:00:01", "pid": 4242, "process": "python", "cgroup": True}],
            "xid": [],
        }
    }
    d = settle_suspects(_died(catalogue), probes)
    assert d[0].category == "host_oom" and not d[0].suspected and d[0].confidence >= 0.8
    assert "pid 4242" in d[0].facts["doctor"] and "2026-11-23T10:00:01" in d[0].facts["doctor"]
    assert verdict_of(d) == "diagnosed"


def test_doctor_xid_names_the_gpu_and_latest_event_wins(catalogue: Catalogue) -> None:
    probes = {
        "health": {
            "status": "ok",
            "oom": [{"time": "2026-11-23T09:00:00", "pid": 1, "process": "python"}],
            "xid": [
                {
                    "time": "2026-11-23T10:00:00",
                    "code": 79,
                    "pci": "0000:3b:00",
                    "message": "GPU has fallen off the bus.",
                }
            ],
        }
    }
    d = settle_suspects(_died(catalogue), probes)
    assert [x.category for x in d][:2] == ["hardware_xid", "host_oom"]
    assert "Xid 79" in d[0].facts["doctor"] and "10:00:00" in d[0].facts["doctor"]


def test_doctor_cgroup_memory_events(catalogue: Catalogue) -> None:
    probes = {"health": {"status": "ok", "oom": [], "xid": []}, "resources": {"cgroup": {"oom_kills": 3}}}
    d = settle_suspects(_died(catalogue), probes)
    assert d[0].category == "host_oom" and "oom_kill 3" in d[0].facts["doctor"]


def test_doctor_with_a_clean_kernel_log_moves_the_native_crash_up(catalogue: Catalogue) -> None:
    d = settle_suspects(_died(catalogue), {"health": {"status": "ok", "oom": [], "xid": []}})
    assert d[0].category == "segfault" and all("no OOM kill" in x.facts["doctor"] for x in d)
    # no kernel log read (no probe data): the answer stays as the log alone gave it
    assert [x.category for x in settle_suspects(_died(catalogue), {})] == [
        "host_oom",
        "segfault",
        "hardware_xid",
    ]


# ------------------------------------------------------------------ keyword hygiene, line numbers, context


def test_step_counters_are_not_exit_codes(catalogue: Catalogue) -> None:
    noise = "".join(
        f"Epoch 1: 137/2000 [00:{i:02d}<01:00] loss=0.{i}139 step 139 137it/s code 13{i % 10}x\n"
        for i in range(50)
    )
    assert _scan(catalogue, noise).diagnoses() == []
    d = _scan(catalogue, noise + "Process finished with exit code 137\n").diagnoses()
    assert d[0].category == "host_oom" and d[0].evidence_at[0].line == 51


def test_line_numbers_and_context_across_blocks(catalogue: Catalogue) -> None:
    lines = [f"step {i} loss 0.1" for i in range(1, 10)] + ["RuntimeError: CUDA error: out of memory"]
    lines += [f"after {i}" for i in range(1, 4)]
    text = "\n".join(lines) + "\n"
    for cut in (0, 5, len(text) // 2, len(text) - 3):
        s = Scanner(catalogue, context=2)
        if cut:
            s.feed_block(text[:cut])
        s.feed_block(text[cut:])
        ev = s.diagnoses()[0].evidence_at[0]
        assert (ev.line, ev.before, ev.after) == (
            10,
            ("step 8 loss 0.1", "step 9 loss 0.1"),
            ("after 1", "after 2"),
        ), cut


def test_prefilter_pure_python_fallback_agrees(catalogue: Catalogue) -> None:
    data = (ROOT / "tests" / "data" / "explain").glob("*.yaml")
    text = "\n".join(c["log"] for p in sorted(data) for c in yaml.safe_load(p.read_text("utf-8"))["cases"])
    low = text.encode("utf-8").lower()
    fast = Prefilter(catalogue.keywords)
    pure = Prefilter(catalogue.keywords, pure=True)
    assert pure.kind == "regex"
    starts = list(pure.starts(low))
    assert len(starts) > 100 and starts == list(fast.starts(low))
    a = [d.category for d in _scan(catalogue, text).diagnoses()]
    b = [d.category for d in _scan(catalogue, text, pure=True).diagnoses()]
    assert a == b and a


def test_cli_context_and_status(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "x.log"
    p.write_text("a\nb\nRuntimeError: CUDA error: out of memory\nc\n", encoding="utf-8")
    r = run("explain", "--json", "--context", "1", str(p))
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    ev = doc["diagnoses"][0]["evidence_lines"][0]
    assert doc["status"] == "diagnosed" and ev == {
        "line": 3,
        "text": ev["text"],
        "before": ["b"],
        "after": ["c"],
    }
    r = run("explain", "--context", "1", str(p))
    assert r.code == 0 and "     3 │ RuntimeError" in r.out and "     2 │ b" in r.out
    r = run("explain", "--context", "-1", str(p))
    assert r.code == 2


def test_with_doctor_facts_through_the_public_api() -> None:
    from compat.explain import diagnose_text
    from compat.facts import Facts

    probes = {"health": {"status": "ok", "oom": [{"time": "t1", "pid": 7, "process": "python"}], "xid": []}}
    d = diagnose_text(
        "The kernel appears to have died. It will restart automatically.\n",
        facts=Facts(values={}, probes=probes),
    )
    assert d[0].category == "host_oom" and not d[0].suspected and verdict_of(d) == "diagnosed"
    assert "pid 7" in d[0].facts["doctor"] and d[0].facts.get("cross_check")


def test_chunking_never_changes_the_answer_or_line_numbers(catalogue: Catalogue) -> None:
    import random

    from tests.explain.helpers import cases

    text = "\r\n".join(c["log"] for c in cases()[:60]).encode("utf-8")
    one = Scanner(catalogue)
    one.feed_bytes(text, final=True)
    want = [(d.category, tuple(e.line for e in d.evidence_at)) for d in one.diagnoses()]
    rng = random.Random(14)
    for _ in range(5):
        s = Scanner(catalogue)
        pos = 0
        while pos < len(text):
            step = rng.choice([1, 7, 100, 4096, 50_000])
            s.feed_bytes(text[pos : pos + step])
            pos += step
        assert [(d.category, tuple(e.line for e in d.evidence_at)) for d in s.diagnoses()] == want
    assert want and one.lines == text.count(b"\n")
