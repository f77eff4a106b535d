"""Dockerfile syntax: directives, continuations, comments, heredocs, words and flags (Docker's variable
substitution: compat.dockerfile.expand).

Written here rather than taken from `dockerfile-parse` (PyPI): that library reads heredoc bodies as
instructions (`RUN <<EOF` / `pip install …` / `EOF` come back as three instructions `RUN`, `PIP`, `EOF`)
and has no per-stage ARG scoping, which this check needs. The rules followed are those of the
BuildKit frontend: https://docs.docker.com/reference/dockerfile/
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field

from compat._valueclass import valueclass
from compat.errors import InputError

INSTRUCTIONS = frozenset(
    {
        "FROM",
        "RUN",
        "CMD",
        "LABEL",
        "MAINTAINER",
        "EXPOSE",
        "ENV",
        "ADD",
        "COPY",
        "ENTRYPOINT",
        "VOLUME",
        "USER",
        "WORKDIR",
        "ARG",
        "ONBUILD",
        "STOPSIGNAL",
        "HEALTHCHECK",
        "SHELL",
    }
)
HEREDOC_INSTRUCTIONS = frozenset({"RUN", "COPY", "ADD"})
_DIRECTIVE_RE = re.compile(r"^#\s*([a-zA-Z][a-zA-Z0-9_]*)\s*=\s*(.*?)\s*$")
KNOWN_DIRECTIVES = frozenset({"escape", "syntax", "check"})
_KEYWORD_RE = re.compile(r"^\s*(\S+)(?:\s+(.*))?$", re.S)
_HEREDOC_RE = re.compile(r"""(?<![<\w])<<(-?)\s*(["']?)([A-Za-z_][A-Za-z0-9_.-]*)\2""")
# Marks a variable the Dockerfile does not define; callers look for it in expanded text.
UNSET = "\x00"


@valueclass
class Heredoc:
    """A here-document attached to a RUN/COPY/ADD instruction."""

    name: str
    body: str
    """The body text with its lines joined by '\\n' (tabs stripped for `<<-`)."""
    line: int
    """1-based line of the body's first line."""
    expand: bool
    """False when the delimiter was quoted (`<<"EOF"`): no variable expansion in the body."""


@valueclass
class Instruction:
    """One Dockerfile instruction with its continuation lines joined."""

    keyword: str
    """Upper-case instruction name (as written when unknown)."""
    args: str
    """Everything after the keyword, continuation lines joined, comment lines inside dropped."""
    line: int
    """1-based line the instruction starts on."""
    end_line: int
    heredocs: tuple[Heredoc, ...] = ()
    known: bool = True
    line_starts: tuple[tuple[int, int], ...] = ()
    """(offset in `args`, 1-based line) where each continuation line begins, for exact line numbers."""

    def line_at(self, offset: int) -> int:
        """The physical line of character `offset` of `args`."""
        line = self.line
        for off, ln in self.line_starts:
            if off > offset:
                break
            line = ln
        return line


@valueclass
class Dockerfile:
    """A parsed Dockerfile: parser directives and instructions in order."""

    instructions: tuple[Instruction, ...]
    directives: Mapping[str, str] = field(default_factory=dict)
    escape: str = "\\"


def _ends_with_escape(line: str, escape: str) -> bool:
    stripped = line.rstrip()
    if not stripped.endswith(escape):
        return False
    # An escaped escape char (`\\`) at the end is a literal, not a continuation.
    n = len(stripped) - len(stripped.rstrip(escape))
    return n % 2 == 1


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def parse(text: str, origin: str = "Dockerfile") -> Dockerfile:
    """Parse Dockerfile text; InputError (one line, naming `origin`) when it is not a Dockerfile at all."""
    if "\x00" in text:
        raise InputError(f"{origin} is not a text file")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    directives: dict[str, str] = {}
    escape = "\\"
    i = 0
    # Parser directives: only at the very top, before any blank line, comment or instruction.
    while i < len(lines):
        m = _DIRECTIVE_RE.match(lines[i].strip()) if lines[i].strip().startswith("#") else None
        if m is None:
            break
        name = m.group(1).lower()
        if name not in KNOWN_DIRECTIVES or name in directives:
            break
        directives[name] = m.group(2)
        if name == "escape":
            if m.group(2) not in ("\\", "`"):
                raise InputError(
                    f"{origin} line {i + 1}: invalid escape directive {m.group(2)!r} (must be \\ or `)"
                )
            escape = m.group(2)
        i += 1
    instructions: list[Instruction] = []
    n = len(lines)
    while i < n:
        raw = lines[i]
        if not raw.strip() or _is_comment(raw):
            i += 1
            continue
        start = i
        parts = [raw]
        part_lines = [i + 1]
        while _ends_with_escape(parts[-1], escape) and i + 1 < n:
            parts[-1] = parts[-1].rstrip()[:-1]
            i += 1
            # Comment lines and (deprecated) empty lines inside a continuation are skipped.
            while i < n and (_is_comment(lines[i]) or not lines[i].strip()):
                i += 1
            if i < n:
                parts.append(lines[i])
                part_lines.append(i + 1)
            else:
                break
        if _ends_with_escape(parts[-1], escape):
            parts[-1] = parts[-1].rstrip()[:-1]
        joined = "".join(parts)
        m = _KEYWORD_RE.match(joined)
        if m is None:  # pragma: no cover - a non-blank line always has a first word
            i += 1
            continue
        word, rest = m.group(1), (m.group(2) or "").strip()
        rest_at = joined.find(rest, m.start(1) + len(word)) if rest else 0
        starts: list[tuple[int, int]] = []
        pos = 0
        for part, ln in zip(parts, part_lines, strict=False):
            starts.append((pos - rest_at, ln))
            pos += len(part)
        keyword = word.upper()
        known = keyword in INSTRUCTIONS
        heredocs: list[Heredoc] = []
        end = i
        if known and keyword in HEREDOC_INSTRUCTIONS:
            for hm in _heredoc_markers(rest):
                strip_tabs, quote, name = hm
                body_start = end + 1
                j = body_start
                body: list[str] = []
                while j < n:
                    candidate = lines[j].lstrip("\t") if strip_tabs else lines[j]
                    if candidate.rstrip("\r") == name:
                        break
                    body.append(candidate)
                    j += 1
                else:
                    raise InputError(
                        f"{origin} line {start + 1}: heredoc <<{name} is never closed "
                        f"(no line '{name}' after it)"
                    )
                heredocs.append(Heredoc(name, "\n".join(body), body_start + 1, expand=not quote))
                end = j
        instructions.append(
            Instruction(
                keyword if known else word, rest, start + 1, end + 1, tuple(heredocs), known, tuple(starts)
            )
        )
        i = end + 1
    return Dockerfile(tuple(instructions), directives, escape)


def _heredoc_markers(args: str) -> list[tuple[bool, str, str]]:
    """`<<EOF`, `<<-EOF`, `<<"EOF"` markers outside quotes, in order."""
    out: list[tuple[bool, str, str]] = []
    quote = ""
    k = 0
    while k < len(args):
        c = args[k]
        if quote:
            if c == quote:
                quote = ""
            k += 1
            continue
        if c in "\"'":
            quote = c
            k += 1
            continue
        if args.startswith("<<<", k):  # a here-string, not a heredoc
            k += 3
            continue
        if args.startswith("<<", k):
            m = _HEREDOC_RE.match(args, k)
            if m is not None:
                out.append((m.group(1) == "-", m.group(2), m.group(3)))
                k = m.end()
                continue
        k += 1
    return out


def words(text: str, escape: str = "\\") -> list[str]:
    """Split Dockerfile instruction arguments into words: whitespace-separated, quotes removed."""
    out: list[str] = []
    cur: list[str] = []
    has = False
    quote = ""
    k = 0
    while k < len(text):
        c = text[k]
        if quote:
            if c == quote:
                quote = ""
            elif c == escape and quote == '"' and k + 1 < len(text) and text[k + 1] in ('"', "$", escape):
                cur.append(text[k + 1])
                k += 1
            else:
                cur.append(c)
            k += 1
            continue
        if c in "\"'":
            quote = c
            has = True
        elif c == escape and k + 1 < len(text):
            cur.append(text[k + 1])
            has = True
            k += 1
        elif c.isspace():
            if cur or has:
                out.append("".join(cur))
            cur, has = [], False
        else:
            cur.append(c)
            has = True
        k += 1
    if cur or has:
        out.append("".join(cur))
    return out


def key_values(text: str, escape: str = "\\") -> list[tuple[str, str | None]]:
    """`K=V K2="v 2" K3` pairs (ARG, ENV, LABEL); the legacy `ENV K value with spaces` form too."""
    ws = words(text, escape)
    if not ws:
        return []
    if "=" not in ws[0]:
        # Legacy `ENV KEY value…` (one pair) or `ARG NAME` (no default).
        if len(ws) == 1:
            return [(ws[0], None)]
        return [(ws[0], text.split(None, 1)[1].strip().strip('"').strip("'"))]
    out: list[tuple[str, str | None]] = []
    for w in ws:
        if "=" in w:
            k, v = w.split("=", 1)
            out.append((k, v))
        else:
            out.append((w, None))
    return out


def split_flags(text: str, escape: str = "\\") -> tuple[dict[str, str], str]:
    """Leading `--flag=value` / `--flag` words of an instruction, and the rest of the text."""
    flags: dict[str, str] = {}
    rest = text.lstrip()
    while rest.startswith("--"):
        m = re.match(r"--([A-Za-z][A-Za-z0-9-]*)(?:=((?:\"[^\"]*\"|'[^']*'|\S)*))?\s*", rest)
        if m is None:
            break
        value = m.group(2) or ""
        flags[m.group(1).lower()] = "".join(words(value, escape)) if value else ""
        rest = rest[m.end() :]
    return flags, rest
