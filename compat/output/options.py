"""`--format`, `--json`, `--fail-on`, `--select`, `--ignore` and the `[tool.compat]` table of the nearest
pyproject.toml: the same lists in both places, the command line wins.

    [tool.compat]
    select = ["driver", "cuda"]      # finding-id prefixes to report (default: all)
    ignore = ["known.", "gpu.thermal"]
    fail-on = "warning"              # error | warning
    format = "markdown"              # text | json | markdown | sarif | github

Selection uses `compat.selection.selected`, the one id-prefix rule (also the checks' and the guard's `ignore=`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Protocol, TypeVar

from compat._valueclass import valueclass
from compat.errors import InputError
from compat.output import FORMATS
from compat.selection import selected

if TYPE_CHECKING:
    from compat.findings import Report

FAIL_ON = ("error", "warning")
CONFIG_KEYS = ("select", "ignore", "fail-on", "format")


@valueclass
class OutputOptions:
    format: str = "text"
    fail_on: str = "error"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def split_ids(values: Iterable[str]) -> tuple[str, ...]:
    """Repeatable and comma-separated: ("a,b", "c") -> ("a", "b", "c")."""
    return tuple(p.strip() for v in values for p in str(v).split(",") if p.strip())


def find_pyproject(start: Optional[Path] = None) -> Optional[Path]:
    """The nearest pyproject.toml from `start` (default: the current folder) upwards."""
    try:
        here = (start or Path.cwd()).resolve()
    except OSError:  # the current folder was removed, or cannot be read: no configuration
        return None
    for d in (here, *here.parents):
        candidate = d / "pyproject.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # a folder on the way up that may not be searched
            return None
    return None


TOML_CACHE_FORMAT = 1


def _tool_compat(path: Path) -> Any:
    """The raw `tool.compat` value of a pyproject.toml (None when absent); InputError when it is not valid TOML.

    The parser's outcome for these exact bytes is kept in compat's cache (tomllib costs ~5 ms to import, on every
    command run in a project with a pyproject.toml); any edit is other bytes, so another key."""
    from compat import cache as cache_mod
    from compat.inputs import read_text

    text = read_text(str(path), "pyproject.toml")
    data = text.encode("utf-8", "surrogatepass")
    entry = os.path.join(
        cache_mod.cache_dir(),
        f"pyproject-{cache_mod.sha256(data).hexdigest()[:32]}-{sys.version_info[0]}{sys.version_info[1]}.bin",
    )
    doc = cache_mod.load(entry, TOML_CACHE_FORMAT)
    if doc is None or not isinstance(doc.get("error", 0), (str, type(None))) or "table" not in doc:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python < 3.11
            import tomli as tomllib
        try:
            tool = tomllib.loads(text).get("tool")
            doc = {"error": None, "table": tool.get("compat") if isinstance(tool, Mapping) else None}
        except tomllib.TOMLDecodeError as exc:
            doc = {"error": str(exc), "table": None}
        cache_mod.store(entry, TOML_CACHE_FORMAT, doc, family="pyproject-")  # dates: not kept
    if doc["error"] is not None:
        raise InputError(f"{path}: not valid TOML ({doc['error']})")
    return doc["table"]


def load_tool_config(start: Optional[Path] = None) -> dict[str, Any]:
    """`[tool.compat]` of the nearest pyproject.toml, validated (a bad value is a one-line error, exit 2)."""
    if os.environ.get("COMPAT_NO_CONFIG"):
        return {}
    path = find_pyproject(start)
    if path is None:
        return {}
    table = _tool_compat(path)
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise InputError(f"{path}: [tool.compat] must be a table")
    out: dict[str, Any] = {}
    for key in ("select", "ignore"):
        if key in table:
            v = table[key]
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise InputError(f"{path}: [tool.compat] {key} must be a list of finding-id prefixes")
            out[key] = split_ids(v)
    if "fail-on" in table:
        if table["fail-on"] not in FAIL_ON:
            raise InputError(f"{path}: [tool.compat] fail-on must be one of {', '.join(FAIL_ON)}")
        out["fail-on"] = table["fail-on"]
    if "format" in table:
        if table["format"] not in FORMATS:
            raise InputError(f"{path}: [tool.compat] format must be one of {', '.join(FORMATS)}")
        out["format"] = table["format"]
    return out


def output_options(
    fmt: Optional[str] = None,
    json_out: bool = False,
    fail_on: Optional[str] = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> OutputOptions:
    """The options in force: the command line, else `[tool.compat]`, else the defaults."""
    if fmt is not None and fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise InputError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if json_out and fmt not in (None, "json"):
        raise InputError(f"--json is --format json; it cannot go with --format {fmt}")
    cfg = load_tool_config()
    sel, ign = split_ids(select or ()), split_ids(ignore or ())
    return OutputOptions(
        format="json" if json_out else (fmt or cfg.get("format") or "text"),
        fail_on=fail_on or cfg.get("fail-on") or "error",
        select=sel or tuple(cfg.get("select") or ()),
        ignore=ign or tuple(cfg.get("ignore") or ()),
    )


def select_report(report: Report, opts: OutputOptions) -> Report:
    """The report with only the selected findings (the verdict follows)."""
    if not (opts.select or opts.ignore):
        return report
    report.findings[:] = [f for f in report.findings if selected(f.id, opts.select, opts.ignore)]
    return report


class Categorized(Protocol):
    """What `select_diagnoses` reads of a diagnosis (`compat.explain.diagnosis.Diagnosis`): its category."""

    @property
    def category(self) -> str: ...


D = TypeVar("D", bound=Categorized)


def _explain_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    return tuple(p if p == "explain" or p.startswith("explain.") else f"explain.{p}" for p in patterns)


def select_diagnoses(diags: Sequence[D], opts: OutputOptions) -> list[D]:
    """Diagnoses whose id `explain.<category>` (or bare category) is selected."""
    if not (opts.select or opts.ignore):
        return list(diags)
    sel, ign = _explain_patterns(opts.select), _explain_patterns(opts.ignore)
    return [d for d in diags if selected(f"explain.{d.category}", sel, ign)]


def select_node_doc(doc: Mapping[str, Any], opts: OutputOptions) -> Mapping[str, Any]:
    """A node's doctor report with only the selected findings, its verdict recomputed from them."""
    if not (opts.select or opts.ignore) or not isinstance(doc.get("findings"), list):
        return doc
    kept = [
        f
        for f in doc["findings"]
        if not isinstance(f, Mapping) or selected(str(f.get("id")), opts.select, opts.ignore)
    ]
    sev = {str(f.get("severity")) for f in kept if isinstance(f, Mapping)}
    verdict = "error" if "error" in sev else "warning" if "warning" in sev else "ok"
    return {**doc, "findings": kept, "verdict": verdict}


def select_nodes(inputs: Sequence[Any], opts: OutputOptions) -> list[Any]:
    """Fleet inputs (`NodeInput`) with each node's report filtered by `select_node_doc`."""
    if not (opts.select or opts.ignore):
        return list(inputs)
    return [
        dataclasses.replace(n, doc=select_node_doc(n.doc, opts)) if n.doc is not None else n for n in inputs
    ]
