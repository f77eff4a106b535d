"""The shell words of a RUN line: tokens, quotes, variable expansion (used by shell.py's walker)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field

from compat._valueclass import valueclass
from compat.dockerfile.expand import expand
from compat.dockerfile.parser import UNSET, words

OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")")
REDIR_RE = re.compile(r"^(\d*|&)(>>|>&|<&|>|<<<|<<-?|<)")
MAX_DEPTH = 100
"""Nesting (if, for, case, subshells, groups, `!`) past this is not read further: no script is that deep, and
Python's recursion limit is near."""
KEYWORDS_START = frozenset(
    {"if", "then", "elif", "else", "fi", "case", "esac", "for", "while", "until", "do", "done", "{", "}", "!"}
)


@valueclass
class Token:
    kind: str  # "word" | "op"
    text: str
    offset: int


@valueclass
class ShellCommand:
    """One simple command that would run: its words after expansion, and where it was written."""

    argv: tuple[str, ...]
    offset: int
    """Offset of its first word in the text given to run()."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Prefix assignments (`FOO=1 pip install …`) and shell variables set earlier in the same RUN."""
    cwd: str | None = None
    """Directory after `cd` commands earlier in the same RUN (None: the WORKDIR)."""
    branch: str | None = None
    """The shell branch it is in when its condition is unknown ("the else branch of `if [ -n "$X" ]`")."""


def lex(text: str) -> list[Token]:
    """Split shell text into words (raw, quotes kept) and operators; comments dropped."""
    out: list[Token] = []
    n = len(text)
    k = 0
    while k < n:
        c = text[k]
        if c == "\\" and k + 1 < n and text[k + 1] == "\n":
            k += 2
            continue
        if c == "\n":
            out.append(Token("op", ";", k))
            k += 1
            continue
        if c.isspace():
            k += 1
            continue
        if c == "#":
            while k < n and text[k] != "\n":
                k += 1
            continue
        op = next((o for o in OPERATORS if text.startswith(o, k)), None)
        if op is not None:
            out.append(Token("op", op, k))
            k += len(op)
            continue
        start = k
        k = _word_end(text, k)
        out.append(Token("word", text[start:k], start))
    return out


def _word_end(text: str, k: int) -> int:
    n = len(text)
    while k < n:
        c = text[k]
        if c == "\\" and k + 1 < n:
            k += 2
            continue
        if c == "'":
            close = text.find("'", k + 1)
            k = n if close < 0 else close + 1
            continue
        if c == '"':
            k += 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            k += 1
            continue
        if c == "$" and k + 1 < n and text[k + 1] in "({":
            k = _skip_group(text, k + 1)
            continue
        if c == "`":
            close = text.find("`", k + 1)
            k = n if close < 0 else close + 1
            continue
        if c == "&" and k > 0 and text[k - 1] in "<>":
            k += 1  # 2>&1, <&3: part of a redirection
            continue
        if c.isspace() or c in ";&|()":
            break
        k += 1
    return min(k, n)


def _skip_group(text: str, k: int) -> int:
    """From an opening '(' or '{', the index after its match (quotes respected)."""
    pairs = {"(": ")", "{": "}"}
    opener = text[k]
    closer = pairs[opener]
    depth = 0
    n = len(text)
    while k < n:
        c = text[k]
        if c in "'\"":
            close = text.find(c, k + 1)
            k = n if close < 0 else close + 1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return n


_CMDSUB_RE = re.compile(r"\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`")
_LEN_RE = re.compile(r"\$\{#([A-Za-z_][A-Za-z0-9_]*)\}")
ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def expand_word(raw: str, env: Mapping[str, str]) -> list[str]:
    """A raw shell word → the words it becomes: variables expanded, quotes removed, unquoted splitting.

    ShellCommand substitution (`$(…)`, backticks) cannot be known statically: it becomes an UNSET marker.
    """
    text = _CMDSUB_RE.sub(UNSET + "$()" + UNSET, raw)

    def length(m: re.Match[str]) -> str:
        v = env.get(m.group(1))
        return str(len(v)) if v is not None else UNSET + m.group(1) + UNSET

    text = _LEN_RE.sub(length, text)
    expanded, _ = expand(text, env, "\\", quotes=True)
    return words(expanded, "\\")


def expand_one(raw: str, env: Mapping[str, str]) -> str:
    return " ".join(expand_word(raw, env))
