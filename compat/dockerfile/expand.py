"""Docker's variable substitution in Dockerfile instructions ($VAR, ${VAR}, ${VAR:-word}, ${VAR#pattern} ...),
bounded: nesting, growth and pattern work are capped. The rules are those of the BuildKit frontend:
https://docs.docker.com/reference/dockerfile/#environment-replacement
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from compat.dockerfile.parser import UNSET
from compat.errors import InputError

MAX_NESTING = 32
"""`${A:-${B:-...}}` nested deeper than this is kept as written (no recursion without end)."""
MAX_GROWTH = 1 << 20
"""An expansion may add at most this many characters: ARGs that double each other (A2=$A1$A1, A3=$A2$A2 ...)
would otherwise need 2**N bytes."""
GLOB_WORK = 1 << 20
"""Pattern x value size above which `${V#pat}` / `${V%pat}` are not evaluated (the value is kept)."""


class ExpansionError(InputError):
    """Variable substitution that grows without bound; the caller adds the Dockerfile line."""


def _glob_prefixes(pattern: str, value: str) -> list[int]:
    """The lengths k (ascending) for which value[:k] matches the glob `pattern` (`*`, `?`, literals).

    A set-of-states walk, linear in len(value) for a given pattern: a regex of several `.*` backtracks
    polynomially (`${X#*a*a*a*a*b}` on 40 a's took minutes).
    """
    pat = re.sub(r"\*+", "*", pattern)
    m = len(pat)

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < m and pat[i] == "*" and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return out

    states = closure({0})
    found = [0] if m in states else []
    for k, ch in enumerate(value, 1):
        nxt = set()
        for i in states:
            if i < m:
                p = pat[i]
                if p == "*":
                    nxt.add(i)
                elif p == "?" or p == ch:
                    nxt.add(i + 1)
        if not nxt:
            break
        states = closure(nxt)
        if m in states:
            found.append(k)
    return found


def _apply_modifier(name: str, value: str | None, op: str, word: str) -> str:
    """The `${name<op>word}` forms Docker supports."""
    if op in (":-", "-"):
        if value is None or (op == ":-" and value == ""):
            return word
        return value
    if op in (":+", "+"):
        if value is None or (op == ":+" and value == ""):
            return ""
        return word
    if op in (":?", "?"):
        return value if value is not None else UNSET + name + UNSET
    if value is None:
        return UNSET + name + UNSET
    if op in ("#", "##", "%", "%%"):
        if (len(word) + 1) * (len(value) + 1) > GLOB_WORK:
            return value
        if op in ("#", "##"):
            ks = _glob_prefixes(word, value)
            if not ks:
                return value
            return value[(ks[0] if op == "#" else ks[-1]) :]
        # A suffix of `value` matches `word` when its reverse is a prefix of the reversed value.
        ks = _glob_prefixes(word[::-1], value[::-1])
        if not ks:
            return value
        return value[: len(value) - (ks[0] if op == "%" else ks[-1])]
    return value


_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def expand(
    text: str, env: Mapping[str, str], escape: str = "\\", *, quotes: bool = False
) -> tuple[str, set[str]]:
    """Replace `$VAR`, `${VAR}`, `${VAR:-w}`, `${VAR:+w}`, `${VAR#p}` … from `env`.

    Returns the text and the names that were not defined; an undefined variable expands to
    UNSET + name + UNSET so callers can tell "empty" from "unknown". With quotes=True (shell text),
    nothing inside single quotes is expanded and the quotes are kept for the shell splitter.
    ExpansionError when the result would grow by more than MAX_GROWTH characters.
    """
    result, unset = _expand(text, env, escape, quotes, 0)
    if len(result) > len(text) + MAX_GROWTH:
        raise ExpansionError(
            f"variable substitution grows past {MAX_GROWTH} characters "
            "(ARG/ENV values that repeat each other?)"
        )
    return result, unset


def _expand(text: str, env: Mapping[str, str], escape: str, quotes: bool, depth: int) -> tuple[str, set[str]]:
    out: list[str] = []
    unset: set[str] = set()
    k = 0
    n = len(text)
    in_single = False
    in_double = False
    grown = 0
    while k < n:
        if grown > MAX_GROWTH:  # net characters added so far
            out.append(text[k:])
            break  # expand() raises ExpansionError on the result
        c = text[k]
        if quotes and c == "'" and not in_double:
            in_single = not in_single
            out.append(c)
            k += 1
            continue
        if quotes and c == '"' and not in_single:
            in_double = not in_double
            out.append(c)
            k += 1
            continue
        if in_single:
            out.append(c)
            k += 1
            continue
        if c == escape and k + 1 < n:
            # Escapes are kept for the word splitter (quotes=True); otherwise `\$` is a literal `$`.
            out.append(c + text[k + 1] if quotes or text[k + 1] != "$" else "$")
            k += 2
            continue
        if c != "$" or k + 1 >= n:
            out.append(c)
            k += 1
            continue
        nxt = text[k + 1]
        if nxt == "{" and depth >= MAX_NESTING:
            out.append(text[k:])
            break
        if nxt == "{":
            close = _matching_brace(text, k + 1)
            if close < 0:
                out.append(text[k:])
                break
            inner = text[k + 2 : close]
            m = _NAME_RE.match(inner)
            if m is None:
                out.append(text[k : close + 1])
                k = close + 1
                continue
            name = m.group(0)
            rest = inner[m.end() :]
            value = env.get(name)
            if not rest:
                if value is None:
                    unset.add(name)
                    out.append(UNSET + name + UNSET)
                else:
                    out.append(value)
                    grown += len(value) - (close + 1 - k)
            else:
                om = re.match(r"(:-|:\+|:\?|##|%%|-|\+|\?|#|%)", rest)
                if om is None:
                    out.append(text[k : close + 1])
                else:
                    word, sub_unset = _expand(rest[om.end() :], env, escape, False, depth + 1)
                    result = _apply_modifier(name, value, om.group(1), word)
                    if UNSET in result:
                        unset |= sub_unset | ({name} if value is None else set())
                    out.append(result)
                    grown += len(result) - (close + 1 - k)
            k = close + 1
            continue
        m = _NAME_RE.match(text, k + 1)
        if m is None:
            out.append(c)
            k += 1
            continue
        name = m.group(0)
        value = env.get(name)
        if value is None:
            unset.add(name)
            out.append(UNSET + name + UNSET)
        else:
            out.append(value)
            grown += len(value) - (m.end() - k)
        k = m.end()
    return "".join(out), unset


def _matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return -1


def strip_unset(text: str) -> str:
    """Expanded text with unknown variables replaced by nothing (what the build would see)."""
    return re.sub(UNSET + r"[A-Za-z0-9_]*" + UNSET, "", text)
