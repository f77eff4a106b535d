"""The one place the recorder starts a process (to switch to compat._proc with one edit once it lands)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


def spawn_reader(argv: Sequence[str], *, stderr_path: str | None = None) -> subprocess.Popen[bytes]:
    """Start a long-lived helper child (argv list, no shell, stdin a pipe it watches for EOF, stdout a pipe of
    JSON lines, own session so a terminal Ctrl-C reaches only the run). The caller bounds its reads and ends it
    with `stop`."""
    err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        if not isinstance(err, int):
            err.close()


def stop(proc: subprocess.Popen[bytes], timeout: float = 2.0) -> None:
    """End a helper child: close its stdin (it exits on EOF), then kill it if it has not gone in `timeout`."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # pragma: no cover - an unkillable child (D state)
            pass
