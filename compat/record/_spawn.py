"""The one place the recorder starts a process: through compat._proc (own session, dies with compat, killed with
compat's other children on TERM/HUP/INT)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


def spawn_reader(argv: Sequence[str], *, stderr_path: str | None = None) -> subprocess.Popen[bytes]:
    """Start a long-lived helper child (argv list, no shell, stdin a pipe it watches for EOF, stdout a pipe of
    JSON lines, own session so a terminal Ctrl-C reaches only the run). The caller bounds its reads and ends it
    with `stop`."""
    err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL  # noqa: SIM115 - handed to the child
    try:
        from compat import _proc

        return _proc.spawn(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
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
    from compat import _proc

    _proc.forget(proc)
