"""Exceptions and exit codes shared by every entry point."""

from __future__ import annotations

from collections.abc import Sequence

from compat._text import bounded

EXIT_OK = 0
EXIT_INCOMPATIBLE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class CompatError(Exception):
    """Base class for errors compat reports to the user instead of a traceback."""

    exit_code = EXIT_INTERNAL

    def __init__(self, *args: object) -> None:
        # The one place a user's value echoed in an error is clipped (issue 32, item 18: a 100 KB --driver).
        if len(args) == 1 and isinstance(args[0], str):
            args = (bounded(args[0]),)
        super().__init__(*args)


class InputError(CompatError, ValueError):
    """Bad input from the user: a malformed version, snapshot, Dockerfile, log or flag (exit 2)."""

    exit_code = EXIT_USAGE


class OutputError(CompatError):
    """The report cannot be written: standard output is closed or its device is full (exit 2, one line)."""

    exit_code = EXIT_USAGE


class MatrixError(InputError):
    """A matrix directory that does not validate; carries every problem found, not only the first."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"invalid matrix ({len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}): "
            + "; ".join(self.problems)
        )


class IncompatibleEnvironment(RuntimeError):
    """Raised by compat.guard() when this environment cannot train; the message lists every problem."""

    def __init__(self, message: str, findings: Sequence[object] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class GuardError(CompatError, RuntimeError, ValueError):
    """compat.guard() could not run its check: a bad argument, COMPAT_OVERRIDE_* value or matrix directory.

    A RuntimeError, like every exception the guard raises (and a ValueError, as a bad argument always was). With
    COMPAT_GUARD=warn it is never raised: the guard warns instead.
    """

    exit_code = EXIT_USAGE


class CompatWarning(UserWarning):
    """Warned by compat.guard() for problems below its fail_on level."""
