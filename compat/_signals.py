"""TERM, HUP and INT for the command line: kill every child's process group, remove compat's temporary
directories, exit 128+signal. Kept apart from compat._proc so that installing the handlers at start-up does not
import subprocess and ctypes (5 ms): a run that never started a child has nothing to clean up."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

_INSTALLED = False


def _on_signal(signum: int, frame: Any) -> None:
    proc = sys.modules.get("compat._proc")  # imported only by a run that started children or made temp dirs
    if proc is not None:
        with contextlib.suppress(Exception):
            proc.kill_all()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(128 + signum)


def install_signal_handlers() -> None:
    """TERM, HUP and INT: kill every child's group, remove temp dirs, exit 128+signal (main thread only)."""
    global _INSTALLED
    if _INSTALLED:
        return
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        sig = getattr(signal, name, None)
        if sig is None:  # pragma: no cover - Windows has no SIGHUP
            continue
        try:
            signal.signal(sig, _on_signal)
        except ValueError:  # not the main thread: the embedding program owns the signals
            return
        except OSError:
            continue
    _INSTALLED = True
