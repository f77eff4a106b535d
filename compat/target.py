"""Which Python environment to inspect: one rule for doctor, smoke, suggest, report and the MCP tools.

`find_target` picks, first match wins (`Target.rule` names the step):
1. "--python": the interpreter the user named;
2. "python -m compat": the interpreter compat was started with (`/opt/venv/bin/python -m compat doctor`
   inspects /opt/venv, as `python -m pip` installs into the interpreter it runs in);
3. "$VIRTUAL_ENV", then "$CONDA_PREFIX": the active environment's bin/python;
4. "compat's own environment": the interpreter compat runs in, unless that is an isolated tool install
   (`pipx install compat`, `uv tool install compat`), whose environment holds compat and nothing to inspect;
5. "python3 on PATH": the `python3` (then `python`) found on `PATH`;
6. compat's own interpreter, when nothing else is found.
With `note=True` the target carries one line when another candidate has a framework the choice may have missed
(compat's own environment, read from package metadata only, nothing imported).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from compat._valueclass import valueclass

HANDOFF_ENV = "_COMPAT_TARGET"
"""Set by a compat process for the compat children it starts (the MCP server's tools, which run
`python -m compat CMD`): the parent's choice, so that a child does not take itself for the user's
`python -m compat`. Not for users: --python is."""

RULES = (
    "--python",
    "python -m compat",
    "$VIRTUAL_ENV",
    "$CONDA_PREFIX",
    "compat's own environment",
    "python3 on PATH",
)
"""The rule's steps, in order (`Target.rule`)."""

# Where the tools keep their environments: `pipx install` in pipx/venvs/NAME, `pipx run` in pipx/.cache/HASH or
# .cache/pipx/HASH, `uv tool install` in uv/tools/NAME, `uvx` in the uv cache's environments-vN/ (archive-vN/ once).
_TOOL_DIRS = (("pipx", "venvs"), ("pipx", ".cache"), (".cache", "pipx"), ("uv", "tools"))
_UV_CACHE_BUCKETS = ("environments-v", "archive-v")
_TOOL_MARKERS = ("pipx_metadata.json", "uv-receipt.toml")
_FRAMEWORK_TIMEOUT = 3.0


@valueclass
class Target:
    """The interpreter whose environment a command inspects."""

    python: str
    """Absolute path of the interpreter."""
    reason: str
    """Why this one, in words: "--python", "the active virtual environment $VIRTUAL_ENV=/x", ..."""
    rule: str = ""
    """The rule's step that chose it: one of RULES ("" from an older caller)."""
    note: str = ""
    """One line when another interpreter has a framework this one may lack (find_target(note=True))."""

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
        """The report's `interpreter` key (`note` only when there is one)."""
        out = {"python": self.python, "reason": self.reason}
        if self.rule:
            out["rule"] = self.rule
        if self.note:
            out["note"] = self.note
        return out


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
    """`Interpreter: PATH (why)` for a report's text header, from its `interpreter` key; its note, if any, on
    a line of its own after it."""
    if isinstance(target_json, dict) and target_json.get("python"):
        line = f"Interpreter: {target_json['python']} ({target_json.get('reason') or 'unknown'})"
        note = target_json.get("note")
        return f"{line}\n{note}" if isinstance(note, str) and note else line
    return ""


def tool_install(prefix: str | None = None) -> str | None:
    """The tool ("pipx" or "uv tool") when the environment at `prefix` (default: compat's own, sys.prefix) is an
    isolated tool install (or a `pipx run`/`uvx` one), else None: by its place (~/.local/share/pipx/venvs/compat,
    ~/.local/share/uv/tools/compat, ~/.cache/uv/environments-v2/...) or the file the installer leaves in it."""
    root = Path(sys.prefix if prefix is None else prefix)
    parts = [p.lower() for p in root.parts]
    for i in range(len(parts) - 1):
        for a, b in _TOOL_DIRS:
            if parts[i] == a and parts[i + 1] == b:
                return "pipx" if "pipx" in (a, b) else "uv tool"
    if any(p.startswith(_UV_CACHE_BUCKETS) and p[-1:].isdigit() for p in parts[:-1]):
        return "uv tool"
    for marker in _TOOL_MARKERS:
        if (root / marker).is_file():
            return "pipx" if marker.startswith("pipx") else "uv tool"
    return None


