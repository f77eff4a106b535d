"""The streaming scanner: a keyword pre-filter over big blocks, signature regexes on the few lines it finds,
bounded evidence, and the ranking that puts the root cause first."""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compat.explain import Diagnosis
from compat.explain.catalogue import Catalogue, Signature, default_catalogue
from compat.findings import Fix

if TYPE_CHECKING:
    from compat.facts import Facts
    from compat.matrix import Matrix

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and two-byte escapes. An OSC
# without its terminator ends at the line's end: it must not swallow the rest of the log.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n\r]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")

MAX_LINE = 4096
"""Longer lines are matched on a window around the keyword (minified JSON, progress bars)."""
WINDOW = 1500
MAX_CARRY = 1 << 20
"""A 'line' without any line break longer than this is scanned in pieces."""
CARRY_TAIL = 512
MAX_EVIDENCE_HEAD = 4
MAX_EVIDENCE_TAIL = 2
MAX_EVIDENCE_LEN = 400
WEAK = 0.6
"""Hits below this confidence are generic messages: they never outrank a specific one."""


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text) if "\x1b" in text else text


@dataclass
class _Hit:
    category: str
    first: int
    best: Signature
    sigs: dict[str, Signature] = field(default_factory=dict)
    head: list[str] = field(default_factory=list)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_EVIDENCE_TAIL))
    facts: dict[str, str] = field(default_factory=dict)
    count: int = 0

    def add_evidence(self, line: str) -> None:
        ev = line if len(line) <= MAX_EVIDENCE_LEN else line[: MAX_EVIDENCE_LEN - 1] + "…"
        if ev in self.head or ev in self.tail:
            return
        if len(self.head) < MAX_EVIDENCE_HEAD:
            self.head.append(ev)
        else:
            self.tail.append(ev)

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(self.head) + tuple(t for t in self.tail if t not in self.head)


