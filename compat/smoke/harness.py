"""Run one child process in its own session, with a deadline, and always leave nothing of it behind.

The child's stdout and stderr go to temporary files, not pipes: a grandchild that inherits a pipe and outlives
the child would keep it open and make a reader wait for the deadline. The JSON verdict comes through a file
named on the child's argv, so junk on stdout cannot corrupt it. On the deadline the whole process group gets
SIGTERM, then SIGKILL after a grace period; after a normal exit whatever is left of the group is killed the same
way. The leader is waited for without being reaped (waitid WNOWAIT) until the group is dealt with, so its id,
which is the group's id, cannot be reused by an unrelated process in between.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import IO, Any, Optional

from compat import _proc
from compat._valueclass import valueclass
from compat.smoke import oom

MARKER = "@@compat-smoke"
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 192 * 1024
RESULT_MAX_BYTES = 8 * 1024 * 1024
OUTPUT_MAX_BYTES = 256 * 1024 * 1024
"""A child whose stdout and stderr files pass this together is killed: one printing in a loop would fill the disk
(hundreds of MB a second) long before its deadline, and only HEAD_BYTES + TAIL_BYTES of it are ever read."""
OUTPUT_CHECK_S = 0.1


@valueclass
class ChildRun:
    """What happened to one child process."""

    argv: tuple[str, ...]
    pid: Optional[int]
    returncode: Optional[int]
    """The exit status; negative: killed by that signal; None: it never started."""
    timed_out: bool
    start_error: Optional[str]
    stdout: str
    stderr: str
    result: Optional[dict[str, Any]]
    """The JSON object the child wrote to its result file, when it is one."""
    result_problem: Optional[str]
    """Why there is no result: missing, empty, not JSON, not an object."""
    seconds: float
    t_spawn: float
    """time.time() just before the spawn (the child measures its start-up against it)."""
    t_exit: float
    """time.time() when the parent saw the child end."""
    stage: Optional[str]
    """The last progress marker the child wrote on stderr."""
    leftovers: int = 0
    """Processes of its group still alive after the child ended (killed)."""
    oom: Optional[oom.OomEvidence] = None
    """Set when the child died of SIGKILL that we did not send."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def signal(self) -> Optional[int]:
        return -self.returncode if self.returncode is not None and self.returncode < 0 else None


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _read_capped(f: IO[bytes]) -> str:
    """Head and tail of a possibly huge output file, decoded with replacement."""
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(0)
    if size <= HEAD_BYTES + TAIL_BYTES:
        data = f.read()
    else:
        head = f.read(HEAD_BYTES)
        f.seek(size - TAIL_BYTES)
        data = head + f"\n[... {size - HEAD_BYTES - TAIL_BYTES} bytes left out ...]\n".encode() + f.read()
    return data.decode("utf-8", errors="replace")


def read_result(path: Path) -> tuple[Optional[dict[str, Any]], Optional[str]]:
    """(the result object, None) or (None, why not)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None, "the child wrote no result file"
    if size == 0:
        return None, "the child's result file is empty"
    if size > RESULT_MAX_BYTES:
        return None, f"the child's result file is {size} bytes, too large to be a result"
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
        doc = json.loads(text)
    except (OSError, ValueError) as exc:
        return None, f"the child's result file is not JSON ({exc})"
    except RecursionError:
        return None, "the child's result file is not JSON (nested too deeply)"
    if not isinstance(doc, dict):
        return None, f"the child's result file holds a JSON {type(doc).__name__}, not an object"
    return doc, None


def last_stage(stderr: str) -> Optional[str]:
    stage = None
    for line in stderr.splitlines():
        if line.startswith(MARKER + " stage "):
            parts = line.split()
            if len(parts) >= 3:
                stage = parts[2]
    return stage


def strip_markers(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(MARKER))


def group_members(pgid: int, exclude: Sequence[int] = ()) -> Optional[list[int]]:
    """Live (non-zombie) processes in group pgid, from /proc; None where /proc cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        # fields: state ppid pgrp ...
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            out.append(int(entry.name))
    return out


_killpg = _proc.killpg


