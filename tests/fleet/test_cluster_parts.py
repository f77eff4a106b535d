"""The Ray side of `compat fleet` without a cluster: task options, node names, answers, the task body, no Ray."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compat.fleet import _task
from compat.fleet.cluster import alive_nodes, answer_to_input, doctor_timeout, node_names, task_options
from tests.fleet.helpers import DATA

ROOT = Path(__file__).resolve().parents[2]


class Strategy:
    """Stands in for ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy (same constructor)."""

    def __init__(self, node_id: str, soft: bool) -> None:
        self.node_id = node_id
        self.soft = soft


def _node(nid: str, host: str = "gpu-1", gpus: float = 0, alive: bool = True) -> dict[str, Any]:
    res: dict[str, float] = {"CPU": 8.0}
    if gpus:
        res["GPU"] = gpus
    return {
        "NodeID": nid,
        "Alive": alive,
        "NodeManagerHostname": host,
        "NodeManagerAddress": "10.0.0.1",
        "Resources": res,
    }


def test_one_entry_per_alive_node() -> None:
    nodes = [
        _node("b" * 56, "h2"),
        _node("a" * 56, "h1"),
        _node("c" * 56, "h3", alive=False),
        _node("a" * 56, "h1"),
    ]
    assert [n["NodeID"][0] for n in alive_nodes(nodes)] == ["a", "b"]


def test_names_are_hosts_unless_hosts_repeat() -> None:
    nodes = [_node("a1" * 28, "vm"), _node("b2" * 28, "vm"), _node("c3" * 28, "gpu-7")]
    assert node_names(nodes) == {"a1" * 28: "vm:a1a1a1a1", "b2" * 28: "vm:b2b2b2b2", "c3" * 28: "gpu-7"}


@pytest.mark.parametrize(("smoke", "gpus", "want"), [(False, 8, 0), (True, 8, 8), (True, 0, 0)])
def test_task_is_pinned_hard_and_asks_for_the_gpus_only_for_the_smoke(
    smoke: bool, gpus: int, want: int
) -> None:
    opts = task_options(_node("d" * 56, gpus=gpus), smoke, Strategy)
    s = opts["scheduling_strategy"]
    assert (s.node_id, s.soft) == ("d" * 56, False)
    assert opts["num_gpus"] == want and opts["num_cpus"] == 0 and opts["max_retries"] == 0


def test_the_doctor_gets_less_time_than_the_driver_waits() -> None:
    for t in (2.0, 20.0, 45.0, 180.0, 3600.0):
        assert 1.0 <= doctor_timeout(t) < t


def _answer(**kw: Any) -> dict[str, Any]:
    base = {
        "node_id": "e" * 56,
        "python": "/usr/bin/python3",
        "exit_code": 0,
        "timed_out": False,
        "stdout": "",
        "stderr": "",
        "seconds": 1.5,
        "start_error": None,
    }
    return {**base, **kw}


def test_answers_become_node_entries() -> None:
    node = _node("e" * 56)
    report = (DATA / "cluster-a" / "gpu-a01.json").read_text()
    ok = answer_to_input("gpu-1", node, _answer(stdout=report, exit_code=1), 60)
    assert ok.status == "reported" and ok.doc is not None and ok.doc["host"] == "gpu-a01"
    assert ok.meta["node_id"] == "e" * 56 and ok.meta["doctor_exit_code"] == 1
    cases = {
        "timed_out": (_answer(timed_out=True, exit_code=-9), "did not finish within"),
        "no compat": (
            _answer(exit_code=1, stderr="/usr/bin/python3: No module named compat\n"),
            "compat is not installed",
        ),
        "exit 2": (
            _answer(exit_code=2, stderr="compat: error: invalid matrix (1 problem): pytorch.yaml: missing\n"),
            "exited 2: compat: error: invalid matrix",
        ),
        "garbage": (_answer(stdout="Segmentation fault\n", exit_code=-11), "without a JSON report"),
        "wrong node": (_answer(node_id="f" * 56), "instead of"),
        "no start": (_answer(start_error="FileNotFoundError: python3"), "could not start the doctor"),
    }
    for name, (ans, why) in cases.items():
        got = answer_to_input("gpu-1", node, ans, 60)
        assert got.status == "failed", name
        assert why in (got.reason or ""), (name, got.reason)
    assert answer_to_input("gpu-1", node, None, 60).status == "failed"


@pytest.mark.slow  # bounded-time/hang case: ~2-3 s of waiting; .ci/run's slow step runs it
def test_run_doctor_kills_a_hung_doctor_and_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (
        f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        f" open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    t0 = time.monotonic()
    res = _task.run_doctor([sys.executable, "-c", code], 1.5, dict(os.environ))
    assert res["timed_out"] is True and time.monotonic() - t0 < 10
    grandchild = int(pidfile.read_text())
    time.sleep(0.2)
    stat = Path(f"/proc/{grandchild}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_run_doctor_reports_a_missing_interpreter() -> None:
    res = _task.run_doctor(["/nonexistent/python", "-m", "compat"], 5, dict(os.environ))
    assert res["start_error"] and res["exit_code"] is None


def test_an_empty_cuda_visible_devices_from_ray_is_dropped_only_without_gpus() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "", "X": "1"}
    assert _task.doctor_env(env, []) == {"X": "1"}
    assert _task.doctor_env(env, ["0"]) == env
    assert _task.doctor_env(env, None) == env
    assert _task.doctor_env({"CUDA_VISIBLE_DEVICES": "1"}, []) == {"CUDA_VISIBLE_DEVICES": "1"}


def test_doctor_argv() -> None:
    assert _task.doctor_argv("py", smoke=False) == ["py", "-m", "compat", "doctor", "--json", "--no-smoke"]
    assert _task.doctor_argv("py", smoke=True) == ["py", "-m", "compat", "doctor", "--json"]


@pytest.mark.slow  # the real doctor imports every installed framework (seconds of CPU): .ci/run's slow step
def test_the_task_body_runs_the_real_doctor_with_the_nodes_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # outside a Ray worker: no runtime context
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("COMPAT_OVERRIDE_DRIVER", "470.82.01")
    monkeypatch.chdir(ROOT)
    ans = _task.doctor_on_node("n" * 56, False, 120)
    assert "ray_error" in ans and ans["node_id"] is None
    node = answer_to_input("here", _node("n" * 56), ans, 150)
    assert node.status == "reported", node.reason
    assert node.doc is not None and node.doc["facts"]["driver"]["raw"] == "470.82.01"
    assert node.doc["facts"]["driver"]["source"] == "COMPAT_OVERRIDE_DRIVER"
    assert json.loads(ans["stdout"])["host"] == ans["hostname"]


def test_without_ray_fleet_says_how_to_install_it(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "ray", None)
    res = run("fleet", "--json", "--timeout", "5")
    assert res.code == 2 and res.out == ""
    assert res.err.count("\n") == 1 and "pip install 'compat[ray]'" in res.err


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf"])
def test_bad_timeout_is_a_usage_error(run, bad: str) -> None:  # type: ignore[no-untyped-def]
    res = run("fleet", "--timeout", bad)
    assert res.code == 2 and "--timeout" in res.err


def test_importing_compat_and_the_fleet_command_does_not_import_ray() -> None:
    import subprocess

    code = "import sys, compat, compat.cli, compat.fleet, compat.fleet.cluster, compat.fleet.merge; print('ray' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        check=True,
    ).stdout
    assert out.strip() == "False"


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_an_address_that_is_not_a_ray_cluster_fails_within_the_timeout() -> None:
    import socket
    import subprocess

    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is an optional extra")
    with (
        socket.socket() as srv
    ):  # accepts TCP connections (the kernel's backlog) but never speaks Ray's protocol
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "RAY_"))}
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "compat",
                "fleet",
                "--address",
                f"127.0.0.1:{port}",
                "--timeout",
                "4",
                "--json",
            ],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            timeout=120,
        )
    assert time.monotonic() - t0 < 60
    assert proc.returncode == 2 and proc.stdout == ""
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("compat: ")]
    assert lines == [
        f"compat: error: cannot connect to the Ray cluster at '127.0.0.1:{port}': no answer within 4 s"
    ]
