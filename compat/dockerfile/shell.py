"""Just enough POSIX shell to read RUN lines: words, quotes, `&&`/`||`/`;`, if/case/for, and variables.

A RUN line is not run, only read: this module walks it the way `/bin/sh -c` would, with the stage's
ARG/ENV values, and returns the simple commands that would execute. Conditions it can decide
(`[ -n "$X" ]`, `[ "$A" = b ]`, `case $TARGETPLATFORM in …`) pick their branch; for an `if` whose condition
it cannot decide (a command's exit status, an unset ARG) every branch is followed and each command carries
the branch it is in (ShellCommand.branch), so a finding can say which branch it comes from.
The lexer is written here rather than taken from `shlex`: quotes must survive until variables are
expanded (single quotes stop expansion), and `shlex` removes them while splitting.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from compat.dockerfile.expand import strip_unset
from compat.dockerfile.parser import UNSET
from compat.dockerfile.shellwords import (
    ASSIGN_RE,
    MAX_DEPTH,
    REDIR_RE,
    ShellCommand,
    Token,
    expand_one,
    expand_word,
    lex,
)


class _Walker:
    """Walks tokens like the shell would, collecting the simple commands that run."""

    def __init__(self, tokens: list[Token], env: Mapping[str, str]) -> None:
        self.t = tokens
        self.i = 0
        self.env: dict[str, str] = dict(env)
        self.local: dict[str, str] = {}
        self.cwd: str | None = None
        self.out: list[ShellCommand] = []
        self.steps = 0
        self.depth = 0
        self.branch: str | None = None

    # -- token helpers
    def peek(self) -> Token | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def at_word(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "word" and tok.text in texts

    def at_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.text in ops

    def skip_separators(self) -> None:
        while self.at_op(";", "&"):
            self.i += 1

    # -- grammar
    def _nested(self) -> bool:
        """Enter one level of if / for / ( / { / !; False (and the rest of the text skipped) past MAX_DEPTH."""
        if self.depth >= MAX_DEPTH:
            self.i = len(self.t)
            return False
        self.depth += 1
        return True

    def run_list(self, run: bool, stop: tuple[str, ...] = ()) -> bool | None:
        """Commands joined by ; && || until a stop keyword; returns the last status (None: unknown)."""
        if not self._nested():
            return None
        try:
            return self._run_list(run, stop)
        finally:
            self.depth -= 1

    def command(self, run: bool) -> bool | None:
        if not self._nested():
            return None
        try:
            return self._command(run)
        finally:
            self.depth -= 1

    def _run_list(self, run: bool, stop: tuple[str, ...]) -> bool | None:
        status: bool | None = True
        pending: str | None = None
        while self.i < len(self.t):
            self.steps += 1
            if self.steps > 20000:  # malformed input must not hang us
                self.i = len(self.t)
                break
            tok = self.t[self.i]
            if tok.kind == "word" and tok.text in stop and pending is None:
                break
            if tok.kind == "op":
                if tok.text in (";", "&", "\n"):
                    self.i += 1
                    pending = None
                    continue
                if tok.text in ("&&", "||", "|"):
                    pending = tok.text
                    self.i += 1
                    continue
                if tok.text in (")", ";;"):
                    break
                if tok.text == "(":
                    self.i += 1
                    this_run = run and _should_run(pending, status)
                    st = self.run_list(this_run, stop=())
                    if self.at_op(")"):
                        self.i += 1
                    status = st if this_run else status
                    pending = None
                    continue
            this_run = run and _should_run(pending, status)
            st = self.command(this_run)
            if this_run:
                status = st
            elif pending == "&&" and status is False:
                status = False
            pending = None
        return status

    def _command(self, run: bool) -> bool | None:
        tok = self.peek()
        assert tok is not None
        if tok.kind == "word" and tok.text == "if":
            return self.if_clause(run)
        if tok.kind == "word" and tok.text == "case":
            return self.case_clause(run)
        if tok.kind == "word" and tok.text == "for":
            return self.for_clause(run)
        if tok.kind == "word" and tok.text in ("while", "until"):
            self.i += 1
            self.run_list(False, stop=("do",))
            self.expect("do")
            st = self.run_list(run, stop=("done",))
            self.expect("done")
            return st
        if tok.kind == "word" and tok.text in ("{", "!"):
            self.i += 1
            if tok.text == "{":
                st = self.run_list(run, stop=("}",))
                self.expect("}")
                return st
            st = self.command(run)
            return None if st is None else not st
        return self.simple(run)

    def expect(self, word: str) -> None:
        if self.at_word(word):
            self.i += 1

    def if_clause(self, run: bool) -> bool | None:
        """Branches whose condition is unknown are all followed, each command labelled with its branch."""
        self.i += 1  # if
        c_start = self.i
        cond = self.run_list(run, stop=("then",))
        what = "`if " + " ".join(tok.text for tok in self.t[c_start : self.i]).rstrip(" ;&")[:80] + "`"
        self.expect("then")
        outer = self.branch
        taken = cond is True
        unknown = cond is None
        self.branch = f"the then branch of {what}" if unknown else outer
        st = self.run_list(run and cond is not False, stop=("elif", "else", "fi"))
        n = 0
        while self.at_word("elif"):
            self.i += 1
            n += 1
            self.branch = outer
            c_start = self.i
            c2 = self.run_list(run and not taken, stop=("then",))
            text = " ".join(tok.text for tok in self.t[c_start : self.i]).rstrip(" ;&")[:80]
            self.expect("then")
            this = not taken and c2 is not False
            self.branch = f"the elif `{text}` branch of {what}" if (unknown or c2 is None) else outer
            s2 = self.run_list(run and this, stop=("elif", "else", "fi"))
            if this:
                st = s2
                taken = taken or c2 is True
                unknown = unknown or c2 is None
        if self.at_word("else"):
            self.i += 1
            self.branch = f"the else branch of {what}" if unknown else outer
            s3 = self.run_list(run and not taken, stop=("fi",))
            if not taken:
                st = s3
        self.branch = outer
        self.expect("fi")
        return st

    def case_clause(self, run: bool) -> bool | None:
        self.i += 1  # case
        tok = self.peek()
        subject = expand_one(tok.text, self.scope()) if tok and tok.kind == "word" else ""
        self.i += 1
        self.expect("in")
        self.skip_separators()
        taken = False
        st: bool | None = True
        unknown = UNSET in subject
        while self.i < len(self.t) and not self.at_word("esac"):
            pats: list[str] = []
            if self.at_op("("):
                self.i += 1
            while self.i < len(self.t) and not self.at_op(")"):
                tk = self.t[self.i]
                if tk.kind == "word":
                    pats.extend(p for p in expand_one(tk.text, self.scope()).split("|") if p)
                self.i += 1
            self.i += 1  # )
            if unknown:
                match = "*" in pats
            else:
                match = any(fnmatch.fnmatchcase(subject, p) for p in pats)
            this = not taken and match
            s = self.run_list(run and this, stop=("esac",))
            if this:
                st, taken = s, True
            if self.at_op(";;"):
                self.i += 1
            self.skip_separators()
        self.expect("esac")
        return st

    def for_clause(self, run: bool) -> bool | None:
        self.i += 1  # for
        var_tok = self.peek()
        var = var_tok.text if var_tok is not None and var_tok.kind == "word" else "_"
        self.i += 1
        items: list[str] = []
        if self.at_word("in"):
            self.i += 1
            while self.i < len(self.t) and self.t[self.i].kind == "word" and self.t[self.i].text != "do":
                items.extend(expand_word(self.t[self.i].text, self.scope()))
                self.i += 1
        self.skip_separators()
        self.expect("do")
        start = self.i
        st: bool | None = True
        for item in (items or [""])[:50]:
            self.i = start
            self.local[var] = item
            st = self.run_list(run and bool(items), stop=("done",))
        if not items:
            self.i = start
            self.run_list(False, stop=("done",))
        self.expect("done")
        return st

    def scope(self) -> dict[str, str]:
        s = dict(self.env)
        s.update(self.local)
        return s

    def simple(self, run: bool) -> bool | None:
        raw: list[Token] = []
        while self.i < len(self.t):
            tok = self.t[self.i]
            if tok.kind == "op":
                break
            if (
                raw == []
                and tok.text in ("then", "do", "else", "elif", "fi", "done", "esac", "}")
                and tok.text
            ):
                break
            raw.append(tok)
            self.i += 1
        if not raw:
            self.i += 1
            return True
        # Drop redirections and their targets.
        toks: list[Token] = []
        skip = False
        for tok in raw:
            if skip:
                skip = False
                continue
            m = REDIR_RE.match(tok.text)
            if m is not None and not tok.text.startswith(("'", '"')):
                rest = tok.text[m.end() :]
                if not rest and not m.group(2).startswith("<<"):
                    skip = True
                continue
            toks.append(tok)
        scope = self.scope()
        assigns: dict[str, str] = {}
        argv: list[str] = []
        first = None
        for tok in toks:
            if not argv:
                am = ASSIGN_RE.match(tok.text)
                if am is not None:
                    assigns[am.group(1)] = (
                        expand_one(am.group(2), {**scope, **assigns}) if am.group(2) else ""
                    )
                    continue
            if first is None:
                first = tok.offset
            argv.extend(expand_word(tok.text, scope if not assigns else {**scope, **assigns}))
        if not run:
            return None
        if not argv:
            # `VAR=value` alone sets a shell variable for the rest of this RUN.
            self.local.update(assigns)
            return True
        name = argv[0]
        if name in ("[", "test", "[["):
            return _test(argv[1:-1] if name in ("[", "[[") and argv[-1] in ("]", "]]") else argv[1:])
        if name == "true" or name == ":":
            return True
        if name == "false":
            return False
        if name == "export":
            for a in argv[1:]:
                am = ASSIGN_RE.match(a)
                if am is not None:
                    self.local[am.group(1)] = am.group(2)
            return True
        if name == "cd" and len(argv) > 1:
            target = strip_unset(argv[1])
            if target.startswith("/"):
                self.cwd = target
            elif target not in ("-", "~") and not target.startswith("~"):
                base = self.cwd or ""
                self.cwd = f"{base.rstrip('/')}/{target}" if base else target
            return True
        if name in ("exit",):
            self.i = len(self.t)
            return True
        self.out.append(
            ShellCommand(
                tuple(argv),
                first if first is not None else raw[0].offset,
                {**self.local, **assigns},
                self.cwd,
                self.branch,
            )
        )
        return True


def _should_run(pending: str | None, status: bool | None) -> bool:
    if pending == "&&":
        return status is not False
    if pending == "||":
        return status is False
    return True


def _test(args: list[str]) -> bool | None:
    """Evaluate `[ … ]`; None when an operand is unknown."""
    if any(UNSET in a for a in args):
        return None
    bangs = 0
    while bangs < len(args) and args[bangs] == "!":  # `! ! ! …` without recursion
        bangs += 1
    if bangs:
        r = _test(args[bangs:])
        return None if r is None else (not r if bangs % 2 else r)
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, val = args
        if op == "-n":
            return val != ""
        if op == "-z":
            return val == ""
        return None  # -f, -d, -x …: the filesystem is unknown
    if len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            return a == b
        if op == "!=":
            return a != b
        if op in ("-eq", "-ne", "-gt", "-lt", "-ge", "-le"):
            try:
                x, y = int(a), int(b)
            except ValueError:
                return None
            return {"-eq": x == y, "-ne": x != y, "-gt": x > y, "-lt": x < y, "-ge": x >= y, "-le": x <= y}[
                op
            ]
    return None


def run(text: str, env: Mapping[str, str]) -> list[ShellCommand]:
    """The simple commands `sh -c text` would run with `env`, in order."""
    w = _Walker(lex(text), env)
    while w.i < len(w.t):
        before = w.i
        w.run_list(True)
        if w.i == before:
            w.i += 1
    return w.out


__all__ = ["run"]
