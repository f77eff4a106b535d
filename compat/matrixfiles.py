"""The matrix's side files (signatures, error codes, images, driver branches, xid, jax): their registry and shapes.

A side file is owned by the module that reads it; that module declares the file's shape as data (the
constructors below), keeps the cross-field rules a shape cannot say as a small function, and registers both
at import with `register_side_file`. `compat.matrix.load_matrix(validate_extras=True)` runs whatever is
registered; the matrix never imports an owner (the entry layer imports them all for `compat matrix validate`).
This module stays out of the `compat.matrix` package on purpose: `compat.probes.health` registers xid.yaml
and is imported before the matrix on the doctor's path, so registering must not load the matrix.
Messages follow the core files' wording (compat.matrix.validation), every problem listed at once.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Shape = dict[str, Any]
"""A node of a side file's shape: {"type": "str" | "int" | "number" | "date" | "list" | "map" | "any",
…the type's options}. Plain data, built with the constructors below."""
Rules = Callable[[Any], list[str]]
"""A side file's cross-field rules: the problems its shape cannot say. They run on any mapping, whatever its
shape problems, so they check the types they rely on (and leave reporting them to the shape)."""


# ------------------------------------------------------------------ shapes (data)


def text(
    *,
    pattern: str | None = None,
    form: str = "",
    enum: Iterable[str] | None = None,
    blank: bool = False,
    lower: bool = False,
) -> Shape:
    """A quoted string: matching `pattern` (described as `form`), one of `enum`, non-blank unless `blank`."""
    return {
        "type": "str",
        "pattern": pattern,
        "form": form,
        "enum": tuple(enum) if enum is not None else None,
        "blank": blank,
        "lower": lower,
    }


def url() -> Shape:
    """The https URL a row was read from."""
    return text(pattern=r"^https://\S+$", form="an https URL")


def integer(*, gt: int | None = None, ge: int | None = None, le: int | None = None) -> Shape:
    return {"type": "int", "gt": gt, "ge": ge, "le": le}


def number(*, gt: float | None = None, ge: float | None = None, le: float | None = None) -> Shape:
    return {"type": "number", "gt": gt, "ge": ge, "le": le}


def anything() -> Shape:
    """Any value (a cross-field rule checks it)."""
    return {"type": "any", "enum": None}


def items(
    of: Shape, *, nonempty: bool = False, label: tuple[str, ...] = (), unique: tuple[str, ...] = ()
) -> Shape:
    """A list; rows (mappings) are named `section[i] (label values)`, and `unique` keys may not repeat."""
    return {"type": "list", "items": of, "nonempty": nonempty, "label": label, "unique": unique}


def mapping(
    fields: Mapping[str, Shape] | None = None,
    *,
    required: Iterable[str] = (),
    closed: bool = False,
    values: Shape | None = None,
    what: str = "",
) -> Shape:
    """A mapping with known `fields` (`closed`: no other keys; `what` names an unknown key in the message), or
    any keys with `values` of one shape."""
    return {
        "type": "map",
        "fields": dict(fields or {}),
        "required": tuple(required),
        "closed": closed,
        "values": values,
        "what": what,
    }


def document(fields: Mapping[str, Shape], *, required: Iterable[str] = (), closed: bool = False) -> Shape:
    """A side file: a mapping with `updated: YYYY-MM-DD` and its sections."""
    return mapping({"updated": {"type": "date"}, **fields}, required=("updated", *required), closed=closed)


# ------------------------------------------------------------------ the walker

_A = {
    "str": "a quoted string",
    "int": "an integer",
    "number": "a number",
    "date": "a date YYYY-MM-DD",
    "list": "a list",
    "map": "a mapping",
}


def shown(val: Any, limit: int = 60) -> str:
    """A value as a message shows it, bounded whatever its size: a YAML alias bomb's repr never ends, and
    int's repr refuses over 4300 digits."""
    if isinstance(val, str):
        return repr(val[:limit]) + ("…" if len(val) > limit else "")
    if isinstance(val, int) and not isinstance(val, bool) and val.bit_length() > 4 * limit:
        return f"an integer of {val.bit_length()} bits"
    if isinstance(val, (list, tuple)):
        return f"[…] ({len(val)} items)" if val else "[]"
    if isinstance(val, Mapping):
        return f"{{…}} ({len(val)} keys)" if val else "{}"
    if val is None or isinstance(val, (bool, int, float, _dt.date)):
        return repr(val)
    return type(val).__name__


def _got(val: Any) -> str:
    return f"{type(val).__name__} {shown(val)}"


def _at(where: str, key: str) -> str:
    return f"{where}: '{key}'" if where else f"'{key}'"


def _range(node: Shape) -> str:
    gt, ge, le = node.get("gt"), node.get("ge"), node.get("le")
    low = f"({gt}" if gt is not None else f"[{ge}" if ge is not None else ""
    if low and le is not None:
        return f" in {low}, {le}]"
    if low:
        return f" {'>' if gt is not None else '≥'} {low[1:]}"
    return f" ≤ {le}" if le is not None else ""


def _in_range(node: Shape, val: float) -> bool:
    gt, ge, le = node.get("gt"), node.get("ge"), node.get("le")
    return (gt is None or val > gt) and (ge is None or val >= ge) and (le is None or val <= le)


def _is_date(val: Any) -> bool:
    """A YAML date, or its ISO text (a timestamp does not compare with dates)."""
    if isinstance(val, _dt.date):
        return not isinstance(val, _dt.datetime)
    if isinstance(val, str):
        try:
            _dt.date.fromisoformat(val)
        except ValueError:
            return False
        return True
    return False


