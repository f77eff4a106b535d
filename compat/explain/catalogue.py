"""The crash-signature catalogue (matrix/signatures.yaml): validation, loading and compiled regexes.

The model (Catalogue, Signature, ...) lives in compat.explain.signature; matrix/error_codes.yaml in
compat.explain.error_codes."""

from __future__ import annotations

import datetime as _dt
import re
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
from compat.matrixfiles import register_side_file

FILE = "signatures.yaml"


# ------------------------------------------------------------------ validation


def _fixes(raw: Any, where: str, problems: list[str]) -> tuple[Fix, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(f"{where}: 'fixes' must be a list of {{text, command}}")
        return ()
    out = []
    for i, f in enumerate(raw):
        if not isinstance(f, dict) or not isinstance(f.get("text"), str) or not f["text"].strip():
            problems.append(f"{where}: fixes[{i}] needs a non-empty 'text'")
            continue
        cmd = f.get("command")
        if cmd is not None and not isinstance(cmd, str):
            problems.append(f"{where}: fixes[{i}].command must be a string")
            cmd = None
        unknown = set(f) - {"text", "command", "kind"}
        if unknown:
            problems.append(f"{where}: fixes[{i}] has unknown keys {sorted(unknown)}")
        kind = f.get("kind", "")
        if kind not in ("", "shell", "python", "config", "manual"):
            problems.append(f"{where}: fixes[{i}].kind must be shell, python, config or manual")
            kind = ""
        out.append(Fix(f["text"].strip(), cmd.strip() if cmd else None, kind))
    return tuple(out)


def _category(name: str, row: Any, problems: list[str]) -> Category | None:
    where = f"categories.{name}"
    if not isinstance(row, dict):
        problems.append(f"{where}: must be a mapping")
        return None
    for key in ("title", "explanation"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            problems.append(f"{where}: missing '{key}'")
    rank = row.get("rank")
    if not isinstance(rank, int) or isinstance(rank, bool):
        problems.append(f"{where}: 'rank' must be an integer")
        rank = 99
    sup = row.get("suppresses") or []
    if not isinstance(sup, list) or not all(isinstance(s, str) for s in sup):
        problems.append(f"{where}: 'suppresses' must be a list of category names")
        sup = []
    for s in sup:
        if s not in CATEGORIES:
            problems.append(f"{where}: suppresses unknown category {s!r}")
        if s == name:
            problems.append(f"{where}: a category cannot suppress itself")
    fixes = _fixes(row.get("fixes"), where, problems)
    if not fixes:
        problems.append(f"{where}: needs at least one fix")
    confirm = _fixes([row["confirm"]], f"{where}.confirm", problems) if "confirm" in row else ()
    if confirm and not confirm[0].command:
        problems.append(f"{where}: 'confirm' needs a command")
    confirm_for: list[tuple[str, Fix]] = []
    raw_for = row.get("confirm_for") or {}
    if not isinstance(raw_for, dict):
        problems.append(f"{where}: 'confirm_for' must map a framework to a confirm command")
        raw_for = {}
    for fw, raw in raw_for.items():
        if fw not in FRAMEWORK_WORDS:
            problems.append(
                f"{where}.confirm_for: unknown framework {fw!r} (one of {sorted(FRAMEWORK_WORDS)})"
            )
            continue
        got = _fixes([raw], f"{where}.confirm_for.{fw}", problems)
        if got and not got[0].command:
            problems.append(f"{where}.confirm_for.{fw}: needs a command")
        elif got:
            confirm_for.append((fw, got[0]))
    confirm_for.sort(key=lambda p: list(FRAMEWORK_WORDS).index(p[0]))
    unknown = set(row) - {"title", "explanation", "rank", "suppresses", "fixes", "confirm", "confirm_for"}
    if unknown:
        problems.append(f"{where}: unknown keys {sorted(unknown)}")
    return Category(
        name,
        str(row.get("title", "")).strip(),
        " ".join(str(row.get("explanation", "")).split()),
        rank,
        frozenset(sup),
        fixes,
        confirm[0] if confirm else None,
        tuple(confirm_for),
    )


_ROW_KEYS = {
    "id",
    "category",
    "keywords",
    "pattern",
    "confidence",
    "meaning",
    "title",
    "set_facts",
    "fixes",
    "examples",
    "source",
}


def _signature(row: Any, where: str, problems: list[str], *, extractor: bool) -> Signature | None:
    if not isinstance(row, dict):
        problems.append(f"{where}: must be a mapping")
        return None
    n0 = len(problems)
    sid = row.get("id")
    if not isinstance(sid, str) or not re.match(r"^[a-z0-9][a-z0-9.-]*$", sid):
        problems.append(f"{where}: 'id' must be a lower-case slug, got {sid!r}")
        sid = "?"
    where = f"{where} ({sid})"
    unknown = set(row) - _ROW_KEYS
    if unknown:
        problems.append(f"{where}: unknown keys {sorted(unknown)}")
    category = row.get("category")
    if extractor:
        if category is not None:
            problems.append(f"{where}: extractors have no category")
    elif category not in CATEGORIES:
        problems.append(f"{where}: unknown category {category!r} (expected one of {', '.join(CATEGORIES)})")
    kws = row.get("keywords")
    if not isinstance(kws, list) or not kws or not all(isinstance(k, str) and k.strip() for k in kws):
        problems.append(f"{where}: 'keywords' must be a non-empty list of strings")
        kws = []
    for k in kws:
        if k != k.lower():
            problems.append(f"{where}: keyword {k!r} must be lower-case")
    pattern = row.get("pattern")
    regex: re.Pattern[str] | None = None
    if not isinstance(pattern, str) or not pattern:
        problems.append(f"{where}: missing 'pattern'")
    else:
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            problems.append(f"{where}: pattern does not compile: {exc}")
    set_facts = row.get("set_facts") or {}
    if not isinstance(set_facts, dict) or not all(isinstance(v, str) for v in set_facts.values()):
        problems.append(f"{where}: 'set_facts' must map fact names to strings")
        set_facts = {}
    names: set[str] = set(set_facts)
    if regex is not None:
        for g in regex.groupindex:
            name, _, conv = g.partition("__")
            names.add(name)
            if conv and conv not in CONVERTERS:
                problems.append(
                    f"{where}: group {g!r} uses unknown converter {conv!r} "
                    f"(known: {', '.join(sorted(CONVERTERS))})"
                )
    for n in sorted(names - FACT_NAMES):
        problems.append(f"{where}: unknown fact {n!r}")
    conf = row.get("confidence", 1.0 if extractor else None)
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 < float(conf) <= 1.0:
        problems.append(f"{where}: 'confidence' must be a number in (0, 1]")
        conf = 0.5
    meaning = row.get("meaning", "")
    if not extractor and (not isinstance(meaning, str) or not meaning.strip()):
        problems.append(f"{where}: missing 'meaning'")
        meaning = ""
    for ph in re.findall(r"\{(\w+)\}", str(meaning)):
        if ph not in names:
            problems.append(f"{where}: meaning uses {{{ph}}}, which the row never extracts")
    title = row.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        problems.append(f"{where}: 'title' must be a non-empty string")
    src = row.get("source")
    if not isinstance(src, str) or not src.startswith(("http://", "https://")):
        problems.append(f"{where}: missing 'source' URL")
    fixes = _fixes(row.get("fixes"), where, problems)
    examples = row.get("examples")
    if not isinstance(examples, list) or not examples or not all(isinstance(e, str) for e in examples):
        problems.append(f"{where}: 'examples' must be a non-empty list of real log lines")
        examples = []
    for e in examples:
        low = e.lower()
        if kws and not any(k in low for k in kws):
            problems.append(f"{where}: example {e[:60]!r} contains none of the keywords")
        if regex is not None and regex.search(e) is None:
            problems.append(f"{where}: example {e[:60]!r} does not match the pattern")
    if len(problems) > n0 or regex is None:
        return None
    return Signature(
        sid,
        None if extractor else str(category),
        tuple(k for k in kws),
        regex,
        float(conf),
        " ".join(str(meaning).split()),
        title.strip() if isinstance(title, str) else None,
        dict(set_facts),
        fixes,
        str(src),
    )


def _build(doc: Any) -> tuple[Catalogue | None, list[str]]:
    problems: list[str] = []
    if not isinstance(doc, dict):
        return None, ["the document must be a mapping with updated, categories and signatures"]
    upd = doc.get("updated")
    if isinstance(upd, _dt.date):
        updated = upd.isoformat()
    elif isinstance(upd, str) and re.match(r"^\d{4}-\d{2}-\d{2}$", upd):
        updated = upd
    else:
        problems.append("missing 'updated: YYYY-MM-DD'")
        updated = "unknown"
    unknown = set(doc) - {"updated", "categories", "signatures", "extractors", "deaths"}
    if unknown:
        problems.append(f"unknown top-level keys {sorted(unknown)}")
    cats_raw = doc.get("categories")
    cats: dict[str, Category] = {}
    if not isinstance(cats_raw, dict):
        problems.append("'categories' must be a mapping of category name to its description")
        cats_raw = {}
    for name in CATEGORIES:
        if name not in cats_raw:
            problems.append(f"categories: missing {name!r}")
    for name, row in cats_raw.items():
        if name not in CATEGORIES:
            problems.append(f"categories: unknown category {name!r} (the names are fixed)")
            continue
        c = _category(name, row, problems)
        if c is not None:
            cats[name] = c
    sigs: list[Signature] = []
    extractors: list[Signature] = []
    ids: set[str] = set()
    for section, target, is_extr in (("signatures", sigs, False), ("extractors", extractors, True)):
        rows = doc.get(section, [] if is_extr else None)
        if not isinstance(rows, list) or (not rows and not is_extr):
            problems.append(f"'{section}' must be a non-empty list")
            continue
        for i, row in enumerate(rows):
            s = _signature(row, f"{section}[{i}]", problems, extractor=is_extr)
            if s is None:
                continue
            if s.id in ids:
                problems.append(f"{section}[{i}] ({s.id}): duplicate id")
                continue
            ids.add(s.id)
            target.append(s)
    deaths = _deaths(doc.get("deaths", []), ids, problems)
    for name in CATEGORIES:
        if cats_raw and not any(s.category == name for s in sigs) and name in cats:
            problems.append(f"categories.{name}: no signature uses this category")
    if problems:
        return None, problems
    words = {k for s in sigs + extractors for k in s.keywords} | {k for d in deaths for k in d.keywords}
    prefilter = re.compile(trie_pattern(words))
    return Catalogue(updated, cats, tuple(sigs), tuple(extractors), prefilter, deaths), []


_DEATH_KEYS = {"id", "keywords", "pattern", "suspects", "meaning", "examples", "source"}


def _deaths(rows: Any, ids: set[str], problems: list[str]) -> tuple[Death, ...]:
    """The `deaths:` section: lines that show a death without naming its cause, with ranked suspects."""
    if not isinstance(rows, list):
        problems.append("'deaths' must be a list")
        return ()
    out: list[Death] = []
    for i, row in enumerate(rows):
        where = f"deaths[{i}]"
        if not isinstance(row, dict):
            problems.append(f"{where}: must be a mapping")
            continue
        n0 = len(problems)
        did = row.get("id")
        if not isinstance(did, str) or not re.match(r"^[a-z0-9][a-z0-9.-]*$", did) or did in ids:
            problems.append(f"{where}: 'id' must be a new lower-case slug, got {did!r}")
            did = "?"
        where = f"{where} ({did})"
        if set(row) - _DEATH_KEYS:
            problems.append(f"{where}: unknown keys {sorted(set(row) - _DEATH_KEYS)}")
        kws = row.get("keywords")
        if (
            not isinstance(kws, list)
            or not kws
            or not all(isinstance(k, str) and k and k == k.lower() for k in kws)
        ):
            problems.append(f"{where}: 'keywords' must be a non-empty list of lower-case strings")
            kws = []
        regex: re.Pattern[str] | None = None
        try:
            regex = re.compile(str(row.get("pattern") or ""), re.IGNORECASE) if row.get("pattern") else None
        except re.error as exc:
            problems.append(f"{where}: pattern does not compile: {exc}")
        if regex is None and not any(p.startswith(where) and "compile" in p for p in problems[n0:]):
            problems.append(f"{where}: missing 'pattern'")
        sus = row.get("suspects")
        if not isinstance(sus, list) or not sus or any(x not in CATEGORIES for x in sus):
            problems.append(f"{where}: 'suspects' must list known categories, most likely first")
            sus = []
        meaning = row.get("meaning")
        if not isinstance(meaning, str) or not meaning.strip():
            problems.append(f"{where}: missing 'meaning'")
        src = row.get("source")
        if not isinstance(src, str) or not src.startswith(("http://", "https://")):
            problems.append(f"{where}: missing 'source' URL")
        examples = row.get("examples")
        if not isinstance(examples, list) or not examples:
            problems.append(f"{where}: 'examples' must be a non-empty list of real log lines")
            examples = []
        for e in examples:
            if regex is not None and (not isinstance(e, str) or regex.search(e) is None):
                problems.append(f"{where}: example {str(e)[:60]!r} does not match the pattern")
            elif kws and not any(k in str(e).lower() for k in kws):
                problems.append(f"{where}: example {str(e)[:60]!r} contains none of the keywords")
        if len(problems) > n0 or regex is None:
            continue
        ids.add(did)
        out.append(Death(did, tuple(kws), regex, tuple(sus), " ".join(str(meaning).split()), str(src)))
    return tuple(out)


def validate_document(doc: Any) -> list[str]:
    """Every problem in a signatures.yaml document (empty when valid); registered in compat.matrix."""
    return _build(doc)[1]


register_side_file(FILE, validate_document)


def load_catalogue(doc: Any) -> Catalogue:
    """Compile a signatures document; MatrixError listing every problem when it does not validate."""
    cat, problems = _build(doc)
    if cat is None:
        raise MatrixError([f"{FILE}: {p}" for p in problems])
    return cat


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
