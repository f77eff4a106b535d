"""`compat smoke --distributed` (compat.smoke.distributed): DDP with gloo on 2 CPU ranks, crashes and hangs of a rank.

The NCCL (GPU) path is the same code with backend "nccl" and one rank per GPU; it needs GPUs (not tested here).
Test-only hooks of _child_ddp.py: COMPAT_SMOKE_TEST_CRASH_RANK=R (rank R dies of SIGSEGV after joining) and
COMPAT_SMOKE_TEST_HANG_RANK=R (rank R sleeps forever after joining).
"""

from __future__ import annotations

import importlib.util
import io
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from compat.errors import InputError
from compat.smoke import harness
from compat.smoke.distributed import (
    CHILD,
    budgets,
    classify,
    exit_code,
    render_text,
    run_distributed,
    run_distributed_result,
    validate,
)

# find_spec, not importorskip: importing torch here would put it into every later test's process.
if importlib.util.find_spec("torch") is None:
    pytest.skip("the distributed smoke job trains with PyTorch", allow_module_level=True)


# Marks the processes this test process starts: pytest-xdist runs other tests' ranks at the same time, and the
# leftover check must not count those.
RUN_TOKEN = f"{os.getpid()}-{os.urandom(4).hex()}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_SMOKE_TEST_")}
    env.update(extra)
    env["PYTEST_DIST_SMOKE_RUN"] = RUN_TOKEN
    return env


def _alive(pid: Optional[int]) -> bool:
    if pid is None:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


