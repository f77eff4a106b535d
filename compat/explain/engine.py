"""The streaming scanner: a keyword pre-filter over big blocks, signature regexes on the few lines it finds,
bounded evidence, and the ranking that puts the root cause first."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from compat._valueclass import valueclass
from compat.explain.catalogue import default_catalogue
from compat.explain.diagnosis import Diagnosis, Evidence
from compat.explain.prefilter import prefilter_for, scan_tables
from compat.explain.settle import settle_suspects
from compat.explain.signature import Catalogue, Death, Signature
from compat.findings import Fix

if TYPE_CHECKING:
    from compat.facts import Facts
    from compat.matrix import Matrix

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and two-byte escapes. An OSC
# without its terminator ends at the line's end: it must not swallow the rest of the log.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n\r]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
ANSI_RE_B = re.compile(ANSI_RE.pattern.encode("ascii"))

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


MAX_CONTEXT = 20
"""--context N is capped: evidence stays a few lines per diagnosis."""
CODE_VALUE_RE = re.compile(
    r"cuda runtime error \((?P<a>\d{1,4})\)|CUDA error (?P<b>\d{1,4})\b|THCudaCheck FAIL .*?error=(?P<c>\d{1,4})\b",
    re.IGNORECASE,
)
"""Numeric CUDA runtime errors ("cuda runtime error (2)", "CUDA error 217 at", THCudaCheck's error=N)."""
SUSPECT_CONFIDENCE = (0.4, 0.3, 0.2, 0.15)


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text) if "\x1b" in text else text


# ------------------------------------------------------------------ state


@valueclass(frozen=False)
class _Ev:
    line: int
    text: str
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)

    def frozen(self) -> Evidence:
        return Evidence(self.line, self.text, tuple(self.before), tuple(self.after))


def _clip(line: str) -> str:
    return line if len(line) <= MAX_EVIDENCE_LEN else line[: MAX_EVIDENCE_LEN - 1] + "…"


@valueclass(frozen=False)
class _Hit:
    category: str
    first: int
    best: Signature
    sigs: dict[str, Signature] = field(default_factory=dict)
    head: list[_Ev] = field(default_factory=list)
    tail: deque[_Ev] = field(default_factory=lambda: deque(maxlen=MAX_EVIDENCE_TAIL))
    facts: dict[str, str] = field(default_factory=dict)
    count: int = 0
    last_seq: int = -1

    def add_evidence(self, line: str, lineno: int) -> _Ev | None:
        ev = _clip(line)
        if any(e.text == ev for e in self.head) or any(e.text == ev for e in self.tail):
            return None
        e = _Ev(lineno, ev)
        if len(self.head) < MAX_EVIDENCE_HEAD:
            self.head.append(e)
        else:
            self.tail.append(e)
        return e

    @property
    def evs(self) -> tuple[_Ev, ...]:
        return tuple(self.head) + tuple(self.tail)

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(e.text for e in self.evs)


@valueclass(frozen=False)
class _DeathSeen:
    death: Death
    first: int
    ev: _Ev
    count: int = 0