class _Waiter:
    """Wait for the leader to end without reaping it (pidfd + select on Linux, else short polls)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pidfd: Optional[int] = None
        if hasattr(os, "pidfd_open"):
            try:
                self.pidfd = os.pidfd_open(proc.pid)
            except OSError:
                self.pidfd = None

    def ended(self) -> bool:
        if hasattr(os, "waitid"):
            try:
                info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return True
            return info is not None
        return self.proc.poll() is not None  # pragma: no cover - platforms without waitid (reaps)

    def wait(self, seconds: float) -> bool:
        """True when the leader ended within `seconds`."""
        deadline = time.monotonic() + max(0.0, seconds)
        pause = 0.001
        while True:
            if self.ended():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.pidfd is not None:
                select.select([self.pidfd], [], [], left)
            else:
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.05)

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def kill_group(
    pgid: int, leader_alive: Callable[[float], bool], grace: float, exclude: Sequence[int] = ()
) -> int:
    """SIGTERM the group, wait up to `grace` for it to go, SIGKILL what is left. Returns how many were alive.

    leader_alive(seconds) waits up to that long for the leader to end (True: it ended).
    """
    members = group_members(pgid, exclude)
    count = len(members) if members is not None else 0
    if members is not None and not members and leader_alive(0):
        return 0
    if not _killpg(pgid, signal.SIGTERM):
        return count
    deadline = time.monotonic() + grace
    leader_alive(grace)
    while time.monotonic() < deadline:
        rest = group_members(pgid, exclude)
        if rest is not None and not rest:
            return count
        time.sleep(0.02)
    _killpg(pgid, signal.SIGKILL)
    # SIGKILL is delivered at once but a process takes a moment to die: be sure before saying it is gone.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        rest = group_members(pgid, exclude)
        if rest is None or not rest:
            break
        time.sleep(0.01)
    return count


def _size(f: IO[bytes]) -> int:
    try:
        return os.fstat(f.fileno()).st_size
    except OSError:
        return 0


def _wait_watching_output(
    waiter: _Waiter,
    timeout: float,
    files: Sequence[IO[bytes]],
    stalled: Optional[Callable[[float], bool]] = None,
) -> tuple[bool, bool]:
    """(the leader ended, its output passed OUTPUT_MAX_BYTES), waiting at most `timeout` seconds, or less when
    `stalled(seconds since the start)` says the child is stuck (then as a timeout)."""
    start = time.monotonic()
    deadline = start + timeout
    while True:
        left = deadline - time.monotonic()
        if waiter.wait(min(OUTPUT_CHECK_S, max(0.0, left))):
            return True, False
        if sum(_size(f) for f in files) > OUTPUT_MAX_BYTES:
            return False, True
        if left <= OUTPUT_CHECK_S or (stalled is not None and stalled(time.monotonic() - start)):
            return False, False


def run_child(
    argv: Sequence[str],
    result_path: Path,
    *,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    grace: float = 3.0,
    oom_counter: Callable[[], oom.OomCount] = oom.read_oom_count,
    kernel_log: Callable[[], tuple[Optional[str], str]] = oom.read_kernel_log,
    stalled: Optional[Callable[[float], bool]] = None,
) -> ChildRun:
    """Run argv in a new session; never raises for anything the child does, never leaves a process behind.

    `stalled(seconds)`: polled while the child runs; True ends it as a timeout (the doctor's smoke job stops
    a framework import that hangs as soon as its framework probe would have)."""
    before = oom_counter()
    since = oom.uptime()
    t_spawn = time.time()
    t0 = time.monotonic()
    notes: list[str] = []
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        try:
            proc = _proc.spawn(argv, stdout=out_f, stderr=err_f, env=env, cwd=cwd)
        except OSError as exc:
            return ChildRun(
                tuple(argv),
                None,
                None,
                False,
                f"{type(exc).__name__}: {exc}",
                "",
                "",
                None,
                "the child did not start",
                time.monotonic() - t0,
                t_spawn,
                time.time(),
                None,
            )
        waiter = _Waiter(proc)
        timed_out = False
        overflow = False
        leftovers = 0
        try:
            ended, overflow = _wait_watching_output(waiter, timeout, (out_f, err_f), stalled)
            if overflow:
                kill_group(proc.pid, waiter.wait, grace)
                notes.append(
                    f"its output passed {OUTPUT_MAX_BYTES // 2**20} MiB: killed before it filled the disk"
                )
            elif not ended:
                timed_out = True
                leftovers = kill_group(proc.pid, waiter.wait, grace)
            t_exit = time.time()
            # Whatever the child left in its group (a grandchild that outlived it) goes too.
            rest = group_members(proc.pid, exclude=(proc.pid,))
            if rest is None or rest:
                n = kill_group(proc.pid, waiter.wait, min(grace, 1.0), exclude=(proc.pid,))
                if not timed_out:
                    leftovers = n
        finally:
            if proc.poll() is None:  # an exception in here (KeyboardInterrupt): take the group down anyway
                _killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            _proc.forget(proc)
            waiter.close()
        if leftovers and not timed_out:
            notes.append(f"{leftovers} process(es) it started were still running after it ended: killed")
        seconds = time.monotonic() - t0
        stdout, stderr = _read_capped(out_f), _read_capped(err_f)
    result, problem = read_result(result_path)
    rc = proc.returncode
    evidence = None
    if rc == -signal.SIGKILL and not timed_out and not overflow:
        log, source = kernel_log()
        evidence = oom.judge(
            proc.pid, before, oom_counter(), log, source, None if since is None else since - 1.0
        )
    stage = (result or {}).get("stage") if isinstance((result or {}).get("stage"), str) else None
    return ChildRun(
        tuple(argv),
        proc.pid,
        rc,
        timed_out,
        None,
        stdout,
        stderr,
        result,
        problem,
        seconds,
        t_spawn,
        t_exit,
        stage or last_stage(stderr),
        leftovers,
        evidence,
        tuple(notes),
    )
