"""Run the README's command examples against the shipped matrix; check (or rewrite) the output the README shows.

Conventions in README.md:

- A ```console block is a transcript: a line `$ CMD` is a command (`compat ...`, or `VAR=V ... python -c '...'`),
  the lines after it up to the next `$ ` line are its output; `$ echo $?` and the line after it give the
  previous command's exit code (otherwise it must exit 0).
- `<!-- output-of exit=N: CMD -->` on the line before a fenced block: the block is CMD's output, exit code N.
- In a ```bash / ```sh block every line that starts with `compat ` is run (its `# comment` dropped, globs
  expanded); `<!-- exits: N N ... -->` before the block gives their exit codes in order (default: all 0);
  `<!-- not-run: REASON -->` before the block skips it (it needs a GPU, a cluster, this very machine).

Commands run in a scratch directory holding the files of tests/data/readme/ (and `examples/`), with no colour,
an empty cache and no COMPAT_* overrides. A Python traceback is shown from its last line (the exception).

    python tools/readme_examples.py --check    # exit 1 listing every drift or wrong exit code
    python tools/readme_examples.py --write    # rewrite the shown output from the program
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIXTURES = ROOT / "tests" / "data" / "readme"
TIMEOUT = 180

_FENCE = re.compile(r"^(`{3,})(\w*)\s*$")
_OUTPUT_OF = re.compile(r"^<!--\s*output-of(?:\s+exit=(\d+))?:\s*(.+?)\s*-->\s*$")
_EXITS = re.compile(r"^<!--\s*exits:\s*([\d\s]+?)\s*-->\s*$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->\s*$")
_SHELL_OPS = {"|", ">", ">>", "<", "&", "&&", "||", ";", "2>&", ">&"}


@dataclass
class Example:
    """One command the README shows, where its output is (if shown) and the exit code it documents."""

    command: str
    exit_code: int
    line: int
    """1-based line of the command (or of the output-of comment) in the README."""
    output: list[str] | None = None
    """The shown output lines, or None when the README shows none."""
    span: tuple[int, int] | None = None
    """0-based [start, end) of the output lines in the README, for --write."""
    exit_span: int | None = None
    """0-based line holding the shown `echo $?` code, for --write."""


@dataclass
class Parsed:
    examples: list[Example] = field(default_factory=list)
    not_run: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, reason, command) of each command in a not-run block."""


def _blocks(lines: list[str]) -> Iterator[tuple[int, int, str, int, str]]:
    """(start, end, lang, fence length, comment before) of each fenced block: lines[start+1:end] is its body."""
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != ticks:
            j += 1
        before = lines[i - 1] if i > 0 else ""
        yield i, j, lang, len(ticks), before
        i = j + 1


def parse(text: str) -> Parsed:
    lines = text.split("\n")
    out = Parsed()
    for start, end, lang, _, before in _blocks(lines):
        body = lines[start + 1 : end]
        m = _OUTPUT_OF.match(before)
        if m:
            out.examples.append(Example(m.group(2), int(m.group(1) or 0), start, body, (start + 1, end)))
            continue
        if lang == "console":
            out.examples += _console(body, start + 1)
        elif lang in ("bash", "sh"):
            cmds = [
                (start + 2 + k, line.strip())
                for k, line in enumerate(body)
                if line.strip().startswith("compat ")
            ]
            nr = _NOT_RUN.match(before)
            if nr:
                out.not_run += [(n, nr.group(1), c) for n, c in cmds]
                continue
            ex = _EXITS.match(before)
            codes = [int(c) for c in ex.group(1).split()] if ex else [0] * len(cmds)
            if len(codes) != len(cmds):
                raise SystemExit(
                    f"README.md:{start}: <!-- exits: --> gives {len(codes)} codes for {len(cmds)} commands"
                )
            out.examples += [Example(c, code, n) for (n, c), code in zip(cmds, codes, strict=True)]
    return out


def _console(body: list[str], first: int) -> list[Example]:
    out: list[Example] = []
    k = 0
    while k < len(body):
        line = body[k]
        if not line.startswith("$ "):
            k += 1
            continue
        cmd = line[2:].strip()
        if cmd == "echo $?" and out and k + 1 < len(body):
            out[-1].exit_code = int(body[k + 1].strip())
            out[-1].exit_span = first + k + 1
            k += 2
            continue
        j = k + 1
        while j < len(body) and not body[j].startswith("$ "):
            j += 1
        out.append(Example(cmd, 0, first + k + 1, body[k + 1 : j], (first + k + 1, first + j)))
        k = j
    return out


