"""The crash-signature catalogue (matrix/signatures.yaml): validation, loading and compiled regexes.

The model (Catalogue, Signature, ...) lives in compat.explain.signature; matrix/error_codes.yaml in
compat.explain.error_codes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compat.errors import InputError, MatrixError
from compat.explain.categories import CATEGORIES  # the root-cause categories (one copy)
from compat.explain.error_codes import CODES_FILE, with_codes
from compat.explain.signature import (
    CONVERTERS,
    FACT_NAMES,
    FRAMEWORK_WORDS,
    Catalogue,
    Category,
    Death,
    Signature,
    trie_pattern,
)
from compat.findings import Fix
from compat.matrixfiles import (
    Shape,
    document,
    integer,
    items,
    mapping,
    number,
    problems,
    register_side_file,
    row_name,
    shown,
    text,
    url,
)

FILE = "signatures.yaml"


# ------------------------------------------------------------------ the file's shape and rules

_SLUG = text(pattern=r"^[a-z0-9][a-z0-9.-]*$", form="a lower-case slug")
_FIX_FIELDS = {
    "text": text(),
    "command": text(),
    "kind": text(enum=("", "shell", "python", "config", "manual"), blank=True),
}
_FIX = mapping(_FIX_FIELDS, required=("text",), closed=True)
_CONFIRM = mapping(_FIX_FIELDS, required=("text", "command"), closed=True)
_CATEGORY = mapping(
    {
        "title": text(),
        "explanation": text(),
        "rank": integer(),
        "suppresses": items(text(enum=CATEGORIES)),
        "fixes": items(_FIX, nonempty=True),
        "confirm": _CONFIRM,
        "confirm_for": mapping(dict.fromkeys(FRAMEWORK_WORDS, _CONFIRM), closed=True, what="framework"),
    },
    required=("title", "explanation", "rank", "fixes"),
    closed=True,
)
_KEYWORDS = items(text(lower=True), nonempty=True)
_EXAMPLES = items(text(blank=True), nonempty=True)


def _row(*, extractor: bool) -> Shape:
    """A signature (its category, confidence and meaning required) or an extractor (no category)."""
    return mapping(
        {
            "id": _SLUG,
            **({} if extractor else {"category": text(enum=CATEGORIES)}),
            "keywords": _KEYWORDS,
            "pattern": text(),
            "confidence": number(gt=0, le=1),
            "meaning": text(),
            "title": text(),
            "set_facts": mapping(values=text(blank=True)),
            "fixes": items(_FIX),
            "examples": _EXAMPLES,
            "source": url(),
        },
        required=("id", "keywords", "pattern", "examples", "source")
        + (() if extractor else ("category", "confidence", "meaning")),
        closed=True,
    )


SHAPE = document(
    {
        "categories": mapping(
            dict.fromkeys(CATEGORIES, _CATEGORY), required=CATEGORIES, closed=True, what="category"
        ),
        "signatures": items(_row(extractor=False), nonempty=True, label=("id",)),
        "extractors": items(_row(extractor=True), label=("id",)),
        "deaths": items(
            mapping(
                {
                    "id": _SLUG,
                    "keywords": _KEYWORDS,
                    "pattern": text(),
                    "suspects": items(text(enum=CATEGORIES), nonempty=True),
                    "meaning": text(),
                    "examples": _EXAMPLES,
                    "source": url(),
                },
                required=("id", "keywords", "pattern", "suspects", "meaning", "examples", "source"),
                closed=True,
            ),
            label=("id",),
        ),
    },
    required=("categories", "signatures"),
    closed=True,
)
_SECTIONS = ("signatures", "extractors", "deaths")


def _regex(row: Mapping[str, Any], where: str, out: list[str]) -> re.Pattern[str] | None:
    pattern = row.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return None  # the shape reports it
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        out.append(f"{where}: pattern does not compile: {exc}")
        return None


def _row_rules(row: Mapping[str, Any], where: str, death: bool, out: list[str]) -> None:
    """A row's pattern compiles, names known facts and converters, and matches its own examples."""
    regex = _regex(row, where, out)
    if not death:
        facts = row.get("set_facts")
        names = set(facts) if isinstance(facts, Mapping) else set()
        for g in regex.groupindex if regex is not None else ():
            name, _, conv = g.partition("__")
            names.add(name)
            if conv and conv not in CONVERTERS:
                out.append(
                    f"{where}: group {g!r} uses unknown converter {conv!r} (known: {', '.join(sorted(CONVERTERS))})"
                )
        out.extend(f"{where}: unknown fact {shown(n)}" for n in sorted(names - FACT_NAMES, key=str))
        for ph in re.findall(r"\{(\w+)\}", meaning if isinstance(meaning := row.get("meaning"), str) else ""):
            if ph not in names:
                out.append(f"{where}: meaning uses {{{ph}}}, which the row never extracts")
    kws = row.get("keywords")
    kws = [k for k in kws if isinstance(k, str)] if isinstance(kws, list) else []
    examples = row.get("examples")
    for e in examples if isinstance(examples, list) else ():
        if not isinstance(e, str):
            continue  # the shape reports it
        if kws and not any(k in e.lower() for k in kws):
            out.append(f"{where}: example {e[:60]!r} contains none of the keywords")
        if regex is not None and regex.search(e) is None:
            out.append(f"{where}: example {e[:60]!r} does not match the pattern")


