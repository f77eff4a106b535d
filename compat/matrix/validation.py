"""Validation helpers shared by the core files' parsers (parse_nvidia, parse_frameworks): every problem is collected, none raised."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from typing import Any

from compat.errors import InputError
from compat.matrix.rows import NA, OSES
from compat.versions import parse_driver


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, msg: str) -> None:
        self.items.append(f"{where}: {msg}")


def row_where(file: str, section: str, i: int, row: Any, key: str = "version") -> str:
    label = ""
    if isinstance(row, dict):
        val = row.get(key)
        if val is not None:
            label = f" ({val})"
    return f"{file}: {section}[{i}]{label}"


def str_field(
    row: Mapping[str, Any], key: str, where: str, p: Problems, *, required: bool = True
) -> str | None:
    if key not in row or row[key] is None:
        if required:
            p.add(where, f"missing '{key}'")
        return None
    val = row[key]
    if not isinstance(val, str):
        p.add(where, f"'{key}' must be a quoted string, got {type(val).__name__} {val!r}")
        return None
    return val


def parse_field(parse: Callable[[str], Any], val: str | None, where: str, key: str, p: Problems) -> Any:
    if val is None:
        return None
    try:
        return parse(val)
    except InputError as exc:
        p.add(where, f"'{key}': {exc}")
        return None


def source_field(row: Mapping[str, Any], where: str, p: Problems) -> str:
    src = row.get("source")
    if not isinstance(src, str) or not src.strip():
        p.add(where, "missing 'source' (every row cites its official source)")
        return ""
    return src


def drivers_field(row: Mapping[str, Any], key: str, where: str, p: Problems) -> dict[str, str | None]:
    val = row.get(key)
    if not isinstance(val, dict):
        p.add(where, f"'{key}' must be a mapping with linux/windows")
        return {o: None for o in OSES}
    out: dict[str, str | None] = {}
    for o in OSES:
        d = val.get(o)
        if d is None:
            out[o] = None
            continue
        if not isinstance(d, str):
            p.add(where, f"'{key}.{o}' must be a quoted string, got {d!r}")
            out[o] = None
            continue
        out[o] = d if parse_field(parse_driver, d, where, f"{key}.{o}", p) is not None else None
    for extra in set(val) - set(OSES):
        p.add(where, f"'{key}' has unknown OS {extra!r}")
    return out


def section_rows(doc: Any, file: str, section: str, p: Problems) -> list[Any]:
    if not isinstance(doc, dict):
        p.add(file, "top level must be a mapping")
        return []
    rows = doc.get(section)
    if not isinstance(rows, list):
        p.add(file, f"missing list '{section}'")
        return []
    return rows


def updated_date(doc: Any, file: str, p: Problems) -> _dt.date | None:
    if not isinstance(doc, dict):
        return None
    val = doc.get("updated")
    if isinstance(val, _dt.date) and not isinstance(
        val, _dt.datetime
    ):  # a timestamp does not compare with dates
        return val
    if isinstance(val, str):
        try:
            return _dt.date.fromisoformat(val)
        except ValueError:
            pass
    p.add(file, "missing or malformed 'updated: YYYY-MM-DD'")
    return None


def _is_na(val: Any) -> bool:
    return val == NA or (isinstance(val, dict) and set(val) == {"na"} and isinstance(val["na"], str))


def _na_note(val: Any) -> str:
    return val["na"] if isinstance(val, dict) else "the source lists N/A"


def take_na(row: Mapping[str, Any], keys: tuple[str, ...], na: dict[str, str]) -> dict[str, Any]:
    """A copy of `row` whose N/A markers (at `keys`, dotted for one level: "min_driver.linux") are None,
    recording each in `na` as field -> note. The parsers then treat them as absent values."""
    out = dict(row)
    for key in keys:
        top, _, sub = key.partition(".")
        if not sub:
            if _is_na(out.get(top)):
                na[key] = _na_note(out[top])
                out[top] = None
        elif isinstance(out.get(top), dict) and _is_na(out[top].get(sub)):
            inner = dict(out[top])
            na[key] = _na_note(inner[sub])
            inner[sub] = None
            out[top] = inner
    return out
