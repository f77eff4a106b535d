"""The verdict names the evidence that decided it, for each way a run ends."""

from __future__ import annotations

import signal

from compat.explain import diagnose_lines
from compat.record.document import ExitInfo
from compat.record.verdict import verdict_of
from tests.record.helpers import GiB, MiB, record

KILLED = ExitInfo("signaled", signal=int(signal.SIGKILL))
CUDA_OOM = [
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.12 GiB is free. Of the allocated memory 76.50 GiB is allocated by PyTorch",
]


def verdict(rec):  # type: ignore[no-untyped-def]
    return verdict_of(rec, diagnose_lines(rec.output_tail))


def test_oom_kill_delta_makes_host_oom_definitive() -> None:
    cg = {
        "version": 2,
        "path": "/job",
        "limit": 24 * GiB,
        "peak": int(23.8 * GiB),
        "oom_kill_before": 0,
        "oom_kill_after": 1,
        "oom_kill_delta": 1,
    }
    v = verdict(record(KILLED, rss=[i * GiB for i in range(1, 24)], cgroup=cg, readable=False))
    assert v.outcome == "host_oom"
    assert v.title.startswith("killed by the OOM killer at ")
    assert "23.8 GiB of the 24.0 GiB cgroup limit" in v.title
    assert "oom_kill 0 → 1" in v.deciding[0]
    assert v.findings[0].id == "record.host_oom"


def test_kernel_line_naming_our_pid_is_host_oom_without_cgroup_counters() -> None:
    ev = [
        {
            "kind": "oom_kill",
            "pid": 4242,
            "t": 5.0,
            "text": "Out of memory: Killed process 4242 (python) total-vm:1kB, anon-rss:1kB",
        }
    ]
    v = verdict(record(KILLED, cgroup={}, kernel_events=ev))
    assert v.outcome == "host_oom" and any(
        "kernel log: Out of memory: Killed process 4242" in d for d in v.deciding
    )


def test_sigkill_without_oom_evidence_is_something_else() -> None:
    v = verdict(record(KILLED, readable=False))
    assert v.outcome == "killed"
    assert "killed by something else (a scheduler, a person" in v.title
    assert any("oom_kill unchanged" in d for d in v.deciding)
    assert any("kernel log was not readable" in d for d in v.deciding)


def test_cuda_oom_with_the_gpu_at_its_limit_names_the_peak() -> None:
    used = [60 * GiB + i * 2 * GiB for i in range(10)]  # to 78 GiB of 80
    v = verdict(record(ExitInfo("exited", 1), gpu_used=used, output=CUDA_OOM))
    assert v.outcome == "gpu_oom"
    assert "at its limit" in v.title
    assert any(
        "GPU 0 peaked at 78.0 GiB of 80.0 GiB" in d and "the run held 77.5 GiB" in d for d in v.deciding
    )


def test_cuda_oom_below_the_limit_says_so() -> None:
    v = verdict(record(ExitInfo("exited", 1), gpu_used=[10 * GiB] * 10, output=CUDA_OOM))
    assert v.outcome == "gpu_oom" and "before the GPU looked full" in v.title


def test_xid_is_a_hardware_finding() -> None:
    rec = record(ExitInfo("exited", 1), gpu_used=[10 * GiB] * 10)
    rec.xid_events = [{"t": 4.0, "xid": 79, "gpu": 0}]
    v = verdict(rec)
    assert v.outcome == "hardware_xid" and "Xid 79" in v.title
    assert v.findings[0].group == "health"


def test_segfault_from_the_signal_and_the_kernel_line() -> None:
    ev = [
        {"kind": "segfault", "pid": 4242, "t": 3.0, "text": "python[4242]: segfault at 0 ip 0 sp 0 error 6"}
    ]
    v = verdict(record(ExitInfo("signaled", signal=int(signal.SIGSEGV), core_dumped=True), kernel_events=ev))
    assert v.outcome == "segfault"
    assert v.deciding[0] == "the run ended with SIGSEGV (core dumped)"
    assert "kernel log: python[4242]: segfault" in v.deciding[1]


def test_plain_failure_uses_explain() -> None:
    out = ["RuntimeError: CUDA error: no kernel image is available for execution on the device"]
    v = verdict(record(ExitInfo("exited", 1), output=out))
    assert v.outcome == "error" and v.deciding[0].startswith("explain: ")
    assert v.explain and v.explain[0]["category"] == "arch_not_supported"


