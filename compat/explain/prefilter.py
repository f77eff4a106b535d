"""The byte-level pre-filter: every keyword start in lower-cased bytes (Aho-Corasick when the `fast` extra
is installed, else one trie-shaped regex)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from compat.explain.signature import trie_pattern

_ac: Any
try:  # optional: the `fast` extra (a Rust Aho-Corasick); the pure-Python trie regex below is the fallback
    import ahocorasick_rs

    _ac = ahocorasick_rs
except ImportError:  # pragma: no cover - depends on the environment
    _ac = None


class Prefilter:
    """Finds the start of every keyword in lower-cased bytes: Aho-Corasick (ahocorasick_rs) when installed,
    else one trie-shaped regex over bytes. Keywords are matched as their UTF-8 bytes."""

    def __init__(self, words: frozenset[str], *, pure: bool = False) -> None:
        raw = sorted({w.encode("utf-8") for w in words if w})
        self.kind = "regex"
        self._ac: Any = None
        if _ac is not None and not pure and raw:
            self._ac = _ac.BytesAhoCorasick(
                raw, matchkind=_ac.MatchKind.LeftmostLongest, implementation=_ac.Implementation.DFA
            )
            self.kind = "aho-corasick"
        # latin-1 maps each byte to one character and back, so the str trie becomes a bytes regex
        self._re = re.compile(trie_pattern([w.decode("latin-1") for w in raw]).encode("latin-1"))

    def starts(self, low: bytes | memoryview) -> Iterator[int]:
        if self._ac is not None:
            for _, s, _ in self._ac.find_matches_as_indexes(low):
                yield s
        else:
            for m in self._re.finditer(low):
                yield m.start()


_PREFILTERS: dict[tuple[frozenset[str], bool], Prefilter] = {}


def prefilter_for(words: frozenset[str], *, pure: bool = False) -> Prefilter:
    key = (words, pure)
    if key not in _PREFILTERS:
        _PREFILTERS[key] = Prefilter(words, pure=pure)
    return _PREFILTERS[key]


ScanTables = tuple[dict[str, list[Any]], dict[str, list[Any]], dict[str, int], dict[str, list[str]]]


def scan_tables(catalogue: Any) -> ScanTables:
    """What every Scanner of `catalogue` looks up: keyword -> signature rows, keyword -> deaths, each row's order,
    and each keyword's prefix closure (the trie finds the longest keyword at a position; shorter keywords that
    are its prefixes, "pytorch was compiled" in "pytorch was compiled against", come with it). Built once per
    catalogue (the closure is quadratic in the keywords) and kept on the frozen catalogue object."""
    cached: ScanTables | None = catalogue.__dict__.get("_scan_tables")
    if cached is not None:
        return cached
    rows: dict[str, list[Any]] = {}
    for sig in catalogue.all_rows:
        for k in sig.keywords:
            rows.setdefault(k, []).append(sig)
    deaths: dict[str, list[Any]] = {}
    for d in catalogue.deaths:
        for k in d.keywords:
            deaths.setdefault(k, []).append(d)
    order = {sig.id: i for i, sig in enumerate(catalogue.all_rows)}
    kws = set(rows) | set(deaths)
    closure = {w: [k for k in kws if w.startswith(k)] for w in kws}
    tables: ScanTables = (rows, deaths, order, closure)
    object.__setattr__(catalogue, "_scan_tables", tables)  # derived data on a frozen object: set once
    return tables
