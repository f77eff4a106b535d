"""What the command line sets up before a command runs and settles after it: signals and standard streams.

- Signals: TERM, HUP and INT kill every child's process group, remove compat's temporary directories and exit
  128+signal (compat._signals.install_signal_handlers).
- Standard streams (issue 19, item 5): a closed stdin, stdout or stderr is replaced by /dev/null, so that no file
  compat opens later lands on descriptor 0, 1 or 2 (a cache file receiving the report). Reading a closed stdin is
  an input error (exit 2); a report that cannot be written (stdout closed, or a full device) is one line on
  stderr and exit 2; a closed pipe (`compat ... | head`) ends quietly; a closed or full stderr never changes the
  exit code.
"""

from __future__ import annotations

import errno
import io
import itertools
import os
import sys
from typing import Optional

from compat._text import sanitize_output

STDIN_CLOSED = False
STDOUT_CLOSED = False
_OUT: Optional[_Guarded] = None


class _Guarded(io.RawIOBase):
    """A raw writer on one descriptor that turns a failed write into one outcome, then discards the rest."""

    def __init__(self, fd: int, name: str, quiet: bool, json_out: bool = False) -> None:
        super().__init__()
        self.json_out = json_out
        """JSON on this stream: C1 characters are data and stay exact (C0 ones are escaped by the encoder)."""
        self.fd = fd
        self.name = name
        self.quiet = quiet
        """stderr: failures are swallowed (the exit code must not change because stderr is full)."""
        self.failed: Optional[str] = None
        self.raised = False
        """The failure was raised as an OutputError (the CLI printed its one line)."""
        self.broken_pipe = False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self.fd)
        except OSError:
            return False

    def write(self, b: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        n = len(b)
        if self.failed is not None or self.broken_pipe:
            return n  # already reported: discard
        # JSON stays exact: its encoder escapes every C0 control, so it carries no terminal sequence.
        data = bytes(b) if self.json_out else sanitize_output(bytes(b))
        try:
            done = 0
            while done < len(data):
                done += os.write(self.fd, data[done:])
            return n
        except BrokenPipeError:
            self.broken_pipe = True
            if self.quiet:
                return n
            raise
        except OSError as exc:
            self.failed = (exc.strerror or str(exc)).lower()
            if self.quiet:
                return n
            from compat.errors import OutputError

            self.raised = True
            raise OutputError(f"cannot write to standard output: {self.failed}") from None


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
        return False
    except OSError as exc:
        return exc.errno == errno.EBADF


def _fill(fd: int) -> None:
    new = os.open(os.devnull, os.O_RDWR)
    if new != fd:
        os.dup2(new, fd)
        os.close(new)


def _wrap(
    fd: int, name: str, quiet: bool, like: Optional[io.TextIOBase], json_out: bool = False
) -> tuple[_Guarded, io.TextIOWrapper]:
    raw = _Guarded(fd, name, quiet, json_out)
    encoding = getattr(like, "encoding", None) or "utf-8"
    line_buffering = bool(getattr(like, "line_buffering", False))
    text = io.TextIOWrapper(
        io.BufferedWriter(raw),  # type: ignore[type-var]
        encoding=encoding,
        errors="backslashreplace",  # text that is not valid Unicode is printed escaped, never an error
        line_buffering=line_buffering,
        write_through=quiet,
    )
    return raw, text


def _wants_json(argv: list[str]) -> bool:
    return (
        "--json" in argv
        or "--format=json" in argv
        or any(a == "--format" and b == "json" for a, b in itertools.pairwise(argv))
    )


def start(argv: Optional[list[str]] = None) -> None:
    """Install the signal handlers and make the three standard streams safe to use.

    Every text write is made terminal-safe (compat._text.sanitize_output), on stdout and stderr alike.
    """
    global STDIN_CLOSED, STDOUT_CLOSED, _OUT
    from compat._signals import install_signal_handlers

    install_signal_handlers()
    closed = [fd for fd in (0, 1, 2) if _closed(fd)]
    for fd in closed:  # in order: each open() takes the lowest free descriptor
        _fill(fd)
    STDIN_CLOSED = 0 in closed or sys.stdin is None
    STDOUT_CLOSED = 1 in closed
    json_out = _wants_json(sys.argv[1:] if argv is None else argv)
    _OUT, sys.stdout = _wrap(1, "stdout", False, sys.stdout, json_out)  # type: ignore[arg-type]
    _, sys.stderr = _wrap(2, "stderr", True, sys.stderr)  # type: ignore[arg-type]
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115


def finish(code: int) -> int:
    """Flush the report; the exit code, changed to 2 when the report could not be written."""
    from compat.errors import EXIT_USAGE, OutputError

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return code
    except OutputError as exc:  # raised here, not inside the command: nobody printed it yet
        sys.stderr.write(f"compat: error: {exc}\n")
        sys.stderr.flush()
        return EXIT_USAGE
    except OSError:  # a stream that is not ours
        return code
    out = _OUT
    if out is not None and out.broken_pipe:
        return code
    if out is not None and out.failed is not None:
        if out.raised:
            return code
        sys.stderr.write(f"compat: error: cannot write to standard output: {out.failed}\n")
        sys.stderr.flush()
        return EXIT_USAGE
    if STDOUT_CLOSED and code in (0, 1):
        sys.stderr.write("compat: error: standard output is closed: the report was not printed\n")
        sys.stderr.flush()
        return EXIT_USAGE
    return code
