"""SARIF 2.1.0: one run of the tool "compat"; file + line locations for file-based commands (dockerfile, compose,
k8s, explain on a file), a logical location otherwise. Validated against the OASIS schema in the tests."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from compat.output.documents import Document, Item

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str) -> str:
    """A file path as a SARIF artifact URI: relative stays relative (resolved against the repository by code
    scanning), absolute becomes file://."""
    p = PurePath(path)
    if p.is_absolute():
        return Path(path).as_uri()
    return quote(p.as_posix(), safe="/")


def _location(i: Item, document: Document) -> dict[str, Any]:
    if i.file:
        loc: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(i.file)}}
        if i.line is not None and i.line >= 1:
            loc["region"] = {"startLine": i.line}
        return {"physicalLocation": loc}
    return {"logicalLocations": [{"name": i.where or document.kind, "kind": "resource"}]}


def _text(i: Item) -> str:
    text = i.title if not i.message else f"{i.title}: {i.message}"
    for fix, command in i.fixes:
        text += f" Fix: {fix}" + (f" ($ {command})" if command else "")
    return text


def sarif_log(document: Document) -> dict[str, Any]:
    from compat.about import __version__

    items = document.items()
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for i in items:
        if i.id not in index:
            index[i.id] = len(rules)
            rules.append({"id": i.id, "shortDescription": {"text": i.title}})
    results = []
    for i in items:
        result: dict[str, Any] = {
            "ruleId": i.id,
            "ruleIndex": index[i.id],
            "level": _LEVEL.get(i.severity, "error"),
            "message": {"text": _text(i)},
            "locations": [_location(i, document)],
        }
        if i.fixes:
            result["properties"] = {"fixes": [{"text": t, "command": c} for t, c in i.fixes]}
        results.append(result)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "compat", "version": __version__, "rules": rules}},
        "results": results,
        "properties": {"document": document.kind, "verdict": document.verdict()},
    }
    if document.file:
        run["artifacts"] = [{"location": {"uri": artifact_uri(document.file)}}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(document: Document) -> str:
    from compat.render import dumps

    return dumps(sarif_log(document)) + "\n"
