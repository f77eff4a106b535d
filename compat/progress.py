"""Progress for anything that takes over about a second: one spinner line on stderr, on a terminal only.

`with Progress("compat doctor: probing this machine"):` shows nothing for the first `delay` seconds (a fast run
stays silent), then `⠹ compat doctor: probing this machine (3 s)` redrawn in place, erased when the block ends.
Never on a pipe, a file, `TERM=dumb`, or with `COMPAT_NO_PROGRESS` set; never on stdout, so `--json` output and
text reports are unchanged. The standard library only (no rich import on the hot path), one daemon thread.

The line is written straight to the stderr file descriptor: compat's stream filter (compat._runtime) shows a
carriage return as text, and the spinner needs it. The message is made terminal-safe here instead.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import IO

from compat._text import sanitize

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
DELAY_S = 1.0
INTERVAL_S = 0.1


def progress_enabled(stream: IO[str] | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """On a terminal, not TERM=dumb, not COMPAT_NO_PROGRESS."""
    env = os.environ if environ is None else environ
    if env.get("COMPAT_NO_PROGRESS") or env.get("TERM") == "dumb":
        return False
    s = sys.stderr if stream is None else stream
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """A context manager for one slow step; `update(message)` renames the step (e.g. "node 3 of 8")."""

    def __init__(
        self,
        message: str,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        delay: float = DELAY_S,
        interval: float = INTERVAL_S,
    ) -> None:
        self.message = message
        self.stream = sys.stderr if stream is None else stream
        self.active = enabled and progress_enabled(self.stream)
        self.delay = delay
        self.interval = interval
        self.shown = 0
        """Characters of the line last drawn (0: nothing on screen)."""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def update(self, message: str) -> None:
        with self._lock:
            self.message = message

    def _write(self, text: str) -> None:
        try:
            fd = self.stream.fileno()
            os.write(fd, text.encode("utf-8", errors="replace"))
        except (AttributeError, ValueError, OSError):  # no descriptor (a test's StringIO) or a closed stderr
            try:
                self.stream.write(text)
                self.stream.flush()
            except (ValueError, OSError):
                pass

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        i = 0
        while not self._stop.is_set():
            with self._lock:
                msg = " ".join(sanitize(self.message).split())
                line = f"{FRAMES[i % len(FRAMES)]} {msg} ({time.monotonic() - self._t0:.0f} s)"
                pad = " " * max(0, self.shown - len(line))
                self._write("\r" + line + pad)
                self.shown = len(line)
            i += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> Progress:
        if self.active:
            self._t0 = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="compat-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(1.0)
        self._thread = None
        with self._lock:
            if self.shown:
                self._write("\r" + " " * self.shown + "\r")
                self.shown = 0


__all__ = ["Progress", "progress_enabled"]