def started_as_module() -> bool:
    """True under `python -m compat`: the __main__ module is compat's."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) == "compat.__main__"


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


def _handoff(env: Mapping[str, str]) -> Target | None:
    raw = env.get(HANDOFF_ENV, "")
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(doc, dict) or not all(
        isinstance(doc.get(k), str) for k in ("python", "reason", "rule")
    ):
        return None
    if not (os.path.isfile(doc["python"]) and os.access(doc["python"], os.X_OK)):
        return None
    return Target(doc["python"], doc["reason"], doc["rule"])


def handoff_env(target: Target) -> dict[str, str]:
    """The environment entry that makes a compat child inspect `target` (see HANDOFF_ENV)."""
    doc = {"python": target.python, "reason": target.reason, "rule": target.rule}
    return {HANDOFF_ENV: json.dumps(doc)}


def _candidates(
    env: Mapping[str, str], win: bool, which: object, prefix: str, as_module: bool
) -> list[Target]:
    """Every step of the rule after --python that has an interpreter, in order."""
    out: list[Target] = []
    if as_module:
        out.append(Target(sys.executable, "python -m compat", "python -m compat"))
    venv = env.get("VIRTUAL_ENV", "").strip()
    py = _env_python(venv, win) if venv else None
    if py:
        out.append(Target(py, f"the active virtual environment $VIRTUAL_ENV={venv}", "$VIRTUAL_ENV"))
    conda = env.get("CONDA_PREFIX", "").strip()
    py = _env_python(conda, win) if conda else None
    if py:
        out.append(Target(py, f"the active conda environment $CONDA_PREFIX={conda}", "$CONDA_PREFIX"))
    tool = tool_install(prefix)
    if tool is None:
        out.append(Target(sys.executable, "compat's own environment", "compat's own environment"))
    path = env.get("PATH")
    for name in ("python3", "python"):
        found = which(name, path=path)  # type: ignore[operator]
        if isinstance(found, str) and found:
            out.append(Target(os.path.abspath(found), f"the {name} on PATH", "python3 on PATH"))
            break
    if tool is not None:
        out.append(
            Target(sys.executable, f"compat's own interpreter (a {tool} install)", "compat's own environment")
        )
    return out


def find_target(
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    windows: bool | None = None,
    which: object = shutil.which,
    prefix: str | None = None,
    as_module: bool | None = None,
    note: bool = False,
) -> Target:
    """The interpreter to inspect (see the module docstring for the order). `prefix` (compat's own environment,
    default sys.prefix) and `as_module` (default: started_as_module()) stand in for this process in tests;
    `note=True` also looks whether another candidate has a framework (a metadata read, or one short child)."""
    env = os.environ if environ is None else environ
    win = sys.platform == "win32" if windows is None else windows
    if explicit:
        return Target(explicit, "--python", "--python")
    handed = _handoff(env)
    if handed is not None:
        return handed
    module = started_as_module() if as_module is None else as_module
    found = _candidates(env, win, which, sys.prefix if prefix is None else prefix, module)
    chosen = (
        found[0] if found else Target(sys.executable, "compat's own interpreter", "compat's own environment")
    )
    if note:
        text = _note(chosen, found[1:])
        if text:
            chosen = dataclasses.replace(chosen, note=text)
    return chosen


def _note(chosen: Target, others: list[Target]) -> str:
    """When compat's own interpreter has a framework that the inspected one lacks, or compat's own is inspected
    without a framework and the next candidate has one: that line, else ""."""
    if chosen.is_own:
        if own_frameworks():
            return ""
        for other in others:
            if other.is_own:
                continue
            has = frameworks_in(other.python)
            if has:
                return f"{_whose(other)} {other.python} has {_listed(has)}; pass --python {other.python} to inspect it"
            return ""
        return ""
    has = own_frameworks()
    if has:  # only those the inspected one lacks (one short child, and only when compat's own has one)
        there = frameworks_in(chosen.python)
        has = {fw: v for fw, v in has.items() if fw not in there}
    if not has:
        return ""
    return f"compat's own interpreter {sys.executable} has {_listed(has)}; pass --python {sys.executable} to inspect it"


def _whose(t: Target) -> str:
    return {
        "$VIRTUAL_ENV": "the active virtual environment's interpreter",
        "$CONDA_PREFIX": "the active conda environment's interpreter",
        "python3 on PATH": "the python3 on PATH",
    }.get(t.rule, "the interpreter")


def _listed(found: Mapping[str, str]) -> str:
    return ", ".join(f"{fw} {v}" for fw, v in found.items())


def own_frameworks() -> dict[str, str]:
    """framework -> version installed in compat's own environment, from the names of the `*.dist-info` folders on
    sys.path (nothing imported, not even importlib.metadata: a millisecond, not tens)."""
    return _dist_info_frameworks(p for p in sys.path if p and os.path.isdir(p))


def _dist_info_frameworks(dirs: Iterable[str | Path]) -> dict[str, str]:
    """framework -> version from `NAME-VERSION.dist-info` folder names, the first per framework in `dirs` order
    (the order imports see them in)."""
    from compat.distributions import DISTRIBUTIONS

    found: dict[str, str] = {}
    for d in dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if not n.endswith(".dist-info"):
                continue
            name, _, version = n[: -len(".dist-info")].rpartition("-")
            fw = DISTRIBUTIONS.get(name.lower().replace("_", "-"))
            if fw is not None and fw not in found:
                found[fw] = version
    return found


_FRAMEWORKS_CODE = """
import json, sys
try:
    from importlib import metadata
except ImportError:
    sys.exit(0)
out = {}
for dist, fw in %r:
    if fw in out:
        continue
    try:
        out[fw] = metadata.version(dist)
    except Exception:
        pass
sys.stdout.write(json.dumps(out))
"""


def _venv_frameworks(python: str) -> dict[str, str] | None:
    """framework -> version in the virtual environment `python` belongs to, from the names of its site-packages'
    dist-info folders (nothing run); None when it is not a venv that sees only its own site-packages."""
    exe = Path(python)
    root = next((r for r in (exe.parent.parent, exe.parent) if (r / "pyvenv.cfg").is_file()), None)
    if root is None:
        return None
    try:
        cfg = (root / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return None
    if "include-system-site-packages = true" in cfg:
        return None
    return _dist_info_frameworks([*root.glob("lib/python*/site-packages"), root / "Lib" / "site-packages"])


def frameworks_in(python: str) -> dict[str, str]:
    """framework -> version installed for another interpreter, from its package metadata: read from its
    virtual environment's folders, else asked of one short child that imports no framework; {} when unknown."""
    from compat._proc import run
    from compat.distributions import DISTRIBUTIONS

    found = _venv_frameworks(python)
    if found is not None:
        return found
    res = run(
        [python, "-c", _FRAMEWORKS_CODE % (tuple(DISTRIBUTIONS.items()),)], _FRAMEWORK_TIMEOUT, limit=65536
    )
    try:
        doc = json.loads(res.stdout) if res.ok else None
    except ValueError:
        return {}
    if not isinstance(doc, dict):
        return {}
    return {str(k): str(v) for k, v in doc.items() if isinstance(v, str)}