def test_unexplained_failure_says_nothing_matched() -> None:
    v = verdict(record(ExitInfo("exited", 7), output=["bye"]))
    assert v.outcome == "error" and v.title == "exited with status 7"


def test_success_gives_one_headroom_line() -> None:
    v = verdict(record(ExitInfo("exited", 0), gpu_used=[40 * GiB] * 10, rss=[3 * GiB] * 10))
    assert v.outcome == "ok"
    assert v.headroom is not None and v.headroom.count("\n") == 0
    assert "GPU 0 peaked at 40.0 GiB of 80.0 GiB" in v.headroom
    assert "host RSS peaked at 3.0 GiB of the 24.0 GiB cgroup limit" in v.headroom


def test_success_without_gpu_says_gpu_was_not_recorded() -> None:
    v = verdict(record(ExitInfo("exited", 0)))
    assert v.headroom is not None and "GPU not recorded (NVML did not start: no driver)" in v.headroom


def test_leak_until_the_limit_is_reported_with_start_and_rate() -> None:
    rss = [2 * GiB] * 20 + [2 * GiB + i * 256 * MiB for i in range(1, 80)]  # to ~21.75 GiB of 24
    cg = {
        "version": 2,
        "path": "/job",
        "limit": 24 * GiB,
        "peak": 24 * GiB,
        "oom_kill_before": 0,
        "oom_kill_after": 1,
        "oom_kill_delta": 1,
    }
    v = verdict(record(KILLED, rss=rss, cgroup=cg))
    assert v.outcome == "host_oom"
    leak = [f for f in v.findings if f.id == "record.leak.host"]
    assert leak and leak[0].severity == "error"
    assert "256.0 MiB/s" in leak[0].title
    assert leak[0].facts["start_t"] in (19.0, 20.0)  # the knee: flat until 0:19, growing from 0:20
    assert "loss.item()" in leak[0].message


def test_sustained_throttling_is_reported() -> None:
    th: list[tuple[str, ...]] = [("hw_thermal",)] * 10
    v = verdict(record(ExitInfo("exited", 0), gpu_used=[10 * GiB] * 10, throttle=th))
    assert any(f.id == "record.throttle.thermal" for f in v.findings)
    assert v.headroom is not None and "throttling: GPU 0 thermal" in v.headroom


def test_ecc_errors_rising_during_the_run_are_a_health_finding() -> None:
    rec = record(ExitInfo("exited", 0), gpu_used=[10 * GiB] * 10)
    rec.samples = [
        type(s)(
            s.t,
            s.rss,
            s.procs,
            s.cgroup,
            s.swap,
            s.shm,
            tuple(g.__class__(**{**g.__dict__, "ecc": 0 if s.t < 5 else 2}) for g in s.gpus),
        )
        for s in rec.samples
    ]
    v = verdict(rec)
    ecc = [f for f in v.findings if f.id == "record.ecc"]
    assert ecc and ecc[0].title == "GPU 0: 2 uncorrected ECC error(s) during the run"


def test_summary_lists_a_leak_found_in_a_successful_run() -> None:
    from compat.record.summary import summary

    rss = [100 * MiB + i * 30 * MiB for i in range(30)]
    rec = record(ExitInfo("exited", 0), rss=rss)
    rec.verdict = verdict(rec).to_json()
    text = summary(rec)
    assert text.startswith("compat run: the run finished successfully")
    assert "warning: host RSS of the process tree grew steadily (30.0 MiB/s from 0:00)" in text
    assert "Headroom: " in text


def test_explain_last_answers_an_unknown_end_as_watch_does() -> None:
    """`compat watch` exits 0 for "ended, status unknown, nothing shows a failure"; `explain --last` of that record
    says the same (issue 32, item 8), and a failure still exits 1."""
    from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK
    from compat.record.verdict_document import RunVerdictDocument

    ended = {"outcome": "unknown", "title": "ended", "findings": [{"id": "record.ended", "severity": "info"}]}
    assert RunVerdictDocument({"verdict": ended}).exit_code("error") == EXIT_OK
    assert RunVerdictDocument({"verdict": ended}).exit_code("info") == EXIT_INCOMPATIBLE
    bare = {"outcome": "unknown", "title": "ended"}
    assert RunVerdictDocument({"verdict": bare}).exit_code("error") == EXIT_OK
    oom = {
        "outcome": "host_oom",
        "title": "killed",
        "findings": [{"id": "record.host-oom", "severity": "error"}],
    }
    assert RunVerdictDocument({"verdict": oom}).exit_code("error") == EXIT_INCOMPATIBLE