def _ours(entry: Path) -> bool:
    """Started with this test process's environment (_env), or an environment we cannot read."""
    try:
        return f"PYTEST_DIST_SMOKE_RUN={RUN_TOKEN}".encode() in (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return True


def _leftovers(doc: dict[str, Any]) -> list[int]:
    """Rank processes of this run that still exist, and anything of ours running our child script."""
    pids = [r["pid"] for r in doc["ranks"] if _alive(r.get("pid"))]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(CHILD) in cmd and _alive(int(entry.name)) and _ours(entry):
                pids.append(int(entry.name))
    return pids


@pytest.mark.slow
def test_two_gloo_ranks_train_in_step() -> None:
    doc = run_distributed(None, "auto", 180, 5, env=_env())
    assert doc["schema_version"] == 1
    assert doc["status"] == "passed", (doc["message"], [r.get("output_tail") for r in doc["ranks"]])
    assert (doc["world_size"], doc["backend"], doc["device"]) == (2, "gloo", "cpu")
    assert [r["rank"] for r in doc["ranks"]] == [0, 1] and {r["status"] for r in doc["ranks"]} == {"passed"}
    for r in doc["ranks"]:
        assert r["allreduce"] == {"got": 3.0, "expected": 3.0}
        assert r["weights_in_sync"]["spread"] == 0.0
        assert r["steps"] == 5 and r["loss_last"] < r["loss_first"]
    # Different data on each rank, one model: the losses differ, the weights do not.
    assert doc["ranks"][0]["losses"] != doc["ranks"][1]["losses"]
    assert doc["ranks"][0]["weights_in_sync"]["checksum"] == doc["ranks"][1]["weights_in_sync"]["checksum"]
    assert doc["cause"] is None and exit_code(doc) == 0
    assert _leftovers(doc) == []


@pytest.mark.slow
def test_a_crashed_rank_is_classified_and_nothing_is_left_running() -> None:
    t0 = time.monotonic()
    doc = run_distributed(2, "cpu", 120, 5, env=_env(COMPAT_SMOKE_TEST_CRASH_RANK="1"))
    assert time.monotonic() - t0 < 60
    assert doc["status"] == "crashed" and doc["signal"] == "SIGSEGV"
    assert doc["cause"] == "nccl_distributed"
    assert doc["first_failed_rank"] == 1
    r0, r1 = doc["ranks"]
    assert r1["status"] == "crashed" and r1["signal"] == "SIGSEGV" and r1["cause"] == "segfault"
    assert r0["status"] in ("failed", "killed")
    assert doc["message"].startswith("rank 1 died of SIGSEGV")
    assert doc["diagnosis"]["category"] == "nccl_distributed" and doc["fixes"]
    assert exit_code(doc) == 1
    assert _leftovers(doc) == []


@pytest.mark.slow
def test_a_hung_rank_times_the_collective_out() -> None:
    timeout = 25.0
    t0 = time.monotonic()
    doc = run_distributed(2, "cpu", timeout, 5, env=_env(COMPAT_SMOKE_TEST_HANG_RANK="1"))
    assert time.monotonic() - t0 < timeout + 10
    assert doc["status"] == "timed_out" and doc["cause"] == "nccl_distributed", doc["message"]
    hung = doc["ranks"][1]
    assert hung["status"] in ("killed", "timed_out") and hung["stage"] == "init"
    assert "rank(s) 1" in doc["message"] or "hung" in doc["message"]
    assert _leftovers(doc) == []


@pytest.mark.slow
def test_the_harness_deadline_takes_launcher_and_ranks_down(tmp_path: Path) -> None:
    # A launcher whose own deadline is far away: only the harness's timeout can end the run.
    def argv(result: Path, workdir: Path, t0: float) -> list[str]:
        return [
            sys.executable,
            "-X",
            "faulthandler",
            str(CHILD),
            "--out",
            str(result),
            "--workdir",
            str(workdir),
            "--device",
            "cpu",
            "--steps",
            "5",
            "--nproc",
            "2",
            "--deadline",
            "600",
            "--pg-timeout",
            "600",
            "--grace",
            "600",
            "--t0",
            repr(t0),
        ]

    t0 = time.monotonic()
    res = run_distributed_result(
        2, "cpu", 12, 5, env=_env(COMPAT_SMOKE_TEST_HANG_RANK="1"), child_argv=argv, grace=1.0
    )
    assert time.monotonic() - t0 < 30
    assert res.verdict == "timed_out" and res.cause == "nccl_distributed"
    assert "no verdict within 12 s" in res.message
    doc = res.to_json()
    assert _leftovers(doc) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((0, "cpu", 60.0, 5), "--nproc"),
        ((65, "cpu", 60.0, 5), "--nproc"),
        ((None, "tpu", 60.0, 5), "--device"),
        ((None, "cpu", 0.0, 5), "--timeout"),
        ((None, "cpu", float("nan"), 5), "--timeout"),
        ((None, "cpu", 60.0, 1), "--steps"),
    ],
)
def test_bad_options_are_input_errors(args: tuple[Any, ...], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        validate(*args)


def test_without_torch_it_is_skipped_and_fails_the_exit_code() -> None:
    doc = run_distributed(None, "cpu", 60, 5, installed={"torch": None, "tensorflow": None})
    assert doc["status"] == "skipped" and "PyTorch" in doc["message"] and exit_code(doc) == 1


def test_budgets_leave_the_launcher_time_to_report() -> None:
    for t in (5.0, 25.0, 300.0, 3600.0):
        b = budgets(t)
        assert b["pg_timeout"] + b["grace"] <= max(b["deadline"], 7.5) and b["deadline"] < t


# ------------------------------------------------------------------ classification of recorded failure texts


def _run(result: Optional[dict[str, Any]], rc: int = 1, *, timed_out: bool = False) -> harness.ChildRun:
    return harness.ChildRun(
        argv=("python",),
        pid=1,
        returncode=rc,
        timed_out=timed_out,
        start_error=None,
        stdout="",
        stderr="",
        result=result,
        result_problem=None if result else "no result",
        seconds=1.0,
        t_spawn=0.0,
        t_exit=0.0,
        stage=None,
    )


def _rank(
    rank: int, rc: int, text: str = "", *, killed: Optional[str] = None, stage: str = "train"
) -> dict[str, Any]:
    err = {"type": "RuntimeError", "text": text, "traceback": text} if text else None
    return {
        "rank": rank,
        "pid": 100 + rank,
        "exit_code": rc,
        "signal": -rc if rc < 0 else None,
        "killed": killed,
        "seconds": 3.0,
        "stage": stage,
        "output_tail": text,
        "result": {"status": "failed", "stage": stage, "error": err, "losses": [2.3], "device": "cuda"},
    }


def _launcher(ranks: list[dict[str, Any]], order: list[int]) -> dict[str, Any]:
    return {
        "role": "launcher",
        "status": "failed",
        "device": "cuda",
        "backend": "nccl",
        "world_size": len(ranks),
        "ranks": ranks,
        "failure_order": order,
        "first_failed_rank": order[0] if order else None,
        "stage": "done",
    }


def _classify(run: harness.ChildRun) -> Any:
    return classify(run, timeout=300, version="2.8.0", base={"distributed": True}, t_begin=time.monotonic())


# Lines from real logs, as quoted in matrix/signatures.yaml (nccl_distributed, gpu_oom).
NCCL_REMOTE = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
    "1691, remote process exited or there was a network error, NCCL version 2.19.3"
)
WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, "
    "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out."
)
OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 "
    "GiB of which 1.05 GiB is free."
)