def _scalar(node: Shape, val: Any, where: str, key: str, out: list[str]) -> None:
    kind = node["type"]
    at = _at(where, key)
    if kind == "any":
        if node["enum"] is not None and val not in node["enum"]:
            out.append(f"{at} must be one of {', '.join(map(str, node['enum']))}, got {shown(val)}")
        return
    if kind == "date":
        if not _is_date(val):
            out.append(f"{where + ': ' if where else ''}missing or malformed '{key}: YYYY-MM-DD'")
        return
    ok = {
        "str": isinstance(val, str),
        "int": isinstance(val, int) and not isinstance(val, bool),
        "number": isinstance(val, (int, float)) and not isinstance(val, bool),
    }[kind]
    if not ok:
        out.append(f"{at} must be {_A[kind]}{_range(node)}, got {_got(val)}")
    elif kind in ("int", "number") and not _in_range(node, val):
        out.append(f"{at} must be {_A[kind]}{_range(node)}, got {shown(val)}")
    elif kind == "str":
        if node.get("enum") is not None and val not in node["enum"]:
            out.append(f"{at} must be one of {', '.join(node['enum'])}, got {shown(val)}")
        elif not node.get("blank") and not val.strip():
            out.append(f"{at} must be a non-empty string")
        elif node.get("pattern") and not re.match(node["pattern"], val):
            out.append(f"{at} must be {node['form'] or 'well-formed'}, got {shown(val)}")
        elif node.get("lower") and val != val.lower():
            out.append(f"{at} must be lower-case, got {shown(val)}")


def _label(row: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    vals = [row[k] for k in keys if isinstance(row.get(k), (str, int, float))]
    return f" ({' '.join(v[:40] if isinstance(v, str) else shown(v) for v in vals)})" if vals else ""


def row_name(section: str, i: int, row: Mapping[str, Any], *keys: str) -> str:
    """`section[i] (label)`: how the walker names a row, for a file's rules to name it the same way."""
    return f"{section}[{i}]{_label(row, keys)}"


def _list(node: Shape, val: Any, where: str, key: str, out: list[str]) -> None:
    if not isinstance(val, list):
        what = "a non-empty list" if node["nonempty"] else "a list"
        out.append(f"{_at(where, key)} must be {what}, got {_got(val)}")
        return
    if node["nonempty"] and not val:
        out.append(f"{_at(where, key)} must be a non-empty list")
    inner = node["items"]
    seen: set[tuple[Any, ...]] = set()
    base = f"{where}.{key}" if where else key
    for i, item in enumerate(val):
        if inner["type"] != "map":
            _walk(inner, item, where, f"{key}[{i}]", out)
            continue
        here = f"{base}[{i}]"
        if not isinstance(item, Mapping):
            out.append(f"{here}: must be a mapping, got {_got(item)}")
            continue
        here += _label(item, node["label"])
        if node["unique"]:
            ident = tuple(item.get(k) for k in node["unique"])
            if all(isinstance(v, (str, int)) for v in ident):
                if ident in seen:
                    out.append(
                        f"{here}: duplicate {', '.join(node['unique'])} {', '.join(map(shown, ident))}"
                    )
                seen.add(ident)
        _fields(inner, item, here, out)


def _fields(node: Shape, val: Mapping[str, Any], where: str, out: list[str]) -> None:
    fields: dict[str, Shape] = node["fields"]
    for key in node["required"]:
        if val.get(key) is None:
            why = " (every row cites its official source)" if key == "source" else ""
            what = (
                f"or malformed '{key}: YYYY-MM-DD'"
                if fields.get(key, {}).get("type") == "date"
                else f"'{key}'"
            )
            out.append(f"{where + ': ' if where else ''}missing {what}{why}")
    unknown = [k for k in val if k not in fields] if node["closed"] else []
    if unknown and node["what"]:
        out.extend(f"{where + ': ' if where else ''}unknown {node['what']} {shown(k)}" for k in unknown)
    elif unknown:
        out.append(f"{where + ': ' if where else ''}unknown keys [{', '.join(sorted(map(shown, unknown)))}]")
    for key, sub in val.items():
        shape = fields.get(key, node["values"])
        if shape is not None and sub is not None:  # null is absent, as in the core files
            _walk(shape, sub, where, str(key), out)


def _walk(node: Shape, val: Any, where: str, key: str, out: list[str]) -> None:
    """Append to `out` every problem of `val`, the value at `key` of the node named `where` ("" at the top)."""
    kind = node["type"]
    if kind == "list":
        _list(node, val, where, key, out)
    elif kind == "map":
        inner = f"{where}.{key}" if where else key
        if not isinstance(val, Mapping):
            out.append(f"{_at(where, key)} must be a mapping, got {_got(val)}")
        else:
            _fields(node, val, inner, out)
    else:
        _scalar(node, val, where, key, out)


def problems(shape: Shape, doc: Any, rules: Rules | None = None) -> list[str]:
    """Every problem of a side-file document: its shape, then (on a mapping) its cross-field `rules`."""
    if not isinstance(doc, Mapping):
        return [f"top level must be a mapping, got {_got(doc)}"]
    out: list[str] = []
    _fields(shape, doc, "", out)
    if rules is not None:
        out.extend(rules(doc))
    return out


# ------------------------------------------------------------------ the registry

Validator = Callable[[Any], list[str]]
_REGISTERED: dict[str, Validator] = {}


def register_side_file(name: str, validate: Validator) -> None:
    """Register the validator of matrix file `name` (its owner calls this at import)."""
    _REGISTERED[name] = validate


def side_file_validators() -> dict[str, Validator]:
    """File name -> validator, for every side file whose owner has been imported."""
    return dict(_REGISTERED)