class Scanner:
    """Feed it a log (bytes, text blocks or lines); it keeps only bounded state: per-category hits, context
    facts and the deaths it saw. `context` asks for up to N lines before and after each evidence line."""

    def __init__(self, catalogue: Catalogue, *, context: int = 0, pure: bool = False) -> None:
        self.cat = catalogue
        self.context_lines = max(0, min(int(context), MAX_CONTEXT))
        self._pf_ci = re.compile(catalogue.prefilter.pattern, re.IGNORECASE)
        self.prefilter = prefilter_for(catalogue.keywords, pure=pure)
        # Keyword -> rows and deaths, row order, prefix closure: derived once per catalogue (scan_tables).
        self._rows_by_kw, self._deaths_by_kw, self._order, self._closure = scan_tables(catalogue)
        self.hits: dict[str, _Hit] = {}
        self.deaths_seen: dict[str, _DeathSeen] = {}
        self.context: dict[str, str] = {}
        self.lines = 0
        self.chars = 0
        self.bytes = 0
        self.candidates = 0
        self._seq = 0
        self._carry = b""
        self._prev: deque[str] = deque(maxlen=self.context_lines or 1)
        self._pending: list[tuple[_Ev, int]] = []

    @classmethod
    def for_matrix(cls, matrix: Matrix | None = None, *, context: int = 0) -> Scanner:
        return cls(default_catalogue(matrix), context=context)

    # ------------------------------------------------------------------ input

    def feed_line(self, line: str) -> None:
        """One line (a trailing newline is optional); it may itself hold CR/LF-separated lines."""
        if not line.endswith(("\n", "\r")):
            line += "\n"
        self.feed_block(line)

    def feed_block(self, text: str, *, final: bool = False) -> None:
        """A chunk of log text; a line cut at the end of a chunk is completed by the next one."""
        self.chars += len(text)
        self.feed_bytes(text.encode("utf-8", errors="surrogateescape"), final=final, _count=False)

    def feed_bytes(self, raw: bytes, *, final: bool = False, _count: bool = True) -> None:
        """A chunk of the log as bytes (undecodable bytes are fine): the fast path of the CLI."""
        self.bytes += len(raw)
        if _count:
            self.chars += len(raw)
        cut = len(raw) - 1 if final else max(raw.rfind(b"\n"), raw.rfind(b"\r"))
        if cut < 0:  # no line break in the whole chunk
            raw = self._carry + raw
            self._carry = b""
            if len(raw) <= MAX_CARRY:
                self._carry = raw
                return
            self._carry = raw[-CARRY_TAIL:]
            self._scan(raw, 0, len(raw) - CARRY_TAIL)
            return
        start = 0
        if self._carry:
            # complete the line cut at the end of the last chunk, without copying this chunk
            nl = raw.find(b"\n", 0, cut + 1)
            first = cut if nl < 0 else nl
            head = self._carry + raw[: first + 1]
            self._carry = b""
            self._scan(head, 0, len(head))
            start = first + 1
        if start <= cut:
            self._scan(raw, start, cut + 1)
        if cut < len(raw) - 1:
            self._carry = raw[cut + 1 :]

    def close(self) -> None:
        if self._carry:
            carry, self._carry = self._carry, b""
            # The last line has no final newline: it is still a line read (issue 19: "0 lines read").
            if not carry.endswith((b"\n", b"\r")):
                carry += b"\n"
            self._scan(carry, 0, len(carry))

    def _scan(self, body: bytes, a: int, b: int) -> None:
        """Scan body[a:b] (whole lines) without copying it: offsets bound every search."""
        if body.find(b"\x1b", a, b) >= 0:
            body = ANSI_RE_B.sub(b"", body[a:b])
            a, b = 0, len(body)
        n = self.context_lines
        if n and self._pending:
            self._fill_after(body, a, b)
        low = body.lower()
        view = memoryview(low)[a:b] if (a, b) != (0, len(low)) else low
        base = self.lines
        counted, counted_pos = 0, a
        done = -1
        for s0 in self.prefilter.starts(view):
            s = s0 + a
            if s < done:
                continue
            nl = low.rfind(b"\n", a, s)
            ls = max(nl, low.rfind(b"\r", max(nl + 1, a), s)) + 1
            ls = max(ls, a)
            e_n = low.find(b"\n", s, b)
            if e_n < 0:
                e_n = b
            e_r = low.find(b"\r", s, e_n)
            le = e_n if e_r < 0 else e_r
            if le - ls > MAX_LINE:
                ls = max(ls, s - WINDOW)
                le = min(le, s + WINDOW)
            done = le
            counted += low.count(b"\n", counted_pos, ls)
            counted_pos = ls
            new = self._match(body[ls:le].decode("utf-8", errors="replace"), base + counted + 1)
            if n and new:
                before = self._lines_before(body, a, ls, n)
                for ev in new:
                    ev.before = before
                    self._pending.append((ev, n))
                self._fill_after(body, min(e_n + 1, b), b)
        self.lines = base + low.count(b"\n", a, b)
        if n:
            for ln in self._tail_lines(body, a, b, n):
                self._prev.append(ln)

    # ------------------------------------------------------------------ --context

    @staticmethod
    def _decode(b: bytes) -> str:
        return _clip(strip_ansi(b.decode("utf-8", errors="replace")).rstrip("\r"))

    def _lines_before(self, body: bytes, a: int, ls: int, n: int) -> list[str]:
        # the start of the evidence line's \n-line, then up to n lines before it (earlier chunks: _prev)
        pos = max(a, body.rfind(b"\n", a, ls) + 1)
        out: list[str] = []
        while len(out) < n and pos > a:
            prev = max(a, body.rfind(b"\n", a, pos - 1) + 1)
            out.append(self._decode(body[prev : pos - 1]))
            pos = prev
        if len(out) < n and pos == a:
            out.extend(reversed(list(self._prev)[-(n - len(out)) :]))
        return list(reversed(out))

    def _tail_lines(self, body: bytes, a: int, b: int, n: int) -> list[str]:
        end = b - 1 if b > a and body[b - 1 : b] == b"\n" else b
        out: list[str] = []
        pos = end
        while len(out) < n and pos > a:
            prev = max(a, body.rfind(b"\n", a, pos) + 1)
            out.append(self._decode(body[prev:pos]))
            pos = prev - 1
        return list(reversed(out))

    def _fill_after(self, body: bytes, pos: int, b: int) -> None:
        """Give pending evidence the lines from `pos` on (after the evidence line), up to `b`."""
        still: list[tuple[_Ev, int]] = []
        for ev, want in self._pending:
            p = pos
            while want > 0 and p < b:
                e = body.find(b"\n", p, b)
                if e < 0:
                    e = b
                ev.after.append(self._decode(body[p:e]))
                want -= 1
                p = e + 1
            if want > 0:
                still.append((ev, want))
        self._pending = still

    # ------------------------------------------------------------------ matching one line

    def _match(self, line: str, lineno: int = 0) -> list[_Ev]:
        line = strip_ansi(line).strip()
        if not line:
            return []
        self.candidates += 1
        low = line.lower()
        self._seq += 1
        # Every keyword the line holds, overlapping ones included: search again one character further.
        rows: dict[str, Signature] = {}
        deaths: dict[str, Death] = {}
        pos = 0
        while True:
            km = self.cat.prefilter.search(low, pos)
            if km is None:
                break
            for k in self._closure.get(km.group(0), ()):
                for sig in self._rows_by_kw.get(k, ()):
                    rows.setdefault(sig.id, sig)
                for d in self._deaths_by_kw.get(k, ()):
                    deaths.setdefault(d.id, d)
            pos = km.start() + 1
        new: list[_Ev] = []
        matched = False
        for sig in sorted(rows.values(), key=lambda s: self._order[s.id]):
            m = sig.regex.search(line)
            if m is None:
                continue
            facts = sig.facts_from(m)
            if sig.category is None:
                for k, v in facts.items():
                    self.context.setdefault(k, v)
                continue
            matched = True
            ev = self._evidence_for(sig, facts, line, lineno)
            if ev is not None:
                new.append(ev)
        if self.cat.codes_by_value and ("error" in low):
            cm = CODE_VALUE_RE.search(line)
            if cm is not None:
                csig = self.cat.codes_by_value.get(int(cm.group("a") or cm.group("b") or cm.group("c")))
                if csig is not None and csig.category is not None:
                    matched = True
                    ev = self._evidence_for(csig, dict(csig.set_facts), line, lineno)
                    if ev is not None:
                        new.append(ev)
        if not matched:
            for d in deaths.values():
                if d.regex.search(line) is None:
                    continue
                seen = self.deaths_seen.get(d.id)
                if seen is None:
                    ev0 = _Ev(lineno, _clip(line))
                    seen = self.deaths_seen[d.id] = _DeathSeen(d, self._seq, ev0)
                    new.append(ev0)
                seen.count += 1
        return new

    def _evidence_for(self, sig: Signature, facts: Mapping[str, str], line: str, lineno: int) -> _Ev | None:
        assert sig.category is not None
        hit = self.hits.get(sig.category)
        if hit is None:
            hit = self.hits[sig.category] = _Hit(sig.category, self._seq, sig)
        if hit.last_seq != self._seq:  # lines, not rows: one line can match several rows
            hit.count += 1
            hit.last_seq = self._seq
        hit.sigs.setdefault(sig.id, sig)
        if sig.confidence > hit.best.confidence:
            hit.best = sig
        for k, v in facts.items():
            hit.facts.setdefault(k, v)
        return hit.add_evidence(line, lineno)

    # ------------------------------------------------------------------ output

    def diagnoses(self) -> list[Diagnosis]:
        """The hits as diagnoses, root cause first; ranked suspects when only a bare death was seen."""
        self.close()
        cats = self.cat.categories
        hits = dict(self.hits)
        generic = hits.get("gpu_error")
        if generic is not None and len(hits) > 1 and set(generic.sigs) == {GENERIC_ID}:
            del hits["gpu_error"]  # "CUDA error: ..." whose message another category already names
        strong = {c for c, h in hits.items() if h.best.confidence >= WEAK}
        by: dict[str, list[str]] = {}
        for c in strong:
            for victim in cats[c].suppresses:
                if victim in hits and victim != c:
                    by.setdefault(victim, []).append(c)
        rows: list[tuple[tuple[Any, ...], Diagnosis]] = []
        for c, hit in hits.items():
            base = min(0.99, hit.best.confidence + 0.02 * (len(hit.sigs) - 1))
            causes = sorted(by.get(c, []), key=lambda x: cats[x].rank)
            conf = base * 0.5 if causes else base
            d = _diagnosis(self.cat, hit, conf, causes, self.context)
            key = (bool(causes), base < WEAK, cats[c].rank, -conf, hit.first)
            rows.append((key, d))
        rows.sort(key=lambda r: r[0])
        out = [d for _, d in rows]
        named = [d for d in out if d.category != "gpu_error" and d.confidence >= WEAK / 2]
        if self.deaths_seen and not named:
            out = self._suspects() + out
        return out

    def _suspects(self) -> list[Diagnosis]:
        """An inconclusive, ranked answer: the suspects of the deaths seen, most likely first."""
        seen = sorted(self.deaths_seen.values(), key=lambda s: s.first)
        order: list[str] = []
        for s in seen:
            for c in s.death.suspects:
                if c not in order:
                    order.append(c)
        death = seen[0]
        evs = tuple(s.ev.frozen() for s in seen[:MAX_EVIDENCE_HEAD])
        out: list[Diagnosis] = []
        for i, c in enumerate(order):
            category = self.cat.categories[c]
            conf = SUSPECT_CONFIDENCE[min(i, len(SUSPECT_CONFIDENCE) - 1)]
            why = (
                f"Inconclusive: {death.death.meaning} The log does not name the cause; this is suspect "
                f"{i + 1} of {len(order)} ({', '.join(order)}), most likely first."
            )
            fixes = category.fixes
            out.append(
                Diagnosis(
                    c,
                    conf,
                    f"Suspected: {category.title}",
                    tuple(e.text for e in evs),
                    why + " " + category.explanation,
                    {"death": death.death.id, "suspect_rank": i + 1},
                    fixes,
                    category.confirm_in([e.text for e in evs]),
                    evs,
                    True,
                )
            )
        return out


