"""Runs compat as an operator's bad day would, and checks the contract after each case.

Every case runs `python -m compat ...` (or a guard script) as a separate process with:
- an environment tag (COMPAT_CHAOS_TAG=<uuid>) that every process it starts inherits: what is still alive
  afterwards is found by that tag in /proc/*/environ, never by a process name;
- TMPDIR pointing at a fresh folder that must be empty afterwards (no /tmp/compat-* left behind);
- a wall-time cap (the case fails past it) and a peak-memory cap (ru_maxrss of compat's process, wait4).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Optional, Union

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

WALL_CAP_S = 45.0
"""No case may take longer (the doctor's worst case with --timeout 1 and --python pointing at a bare Python)."""
MEMORY_CAP_MIB = 1024
"""Peak resident memory of the largest process in compat's tree (wait4's ru_maxrss covers reaped descendants:
a framework child that imports torch takes ~600 MiB)."""
INPUT_MEMORY_CAP_MIB = 200
"""Peak for cases that only read hostile input (no framework child): an endless file must not grow compat."""
EXIT_CODES = (0, 1, 2, 3)


@dataclass
class Run:
    code: int
    out: bytes
    err: bytes
    seconds: float
    peak_mib: float
    leftovers: list[int] = field(default_factory=list)
    tmp_left: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", errors="replace")

    @property
    def err_lines(self) -> list[str]:
        return [x for x in self.err.decode("utf-8", errors="replace").splitlines() if x.strip()]


def tagged(tag: str) -> list[int]:
    """PIDs of live processes whose environment carries COMPAT_CHAOS_TAG=tag (zombies excluded)."""
    needle = f"COMPAT_CHAOS_TAG={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split(b" ", 1)[0]
        if needle in env.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def kill_tagged(tag: str) -> None:
    for pid in tagged(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def compat_env(tag: str, tmp: str, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("COMPAT_", "PYTEST_", "COV_")) and k not in ("LD_LIBRARY_PATH",)
    }
    env.update(
        {
            # CHAOS_COMPAT_ROOT runs the suite against another checkout (e.g. main, to see each case fail there).
            "PYTHONPATH": os.environ.get("CHAOS_COMPAT_ROOT") or str(ROOT),
            "COMPAT_CHAOS_TAG": tag,
            "TMPDIR": tmp,
            "NO_COLOR": "1",
            "COMPAT_CACHE_DIR": os.path.join(tmp, "..", "cache-" + tag),
        }
    )
    env.update(extra or {})
    return env


Stdin = Union[int, IO[bytes], None]


def run(
    argv: Sequence[str],
    *,
    env: Optional[Mapping[str, str]] = None,
    stdin: Stdin = subprocess.DEVNULL,
    input: Optional[bytes] = None,
    stdout: Optional[Union[int, IO[bytes]]] = None,
    stderr: Optional[Union[int, IO[bytes]]] = None,
    cap_s: float = WALL_CAP_S,
    signal_after: Optional[tuple[float, int]] = None,
    python: bool = True,
) -> Run:
    """Run `python -m compat argv` (or argv itself with python=False) under the chaos contract."""
    tag = uuid.uuid4().hex
    base = tempfile.mkdtemp(prefix="chaos-")
    tmp = os.path.join(base, "tmp")
    os.mkdir(tmp)
    full_env = compat_env(tag, tmp, env)
    if "COMPAT_CACHE_DIR" not in (env or {}):  # a case may prepare the cache (planted files, old records)
        full_env["COMPAT_CACHE_DIR"] = os.path.join(base, "cache")
    cmd = [sys.executable, "-m", "compat", *argv] if python else list(argv)
    out_f = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after wait4
    err_f = tempfile.TemporaryFile()  # noqa: SIM115 - closed below, after wait4
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE if input is not None else stdin,
        stdout=out_f if stdout is None else stdout,
        stderr=err_f if stderr is None else stderr,
        env=full_env,
        cwd=base,
    )
    if input is not None:
        assert proc.stdin is not None

        def feed() -> None:
            try:
                proc.stdin.write(input)  # type: ignore[union-attr]
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass

        threading.Thread(target=feed, daemon=True).start()
    timer = threading.Timer(cap_s, lambda: kill_tagged(tag))
    timer.start()
    if signal_after is not None:
        delay, sig = signal_after
        threading.Timer(delay, lambda: _signal(proc.pid, sig)).start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    # A child SIGKILLed by PR_SET_PDEATHSIG, or killed by compat just before it exited, needs a moment to go.
    deadline = time.monotonic() + 3.0
    left = tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = tagged(tag)
    kill_tagged(tag)
    tmp_left = sorted(os.listdir(tmp))
    out_f.seek(0)
    err_f.seek(0)
    r = Run(
        proc.returncode,
        out_f.read(),
        err_f.read(),
        seconds,
        usage.ru_maxrss / 1024.0,
        left,
        tmp_left,
    )
    out_f.close()
    err_f.close()
    shutil.rmtree(base, ignore_errors=True)
    return r


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def assert_contract(
    r: Run, codes: Sequence[int] = EXIT_CODES, cap_s: float = WALL_CAP_S, mem_mib: float = MEMORY_CAP_MIB
) -> None:
    """Exit code within the contract, one stderr line on exit 2, time and memory caps, nothing left behind."""
    detail = f"exit {r.code}, stderr {r.err[-600:]!r}"
    assert r.code in codes, detail
    if r.code == 2:
        assert len(r.err_lines) <= 1, detail
    assert b"Traceback" not in r.err, detail
    assert r.seconds < cap_s, f"{r.seconds:.1f} s >= {cap_s} s; {detail}"
    assert r.peak_mib < mem_mib, f"peak {r.peak_mib:.0f} MiB; {detail}"
    assert not r.leftovers, f"processes left behind: {r.leftovers}; {detail}"
    assert not r.tmp_left, f"temporary files left behind: {r.tmp_left}; {detail}"


# ------------------------------------------------------------------ fake libnvidia-ml.so.1 builds

VARIANTS = ("segv", "abort", "hang", "garbage")


def build_fake_nvml(variant: str, dest: Path) -> Path:
    """Compile tests/chaos/fake_nvml.c as libnvidia-ml.so.1 for one failure; returns the folder holding it."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:  # pragma: no cover - the CI image has a compiler
        raise RuntimeError("no C compiler (cc) to build the fake NVML library")
    out = dest / variant
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-O0",
            f"-DFAKE_{variant.upper()}",
            "-o",
            str(out / "libnvidia-ml.so.1"),
            str(HERE / "fake_nvml.c"),
        ],
        check=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return out