def _argv(command: str, cwd: Path) -> tuple[list[str], dict[str, str]]:
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    if any(tok in _SHELL_OPS for tok in lex):
        raise ValueError(f"not a plain command (shell operators are not run): {command}")
    words = shlex.split(command, comments=True)
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    if not words:
        raise ValueError(f"no command in {command!r}")
    if words[0] == "compat":
        argv = [sys.executable, "-m", "compat", *words[1:]]
    elif words[0] in ("python", "python3"):
        argv = [sys.executable, *words[1:]]
    else:
        raise ValueError(f"only compat and python commands are run: {command}")
    expanded: list[str] = []
    for w in argv:
        hits = sorted(glob.glob(w, root_dir=cwd)) if any(c in w for c in "*?[") and w != argv[0] else []
        expanded += hits or [w]
    return expanded, env


def _environment(scratch: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "VIRTUAL_ENV", "CONDA_"))}
    env.update(
        PYTHONPATH=str(ROOT),
        NO_COLOR="1",
        TERM="dumb",
        COLUMNS="100",
        HOME=str(scratch / "home"),
        COMPAT_CACHE_DIR=str(scratch / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("FORCE_COLOR", None)
    env.update(extra)
    return env


def _shown(stdout: str, stderr: str) -> list[str]:
    text = stdout + stderr
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if "Traceback (most recent call last):" in lines:
        at = lines.index("Traceback (most recent call last):")
        rest = lines[at + 1 :]
        k = next((i for i, ln in enumerate(rest) if ln and not ln.startswith(" ")), len(rest))
        lines = lines[:at] + rest[k:]
    return [ln.rstrip() for ln in lines]


@dataclass
class Outcome:
    example: Example
    code: int
    lines: list[str]
    error: str = ""


def run(ex: Example, scratch: Path) -> Outcome:
    try:
        argv, extra = _argv(ex.command, scratch)
    except ValueError as exc:
        return Outcome(ex, -1, [], str(exc))
    try:
        res = subprocess.run(
            argv,
            cwd=scratch,
            env=_environment(scratch, extra),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(ex, -1, [], f"timed out after {TIMEOUT} s")
    return Outcome(ex, res.returncode, _shown(res.stdout, res.stderr))


def scratch_dir(base: Path) -> Path:
    """A directory with the README's example files (tests/data/readme/) and the repository's examples/."""
    shutil.copytree(FIXTURES, base, dirs_exist_ok=True)
    shutil.copytree(ROOT / "examples", base / "examples", dirs_exist_ok=True)
    (base / "home").mkdir(exist_ok=True)
    return base


def run_all(parsed: Parsed, jobs: int = 4) -> list[Outcome]:
    with tempfile.TemporaryDirectory(prefix="compat-readme-") as tmp:
        scratch = scratch_dir(Path(tmp))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda ex: run(ex, scratch), parsed.examples))


def problems(outcomes: list[Outcome]) -> list[str]:
    out = []
    for o in outcomes:
        where = f"README.md:{o.example.line}: {o.example.command}"
        if o.error:
            out.append(f"{where}: {o.error}")
            continue
        if o.code != o.example.exit_code:
            tail = " | ".join(o.lines[-3:])
            out.append(f"{where}: exit {o.code}, the README says {o.example.exit_code} ({tail})")
        if o.example.output is not None and [ln.rstrip() for ln in o.example.output] != o.lines:
            out.append(
                f"{where}: the shown output differs from the program's (tools/readme_examples.py --write)"
            )
    return out


def write(text: str, outcomes: list[Outcome]) -> str:
    lines = text.split("\n")
    edits: list[tuple[int, int, list[str]]] = []
    for o in outcomes:
        if o.error:
            continue
        if o.example.span is not None:
            edits.append((*o.example.span, o.lines))
        if o.example.exit_span is not None:
            edits.append((o.example.exit_span, o.example.exit_span + 1, [str(o.code)]))
    for start, end, new in sorted(edits, key=lambda e: -e[0]):
        lines[start:end] = new
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 on drift or a wrong exit code")
    mode.add_argument("--write", action="store_true", help="rewrite the shown output from the program")
    ap.add_argument("--jobs", type=int, default=4)
    args = ap.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    parsed = parse(text)
    outcomes = run_all(parsed, args.jobs)
    if args.write:
        README.write_text(write(text, outcomes), encoding="utf-8")
    found = problems(outcomes) if args.check else [p for p in problems(outcomes) if "shown output" not in p]
    for p in found:
        print(p)
    print(
        f"{len(parsed.examples)} examples run, {len(parsed.not_run)} not run, {len(found)} problems",
        file=sys.stderr,
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