GENERIC_ID = "cuda-error-generic"


def fill(template: str, facts: dict[str, Any]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(facts.get(m.group(1), "unknown")), template)


def _plain(sentence: str) -> str:
    return " ".join(re.sub(r"\s*\([^)]*\)", "", sentence).rstrip(".").split())


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
        # Two signatures for one line may say the same, one with an aside: "... cuDNN 8.0.4." and "... cuDNN 8.0.4
        # (the head of the line may be wrapped away)." The sentence is said once.
        if _plain(text) not in {_plain(m) for m in meanings}:
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
    return Diagnosis(
        hit.category,
        round(conf, 2),
        title,
        hit.evidence,
        explanation,
        facts,
        fixes,
        category.confirm_in(hit.evidence),
        tuple(e.frozen() for e in hit.evs),
    )


def finish(scanner: Scanner, facts: Facts | None, matrix: Matrix | None) -> list[Diagnosis]:
    """Rank the scanner's hits; cross-check them against `facts` when given. An inconclusive answer (a
    bare death) is settled from the machine's kernel log and cgroup when the doctor's probes read them."""
    from compat.explain.pins import pin_fixes

    diags = pin_fixes(scanner.diagnoses(), matrix)
    if facts is None or not diags:
        return diags
    if diags[0].suspected:
        diags = settle_suspects(diags, facts.probes)
    from compat.explain.crosscheck import cross_check

    return cross_check(diags, facts, matrix)
