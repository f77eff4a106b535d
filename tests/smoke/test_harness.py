"""The child-process harness against stand-in children that crash, hang, leave processes behind or print junk."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from compat.smoke import SmokeOptions, run_smoke
from compat.smoke.harness import group_members, last_stage, read_result, run_child
from tests.smoke.helpers import alive, group_alive, standin

# The cause must come out the same whether compat.explain or the stand-in table answers.


def test_passing_child_with_junk_on_stdout_passes(tmp_path: Path) -> None:
    run = standin(tmp_path, "pass")
    r = run.result
    assert (r.verdict, r.exit_code, r.signal, r.cause) == ("passed", 0, None, None)
    assert (r.loss_first, r.loss_last, r.steps) == (2.0, 1.0, 3)
    assert r.framework_version == "9.9.9+standin"
    assert group_alive(run.pgid) == []


def test_child_claiming_success_with_a_rising_loss_fails(tmp_path: Path) -> None:
    r = standin(tmp_path, "not_decreasing").result
    assert (r.verdict, r.exit_code) == ("failed", 1)
    assert "did not decrease" in r.message


def test_segfault_is_crashed_segfault(tmp_path: Path) -> None:
    run = standin(tmp_path, "segv")
    r = run.result
    assert (r.verdict, r.signal, r.cause, r.exit_code) == ("crashed", "SIGSEGV", "segfault", 1)
    assert "first_step" in r.message  # where it died, from the progress markers
    assert r.details["stage"] == "first_step"
    assert group_alive(run.pgid) == []


def test_segfault_after_a_cudnn_mismatch_names_the_mismatch(tmp_path: Path) -> None:
    r = standin(tmp_path, "segv", text="stderr_tf_cudnn_mismatch_segv.txt").result
    assert (r.verdict, r.signal, r.cause) == ("crashed", "SIGSEGV", "cudnn_mismatch")
    assert r.fixes


def test_abort_is_crashed_with_sigabrt(tmp_path: Path) -> None:
    run = standin(tmp_path, "abort")
    r = run.result
    assert (r.verdict, r.signal, r.cause) == ("crashed", "SIGABRT", "segfault")
    assert group_alive(run.pgid) == []


def test_sigkill_confirmed_by_the_oom_kill_count_is_host_oom(tmp_path: Path) -> None:
    run = standin(tmp_path, "sigkill", oom_counts=[3, 4])
    r = run.result
    assert (r.verdict, r.signal, r.cause) == ("crashed", "SIGKILL", "host_oom")
    assert r.details["oom_kill_confirmed"] is True
    assert "rose by 1" in r.details["oom_evidence"]
    assert group_alive(run.pgid) == []


def test_sigkill_named_in_the_kernel_log_is_host_oom(tmp_path: Path) -> None:
    # The recorded kernel log line, re-addressed to this run's child (its pid is only known once it ran):
    # the harness asks for the kernel log after the child is gone, so the test serves a log naming it.
    from compat.smoke import oom

    recorded = (Path(__file__).parent.parent / "data" / "smoke" / "dmesg_oom_kill.txt").read_text()
    pidfile = tmp_path / "standin-sigkill.pid"

    def klog() -> tuple[str, str]:
        return recorded.replace("4649", pidfile.read_text()).replace("[  772.", "[99999999."), "test dmesg"

    def argv(framework: str, result: Path, t0: float) -> list[str]:
        import sys

        from tests.smoke.helpers import STANDIN

        return [sys.executable, str(STANDIN), "sigkill", "--out", str(result), "--selfpid", str(pidfile)]

    r = run_smoke(
        SmokeOptions(framework="torch"),
        child_argv=argv,
        installed={"torch": "1"},
        oom_counter=lambda: oom.OomCount(None, "unreadable here"),
        kernel_log=klog,
    )
    assert (r.verdict, r.signal, r.cause) == ("crashed", "SIGKILL", "host_oom")
    assert "kernel log" in r.details["oom_evidence"]


def test_sigkill_without_oom_evidence_is_not_blamed_on_memory(tmp_path: Path) -> None:
    r = standin(tmp_path, "sigkill", oom_counts=[2, 2], kernel_log="").result
    assert (r.verdict, r.signal, r.cause) == ("crashed", "SIGKILL", None)
    assert r.details["oom_kill_confirmed"] is False
    assert "not the OOM killer" in r.message


def test_sigkill_with_no_readable_evidence_says_it_is_unconfirmed(tmp_path: Path) -> None:
    r = standin(tmp_path, "sigkill").result
    assert (r.verdict, r.cause) == ("crashed", None)
    assert r.details["oom_kill_confirmed"] is None
    assert "could not be confirmed" in r.message


@pytest.mark.parametrize("mode", ["hang", "hang_ignore_term"])
def test_hang_times_out_and_the_group_is_killed(tmp_path: Path, mode: str) -> None:
    t = time.monotonic()
    run = standin(tmp_path, mode, timeout=1.0, grace=0.5)
    took = time.monotonic() - t
    r = run.result
    assert (r.verdict, r.exit_code, r.signal) == ("timed_out", 1, None)
    assert "first_step" in r.message
    assert took < 10, f"the deadline was 1 s (+0.5 s grace) but the verdict took {took:.1f} s"
    assert group_alive(run.pgid) == []
    assert not alive(run.pgid)


@pytest.mark.parametrize("mode", ["grandchild", "grandchild_ignore_term"])
def test_grandchild_that_outlives_the_child_is_killed(tmp_path: Path, mode: str) -> None:
    pidfile = tmp_path / "grandchild.pid"
    run = standin(tmp_path, mode, pidfile=pidfile)
    grandchild = int(pidfile.read_text())
    assert run.result.verdict == "passed"
    assert run.result.details["leftover_processes"] == 1
    assert not alive(grandchild), "the grandchild outlived the smoke job"
    assert group_alive(run.pgid) == []


@pytest.mark.slow  # bounded-time/hang case: ~2-3 s of waiting; .ci/run's slow step runs it
def test_grandchild_of_a_hung_child_goes_with_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    run = standin(tmp_path, "grandchild_hang", pidfile=pidfile, timeout=2.0)
    assert run.result.verdict == "timed_out"
    assert not alive(int(pidfile.read_text()))
    assert group_alive(run.pgid) == []


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("stderr_torch_no_kernel_image.txt", "arch_not_supported"),
        ("stderr_torch_cuda_oom.txt", "gpu_oom"),
        ("stderr_tf_gpu_oom.txt", "gpu_oom"),
    ],
)
@pytest.mark.parametrize("mode", ["error_exit", "error_result"])
def test_cuda_error_text_is_classified(tmp_path: Path, mode: str, text: str, cause: str) -> None:
    run = standin(tmp_path, mode, text=text)
    r = run.result
    assert (r.verdict, r.signal, r.cause, r.exit_code) == ("failed", None, cause, 1)
    assert r.fixes, "a classified failure comes with fixes"
    assert r.details["diagnosis"]["category"] == cause
    assert group_alive(run.pgid) == []


@pytest.mark.parametrize("mode", ["junk", "json_list"])
def test_garbage_output_is_a_failure_not_a_crash_of_compat(tmp_path: Path, mode: str) -> None:
    run = standin(tmp_path, mode)
    r = run.result
    assert (r.verdict, r.signal, r.exit_code) == ("failed", None, 1)
    assert r.message.startswith("garbage output")
    r.to_json()  # junk bytes decode with replacement, the document still serialises
    tail = str(r.details.get("stderr_tail", ""))
    assert not any(ord(ch) < 32 and ch not in "\t\n" for ch in tail), "control characters reach the terminal"
    assert group_alive(run.pgid) == []


def test_odd_exit_code_without_a_verdict_is_failed(tmp_path: Path) -> None:
    r = standin(tmp_path, "exit3").result
    assert r.verdict == "failed"
    assert "exited with code 3" in r.message


def test_a_child_that_cannot_start_is_failed(tmp_path: Path) -> None:
    r = run_smoke(
        SmokeOptions(framework="torch"),
        child_argv=lambda f, p, t: [str(tmp_path / "no-such-python")],
        installed={"torch": "1"},
    )
    assert r.verdict == "failed"
    assert "could not start" in r.message


def test_run_child_reads_head_and_tail_of_huge_output(tmp_path: Path) -> None:
    import sys

    code = "import sys; sys.stderr.write('first\\n' + 'x' * 1_000_000 + '\\nlast\\n')"
    run = run_child([sys.executable, "-c", code], tmp_path / "none.json", timeout=30)
    assert run.returncode == 0
    assert run.stderr.startswith("first") and run.stderr.rstrip().endswith("last")
    assert "bytes left out" in run.stderr
    assert run.result is None and run.result_problem == "the child wrote no result file"


def test_result_file_problems_are_named(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert read_result(empty) == (None, "the child's result file is empty")
    arr = tmp_path / "arr.json"
    arr.write_text("[]")
    assert read_result(arr)[1] == "the child's result file holds a JSON list, not an object"
    ok = tmp_path / "ok.json"
    ok.write_text('{"status": "passed"}')
    assert read_result(ok) == ({"status": "passed"}, None)


def test_last_stage_reads_the_markers() -> None:
    err = "noise\n@@compat-smoke stage import 0.1\nmore\n@@compat-smoke stage first_step 2.0\ntail"
    assert last_stage(err) == "first_step"
    assert last_stage("nothing here") is None


def test_group_members_sees_this_process() -> None:
    import os

    members = group_members(os.getpgid(0))
    assert members is not None and os.getpid() in members
