"""Which Python environment to inspect: the user's active one, not compat's own.

Installed with `pipx install compat` or `uv tool install compat`, compat runs from an isolated virtual
environment that has no framework in it. `doctor`, `smoke` and `suggest` therefore inspect, unless `--python`
names an interpreter:
1. the active virtual environment (`$VIRTUAL_ENV`),
2. else the active conda environment (`$CONDA_PREFIX`),
3. else the `python3` (then `python`) found on `PATH`,
4. else compat's own interpreter.
The report's header names the interpreter and why it was chosen.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from compat._valueclass import valueclass


@valueclass
class Target:
    """The interpreter whose environment a command inspects."""

    python: str
    """Absolute path of the interpreter."""
    reason: str
    """Why this one: "--python", "$VIRTUAL_ENV", "$CONDA_PREFIX", "PATH", "compat's own interpreter"."""

    @property
    def is_own(self) -> bool:
        return _same(self.python, sys.executable)

    @property
    def argument(self) -> str | None:
        """What to pass as `python=` to the probes and the smoke job: None for compat's own interpreter (probed
        in-process, which is faster), else the interpreter's path."""
        return None if self.is_own else self.python

    def describe(self) -> str:
        return f"{self.python} ({self.reason})"

    def to_json(self) -> dict[str, str]:
        """The report's `interpreter` key."""
        return {"python": self.python, "reason": self.reason}


def _same(a: str, b: str) -> bool:
    """The same interpreter *and* the same environment. Not samefile alone: a virtual environment's python is a
    link to the base interpreter (pipx's venv and the user's venv often link to the same /usr/bin/python3.12),
    and it is the folder it is started from that selects the environment's site-packages."""
    da, db = os.path.dirname(os.path.abspath(a)), os.path.dirname(os.path.abspath(b))
    if os.path.normcase(da) != os.path.normcase(db):
        try:
            if not os.path.samefile(da, db):
                return False
        except OSError:
            return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def header_line(target_json: object) -> str:
    """`Interpreter: PATH (why)` for a report's text header, from its `interpreter` key."""
    if isinstance(target_json, dict) and target_json.get("python"):
        return f"Interpreter: {target_json['python']} ({target_json.get('reason') or 'unknown'})"
    return ""


def _env_python(prefix: str, windows: bool) -> str | None:
    root = Path(prefix)
    candidates = (
        [root / "Scripts" / "python.exe", root / "python.exe"]
        if windows
        else [root / "bin" / "python", root / "bin" / "python3"]
    )
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def find_target(
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    windows: bool | None = None,
    which: object = shutil.which,
) -> Target:
    """The interpreter to inspect (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    win = sys.platform == "win32" if windows is None else windows
    if explicit:
        return Target(explicit, "--python")
    venv = env.get("VIRTUAL_ENV", "").strip()
    if venv:
        py = _env_python(venv, win)
        if py:
            return Target(py, f"the active virtual environment $VIRTUAL_ENV={venv}")
    conda = env.get("CONDA_PREFIX", "").strip()
    if conda:
        py = _env_python(conda, win)
        if py:
            return Target(py, f"the active conda environment $CONDA_PREFIX={conda}")
    path = env.get("PATH")
    for name in ("python3", "python"):
        found = which(name, path=path)  # type: ignore[operator]
        if isinstance(found, str) and found:
            return Target(os.path.abspath(found), f"the {name} on PATH")
    return Target(sys.executable, "compat's own interpreter")
