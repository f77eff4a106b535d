"""What `compat fleet` runs on each Ray node: `compat doctor --json` in a subprocess, bounded, nothing left behind.

Standard library only, and shipped to the workers by value (cloudpickle), so a node needs Ray and compat's
command line but never has to import this module. The doctor runs as a subprocess with the worker's own
environment, so the node reports exactly what `compat doctor` says there (COMPAT_OVERRIDE_* set in the node's
environment or the job's runtime_env apply). It runs in its own session and the whole process group is killed
on its deadline and after it ends.

Test-only: COMPAT_FLEET_TEST_HANG=1 in a node's environment makes this task hang before it starts the doctor
(the fleet tests use it to get an unreachable node). Never set it outside compat's own tests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from typing import IO, Any, Optional

from compat import _proc

HANG_ENV = "COMPAT_FLEET_TEST_HANG"
OUTPUT_MAX = 16 * 1024 * 1024
STDERR_TAIL = 4000


def doctor_argv(python: str, smoke: bool) -> list[str]:
    return [python, "-m", "compat", "doctor", "--json"] + ([] if smoke else ["--no-smoke"])


def _read(f: IO[bytes], limit: int, tail: bool = False) -> str:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - limit) if tail else 0)
    return f.read(limit).decode("utf-8", errors="replace")


def run_doctor(argv: list[str], timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """Run the doctor; {exit_code, timed_out, stdout, stderr, seconds, start_error}. Never raises."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        try:
            proc = _proc.spawn(argv, stdout=out_f, stderr=err_f, env=env)
        except OSError as exc:
            return {
                "exit_code": None,
                "timed_out": False,
                "stdout": "",
                "stderr": "",
                "seconds": 0.0,
                "start_error": f"{type(exc).__name__}: {exc}",
            }
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _proc.killpg(proc.pid)  # the doctor's own children (framework probes) go with it
            proc.wait()
            _proc.forget(proc)
        return {
            "exit_code": proc.returncode,
            "timed_out": timed_out,
            "stdout": _read(out_f, OUTPUT_MAX),
            "stderr": _read(err_f, STDERR_TAIL, tail=True),
            "seconds": round(time.monotonic() - t0, 3),
            "start_error": None,
        }


def doctor_env(environ: dict[str, str], gpu_ids: Optional[list[str]]) -> dict[str, str]:
    """The doctor's environment: the worker's own, but without an empty CUDA_VISIBLE_DEVICES that older Ray versions set
    for tasks that asked for no GPU (https://github.com/ray-project/ray/issues/54868): the doctor would report
    every GPU as hidden."""
    env = dict(environ)
    if gpu_ids is not None and not gpu_ids and env.get("CUDA_VISIBLE_DEVICES") == "":
        del env["CUDA_VISIBLE_DEVICES"]
    return env


def doctor_on_node(expected_node_id: str, smoke: bool, timeout: float) -> dict[str, Any]:
    """The Ray task body: which node this is, and what the doctor printed there."""
    out: dict[str, Any] = {
        "node_id": None,
        "hostname": socket.gethostname(),
        "ip": None,
        "pid": os.getpid(),
        "python": sys.executable,
        "expected_node_id": expected_node_id,
    }
    gpu_ids: Optional[list[str]] = None
    try:
        import ray

        ctx = ray.get_runtime_context()
        out["node_id"] = ctx.get_node_id()
        gpu_ids = [str(g) for g in (ctx.get_accelerator_ids() or {}).get("GPU", [])]
        out["gpu_ids"] = gpu_ids
        out["ip"] = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    except Exception as exc:  # informational: the doctor's answer matters, not Ray's
        out["ray_error"] = f"{type(exc).__name__}: {exc}"
    if os.environ.get(HANG_ENV) == "1":
        while True:  # test-only: an unreachable node
            time.sleep(3600)
    argv = doctor_argv(sys.executable, smoke)
    out["argv"] = argv
    out.update(run_doctor(argv, timeout, doctor_env(dict(os.environ), gpu_ids)))
    return out