class Scanner:
    """Feed it a log (blocks or lines); it keeps only bounded state: per-category hits and context facts."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.cat = catalogue
        self._pf_ci = re.compile(catalogue.prefilter.pattern, re.IGNORECASE)
        self._rows_by_kw: dict[str, list[Signature]] = {}
        for sig in catalogue.all_rows:
            for k in sig.keywords:
                self._rows_by_kw.setdefault(k, []).append(sig)
        self._order = {sig.id: i for i, sig in enumerate(catalogue.all_rows)}
        # The trie regex finds the longest keyword at a position; shorter keywords that are its prefixes
        # ("pytorch was compiled" in "pytorch was compiled against") come with it.
        self._closure = {w: [k for k in self._rows_by_kw if w.startswith(k)] for w in self._rows_by_kw}
        self.hits: dict[str, _Hit] = {}
        self.context: dict[str, str] = {}
        self.lines = 0
        self.chars = 0
        self.candidates = 0
        self._seq = 0
        self._carry = ""

    @classmethod
    def for_matrix(cls, matrix: Matrix | None = None) -> Scanner:
        return cls(default_catalogue(matrix))

    # ------------------------------------------------------------------ input

    def feed_line(self, line: str) -> None:
        """One line (a trailing newline is optional); it may itself hold CR/LF-separated lines."""
        if not line.endswith(("\n", "\r")):
            line += "\n"
        self.feed_block(line)

    def feed_block(self, text: str, *, final: bool = False) -> None:
        """A chunk of log text; a line cut at the end of a chunk is completed by the next one."""
        self.chars += len(text)
        if self._carry:
            text = self._carry + text
            self._carry = ""
        if not final:
            cut = max(text.rfind("\n"), text.rfind("\r"))
            if cut < 0:
                if len(text) <= MAX_CARRY:
                    self._carry = text
                    return
                self._carry = text[-CARRY_TAIL:]
                text = text[:-CARRY_TAIL]
            elif cut < len(text) - 1:
                self._carry = text[cut + 1 :]
                text = text[: cut + 1]
        self._scan(text)

    def close(self) -> None:
        if self._carry:
            carry, self._carry = self._carry, ""
            self._scan(carry)

    def _scan(self, body: str) -> None:
        body = strip_ansi(body)
        self.lines += body.count("\n")
        low = body.lower()
        # str.lower() keeps offsets for almost all text; when it does not, search case-insensitively.
        it = self.cat.prefilter.finditer(low) if len(low) == len(body) else self._pf_ci.finditer(body)
        done = -1
        for m in it:
            s = m.start()
            if s < done:
                continue
            ls = max(body.rfind("\n", 0, s), body.rfind("\r", 0, s)) + 1
            ends = [e for e in (body.find("\n", s), body.find("\r", s)) if e >= 0]
            le = min(ends) if ends else len(body)
            if le - ls > MAX_LINE:
                ls = max(ls, s - WINDOW)
                le = min(le, m.end() + WINDOW)
            done = le
            self._match(body[ls:le])

    def _match(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        self.candidates += 1
        low = line.lower()
        self._seq += 1
        # Every keyword the line holds, overlapping ones included: search again one character further.
        rows: dict[str, Signature] = {}
        pos = 0
        while True:
            km = self.cat.prefilter.search(low, pos)
            if km is None:
                break
            for k in self._closure.get(km.group(0), ()):
                for sig in self._rows_by_kw[k]:
                    rows.setdefault(sig.id, sig)
            pos = km.start() + 1
        for sig in sorted(rows.values(), key=lambda s: self._order[s.id]):
            m = sig.regex.search(line)
            if m is None:
                continue
            facts = sig.facts_from(m)
            if sig.category is None:
                for k, v in facts.items():
                    self.context.setdefault(k, v)
                continue
            hit = self.hits.get(sig.category)
            if hit is None:
                hit = self.hits[sig.category] = _Hit(sig.category, self._seq, sig)
            hit.count += 1
            hit.sigs.setdefault(sig.id, sig)
            if sig.confidence > hit.best.confidence:
                hit.best = sig
            hit.add_evidence(line)
            for k, v in facts.items():
                hit.facts.setdefault(k, v)

    # ------------------------------------------------------------------ output

    def diagnoses(self) -> list[Diagnosis]:
        """The hits as diagnoses, root cause first."""
        self.close()
        cats = self.cat.categories
        strong = {c for c, h in self.hits.items() if h.best.confidence >= WEAK}
        by: dict[str, list[str]] = {}
        for c in strong:
            for victim in cats[c].suppresses:
                if victim in self.hits and victim != c:
                    by.setdefault(victim, []).append(c)
        rows: list[tuple[tuple[Any, ...], Diagnosis]] = []
        for c, hit in self.hits.items():
            base = min(0.99, hit.best.confidence + 0.02 * (len(hit.sigs) - 1))
            causes = sorted(by.get(c, []), key=lambda x: cats[x].rank)
            conf = base * 0.5 if causes else base
            d = _diagnosis(self.cat, hit, conf, causes, self.context)
            key = (bool(causes), base < WEAK, cats[c].rank, -conf, hit.first)
            rows.append((key, d))
        rows.sort(key=lambda r: r[0])
        return [d for _, d in rows]


def fill(template: str, facts: dict[str, Any]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(facts.get(m.group(1), "unknown")), template)


def _dedupe_fixes(groups: list[tuple[Fix, ...]]) -> tuple[Fix, ...]:
    out: list[Fix] = []
    seen: set[str] = set()
    for g in groups:
        for f in g:
            if f.text not in seen:
                seen.add(f.text)
                out.append(f)
    return tuple(out)


def _diagnosis(
    cat: Catalogue, hit: _Hit, conf: float, causes: list[str], context: dict[str, str]
) -> Diagnosis:
    category = cat.categories[hit.category]
    sigs = sorted(hit.sigs.values(), key=lambda s: -s.confidence)
    facts: dict[str, Any] = dict(hit.facts)
    for k, v in context.items():
        facts.setdefault(k, v)
    meanings: list[str] = []
    for s in sigs:
        text = fill(s.meaning, facts)
        if "unknown" in text and any(m for m in meanings):
            continue
        if text not in meanings:
            meanings.append(text)
        if len(meanings) == 2:
            break
    explanation = " ".join(meanings + [category.explanation])
    if causes:
        names = ", ".join(causes)
        explanation += f" Probably a consequence of {names}, found in the same log."
    if hit.count > len(hit.evidence):
        explanation += f" ({hit.count} matching lines.)"
    title = next((s.title for s in sigs if s.title), None) or category.title
    fixes = _dedupe_fixes([s.fixes for s in sigs] + [category.fixes])
    return Diagnosis(hit.category, round(conf, 2), title, hit.evidence, explanation, facts, fixes)


def finish(scanner: Scanner, facts: Facts | None, matrix: Matrix | None) -> list[Diagnosis]:
    """Rank the scanner's hits; cross-check them against `facts` when given."""
    diags = scanner.diagnoses()
    if facts is None or not diags:
        return diags
    from compat.explain.crosscheck import cross_check

    return cross_check(diags, facts, matrix)
