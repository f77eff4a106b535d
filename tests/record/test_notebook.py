"""`%load_ext compat` with real Jupyter kernels (jupyter_client + ipykernel): a kernel dies, the next one says why."""

from __future__ import annotations

import os
import queue
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.record.conftest import cli_env, run_cli

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")


def _execute(kc: Any, code: str, timeout: float = 60) -> str:
    """Run `code`, return its stdout/stderr stream text (waits for the kernel to go idle)."""
    msg_id = kc.execute(code)
    out: list[str] = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)
    raise AssertionError(f"no reply to {code!r} in {timeout} s; got {''.join(out)!r}")


class Kernel:
    def __init__(self, cache: Path) -> None:
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name="python3")
        self.env = cli_env(cache)
        self.km.start_kernel(env=self.env)
        self.kc = self._client()

    def _client(self) -> Any:
        kc = self.km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=120)
        return kc

    @property
    def pid(self) -> int:
        return int(self.km.provisioner.pid)  # type: ignore[union-attr]

    def run(self, code: str) -> str:
        return _execute(self.kc, code)

    def send(self, code: str) -> None:
        self.kc.execute(code)

    def wait_dead(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self.km.is_alive():
                return
            time.sleep(0.1)
        raise AssertionError("the kernel did not die")

    def restart(self) -> None:
        self.kc.stop_channels()
        self.km.restart_kernel(now=True, env=self.env)
        self.kc = self._client()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture
def kernel(cache: Path) -> Iterator[Kernel]:
    k = Kernel(cache)
    yield k
    k.close()


def _wait_record(cache: Path, pid: int, timeout: float = 60) -> Path:
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = [p for p in (cache / "records").glob(f"notebook-*-{pid}.json")]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"the watcher wrote no record for pid {pid}: {list((cache / 'records').glob('*'))}")


def _die_and_restart(kernel: Kernel, cache: Path, kill: Any) -> tuple[int, str]:
    first = kernel.run("%load_ext compat")
    pid = kernel.pid
    assert f"compat: watching this kernel (pid {pid})" in first
    kill()
    kernel.wait_dead()
    t0 = time.monotonic()
    _wait_record(cache, pid)
    assert time.monotonic() - t0 < 15  # the watcher finishes within seconds of the kernel's death
    kernel.restart()
    return pid, kernel.run("%load_ext compat")


def test_sigkill_from_outside(kernel: Kernel, cache: Path) -> None:
    pid, out = _die_and_restart(kernel, cache, lambda: os.kill(kernel.pid, signal.SIGKILL))
    assert f"compat: the previous kernel (pid {pid}) died: " in out
    assert "killed by something else (a scheduler, a person" in out
    assert "no OOM kill in its memory cgroup" in out or "kernel log" in out
    # shown once: the kernel after that one does not repeat it
    assert "previous kernel" not in kernel.run("%load_ext compat")
    # and the shell sees the same
    last = run_cli(["explain", "--last"], cache)
    assert last.returncode == 1 and b"killed by something else" in last.stdout


def test_segfault(kernel: Kernel, cache: Path) -> None:
    pid, out = _die_and_restart(kernel, cache, lambda: kernel.send("import ctypes; ctypes.string_at(0)"))
    assert f"compat: the previous kernel (pid {pid}) died: crashed with a segmentation fault" in out
    assert "SIGSEGV" in out or "Segmentation fault" in out


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_memory_limit(kernel: Kernel, cache: Path, memcg: Path | None) -> None:
    if memcg is None:
        pytest.skip(
            "cannot create a memory cgroup here: an RLIMIT_AS limit makes a MemoryError, not a kernel death"
        )
    procs = memcg / "cgroup.procs"
    code = f"import os, time\nopen({str(procs)!r}, 'w').write(str(os.getpid()))\ntime.sleep(3.0)\nx = bytearray(400 << 20)\n"
    pid, out = _die_and_restart(kernel, cache, lambda: kernel.send(code))
    assert f"compat: the previous kernel (pid {pid}) died: killed by the OOM killer at " in out
    assert "of the 96.0 MiB cgroup limit" in out
    assert "OOM kill(s) during the run (oom_kill 0 → 1)" in out


def test_a_restart_at_once_after_a_kill_is_told_once(kernel: Kernel, cache: Path) -> None:
    # Issue 32, item 15: the next kernel loads the extension before the watcher has written the record.
    first = kernel.run("%load_ext compat")
    pid = kernel.pid
    assert f"compat: watching this kernel (pid {pid})" in first
    os.kill(pid, signal.SIGKILL)
    kernel.wait_dead()
    kernel.restart()  # no wait for the record
    out = kernel.run("%load_ext compat")
    assert out.count(f"the previous kernel (pid {pid}) died") == 1, out
    # a clean restart later: the old death is not told again
    kernel.kc.stop_channels()
    kernel.km.restart_kernel(now=False, env=kernel.env)
    kernel.kc = kernel._client()
    assert "previous kernel" not in kernel.run("%load_ext compat")


def test_death_message_lists_the_fixes() -> None:
    """The next kernel is told what to do, as `compat run`'s summary and `explain --last` tell it (issue 31)."""
    from compat.record.notebook import death_message

    fix = {
        "text": "Give the container more shared memory",
        "command": "docker run --shm-size=8g IMAGE",
        "kind": "shell",
    }
    doc = {
        "pid": 7,
        "verdict": {
            "outcome": "host_oom",
            "title": "killed",
            "findings": [{"severity": "error", "fixes": [fix]}],
        },
    }
    text = death_message(doc)
    assert "Give the container more shared memory" in text
    assert "$ docker run --shm-size=8g IMAGE" in text
    assert "Fix:" not in death_message({"pid": 7, "verdict": {"outcome": "host_oom", "title": "killed"}})