def _rules(doc: Mapping[str, Any]) -> list[str]:
    """What the shape cannot say: patterns against their examples, facts, ids unique over every section, and
    categories that suppress themselves or that no signature uses."""
    out: list[str] = []
    ids: set[str] = set()
    used: set[str] = set()
    for section in _SECTIONS:
        rows = doc.get(section)
        for i, row in enumerate(rows if isinstance(rows, list) else ()):
            if not isinstance(row, Mapping):
                continue
            where = row_name(section, i, row, "id")
            rid = row.get("id")
            if isinstance(rid, str):
                if rid in ids:
                    out.append(f"{where}: duplicate id {shown(rid)}")
                ids.add(rid)
            if section == "signatures" and isinstance(row.get("category"), str):
                used.add(row["category"])
            _row_rules(row, where, section == "deaths", out)
    cats = doc.get("categories")
    for name, row in cats.items() if isinstance(cats, Mapping) else ():
        if name not in CATEGORIES or not isinstance(row, Mapping):
            continue
        sup = row.get("suppresses")
        if isinstance(sup, list) and name in sup:
            out.append(f"categories.{name}: a category cannot suppress itself")
        if isinstance(doc.get("signatures"), list) and name not in used:
            out.append(f"categories.{name}: no signature uses this category")
    return out


def validate_document(doc: Any) -> list[str]:
    """Every problem in a signatures.yaml document (empty when valid)."""
    return problems(SHAPE, doc, _rules)


register_side_file(FILE, validate_document)


# ------------------------------------------------------------------ building a validated document


def _fix(row: Mapping[str, Any]) -> Fix:
    cmd = row.get("command")
    return Fix(str(row["text"]).strip(), cmd.strip() if cmd else None, str(row.get("kind") or ""))


def _category(name: str, row: Mapping[str, Any]) -> Category:
    confirm_for = row.get("confirm_for") or {}
    return Category(
        name,
        str(row["title"]).strip(),
        " ".join(str(row["explanation"]).split()),
        int(row["rank"]),
        frozenset(row.get("suppresses") or ()),
        tuple(_fix(f) for f in row["fixes"]),
        _fix(row["confirm"]) if row.get("confirm") else None,
        tuple((fw, _fix(confirm_for[fw])) for fw in FRAMEWORK_WORDS if confirm_for.get(fw)),
    )


def _signature(row: Mapping[str, Any], *, extractor: bool) -> Signature:
    title = row.get("title")
    return Signature(
        str(row["id"]),
        None if extractor else str(row["category"]),
        tuple(row["keywords"]),
        re.compile(row["pattern"], re.IGNORECASE),
        float(row.get("confidence", 1.0)),
        " ".join(str(row.get("meaning") or "").split()),
        title.strip() if isinstance(title, str) else None,
        dict(row.get("set_facts") or {}),
        tuple(_fix(f) for f in row.get("fixes") or ()),
        str(row["source"]),
    )


def _build(doc: Mapping[str, Any]) -> Catalogue:
    """The catalogue of a document that validated."""
    upd = doc["updated"]
    cats = {name: _category(name, doc["categories"][name]) for name in CATEGORIES}
    sigs = tuple(_signature(r, extractor=False) for r in doc["signatures"])
    extractors = tuple(_signature(r, extractor=True) for r in doc.get("extractors") or ())
    deaths = tuple(
        Death(
            str(r["id"]),
            tuple(r["keywords"]),
            re.compile(r["pattern"], re.IGNORECASE),
            tuple(r["suspects"]),
            " ".join(str(r["meaning"]).split()),
            str(r["source"]),
        )
        for r in doc.get("deaths") or ()
    )
    words = {k for s in sigs + extractors for k in s.keywords} | {k for d in deaths for k in d.keywords}
    return Catalogue(
        upd if isinstance(upd, str) else upd.isoformat(),
        cats,
        sigs,
        extractors,
        re.compile(trie_pattern(words)),
        deaths,
    )


def load_catalogue(doc: Any) -> Catalogue:
    """Compile a signatures document; MatrixError listing every problem when it does not validate."""
    found = validate_document(doc)
    if found:
        raise MatrixError([f"{FILE}: {p}" for p in found])
    return _build(doc)


_CACHE: dict[str, Catalogue] = {}


def default_catalogue(matrix: Any = None) -> Catalogue:
    """The catalogue of the matrix in use: `matrix.raw["signatures.yaml"]`, else the file read directly.

    `compat explain` must work even while a core matrix file is broken or missing, so when the full
    matrix cannot be loaded the signatures file is read on its own (same directory resolution).
    """
    if matrix is not None:
        doc = matrix.raw.get(FILE)
        if doc is None:
            raise InputError(f"the matrix in {matrix.directory} has no {FILE}")
        key = f"matrix:{matrix.directory}"
        if key not in _CACHE:
            _CACHE[key] = with_codes(load_catalogue(doc), matrix.raw.get(CODES_FILE))
        return _CACHE[key]
    from compat.matrix import get_matrix, resolve_matrix_dir

    try:
        return default_catalogue(get_matrix())
    except MatrixError:
        pass
    path = resolve_matrix_dir() / FILE
    return catalogue_from_file(path)


def catalogue_from_file(path: str | Path) -> Catalogue:
    """Load one signatures file (tests, and the fallback when the rest of the matrix does not load)."""
    p = Path(path)
    key = f"file:{p.resolve()}"
    if key in _CACHE:
        return _CACHE[key]
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the signature catalogue {str(p)!r}: {exc.strerror or exc}") from None
    import yaml

    from compat.matrix import load_yaml

    try:
        doc = load_yaml(text)  # refuses nesting deep enough to crash libyaml
    except yaml.YAMLError as exc:
        raise InputError(f"{str(p)!r} is not valid YAML: {str(exc).splitlines()[0]}") from None
    codes_doc = None
    codes = p.with_name(CODES_FILE)
    if codes.is_file():
        try:
            codes_doc = load_yaml(codes.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"{str(codes)!r} cannot be read: {str(exc).splitlines()[0]}") from None
    _CACHE[key] = with_codes(load_catalogue(doc), codes_doc)
    return _CACHE[key]