def test_one_ranks_own_root_cause_wins_over_the_others_nccl_errors() -> None:
    res = _classify(_run(_launcher([_rank(0, 1, NCCL_REMOTE), _rank(1, 1, OOM)], [1, 0])))
    assert res.verdict == "failed" and res.cause == "gpu_oom"
    assert res.message.startswith("rank 1 failed")
    assert [r["cause"] for r in res.details["ranks"]] == ["nccl_distributed", "gpu_oom"]


def test_an_nccl_error_is_nccl_distributed() -> None:
    res = _classify(_run(_launcher([_rank(0, 1, NCCL_REMOTE), _rank(1, 0, stage="done")], [0])))
    assert res.cause == "nccl_distributed" and res.details["diagnosis"]["category"] == "nccl_distributed"


def test_a_watchdog_timeout_is_a_timed_out_collective() -> None:
    res = _classify(_run(_launcher([_rank(0, -6, ""), _rank(1, 1, WATCHDOG)], [1, 0])))
    assert res.details["ranks"][1]["status"] == "timed_out"
    assert res.verdict == "timed_out" and res.cause == "nccl_distributed"


def test_ranks_killed_at_the_deadline_mean_a_hang() -> None:
    res = _classify(
        _run(
            _launcher(
                [
                    _rank(0, -15, killed="deadline", stage="allreduce"),
                    _rank(1, -15, killed="deadline", stage="allreduce"),
                ],
                [],
            )
        )
    )
    assert res.verdict == "timed_out" and res.cause == "nccl_distributed" and "allreduce" in res.message


def test_no_gpu_before_any_rank_started() -> None:
    doc = {
        "role": "launcher",
        "status": "failed",
        "ranks": [],
        "stage": "done",
        "plan_problem": "no_gpu",
        "message": "no CUDA-capable device is visible to torch (torch.cuda.is_available() is False): NCCL needs GPUs",
    }
    res = _classify(_run(doc))
    assert res.verdict == "failed" and res.cause == "no_gpu_visible"


def test_garbage_and_start_errors() -> None:
    assert _classify(_run(None, rc=0)).verdict == "failed"
    crashed = _classify(_run(None, rc=-11))
    assert crashed.verdict == "crashed" and crashed.signal == "SIGSEGV"
    run = harness.ChildRun(
        ("x",), None, None, False, "FileNotFoundError: x", "", "", None, "did not start", 0.0, 0.0, 0.0, None
    )
    assert "could not start" in _classify(run).message


def test_text_lists_every_rank() -> None:
    res = _classify(_run(_launcher([_rank(0, 1, NCCL_REMOTE), _rank(1, 1, OOM)], [1, 0])))
    text = render_text(res, io.StringIO())
    assert text.startswith("compat smoke: FAILED") and "2 ranks, nccl" in text
    assert "rank 0: FAILED" in text and "rank 1: FAILED" in text and "[gpu_oom]" in text


@pytest.mark.slow
def test_asking_for_gpus_where_there_are_none() -> None:
    doc = run_distributed(None, "cuda", 120, 5, env=_env())
    assert doc["status"] == "failed" and doc["cause"] == "no_gpu_visible" and doc["ranks"] == []
    assert "NCCL needs GPUs" in doc["message"] and exit_code(doc) == 1


@pytest.mark.gpu
def test_nccl_across_the_local_gpus() -> None:
    doc = run_distributed(None, "cuda", 300, 10, env=_env())
    assert doc["status"] == "passed", (doc["message"], [r.get("output_tail") for r in doc["ranks"]])
    assert doc["backend"] == "nccl" and doc["device"] == "cuda" and doc["world_size"] >= 1
    assert [r["rank"] for r in doc["ranks"]] == list(range(doc["world_size"]))
    assert all(r["weights_in_sync"]["spread"] == 0.0 for r in doc["ranks"])
    assert _leftovers(doc) == []
