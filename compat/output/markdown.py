"""Markdown: a readable report (summary table, findings with their fixes, the full document in <details>)."""

from __future__ import annotations

from typing import Any

from compat.output.documents import Document, Item

_MARK = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def _cell(text: str) -> str:
    """Text safe inside a table cell: no pipe, no newline."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _inline(text: str) -> str:
    """One paragraph of untrusted text: no raw HTML, no heading or fence started by the text itself."""
    return " ".join(str(text).split()).replace("<", "&lt;").replace(">", "&gt;")


def _fence(body: str, lang: str = "") -> list[str]:
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return [f"{ticks}{lang}", body, ticks]


def _item(i: Item) -> list[str]:
    loc = ""
    if i.file:
        loc = f" — `{_inline(i.file)}{':' + str(i.line) if i.line is not None else ''}`"
    elif i.line is not None:
        loc = f" — line {i.line}"
    lines = [f"### {_MARK.get(i.severity, '')} {i.severity}: {_inline(i.title)}{loc}", "", f"`{i.id}`", ""]
    if i.message:
        lines += [_inline(i.message), ""]
    for text, command in i.fixes:
        lines.append(f"**Fix:** {_inline(text)}")
        lines.append("")
        if command:
            lines += _fence(command, "sh")
            lines.append("")
    return lines


def generic_markdown(document: Document) -> str:
    from compat.render import dumps

    out = [f"# {_inline(document.title)}", "", "| | |", "|---|---|"]
    out += [f"| {_cell(k)} | {_cell(v)} |" for k, v in document.summary()]
    out.append("")
    items = document.items()
    if items:
        out += ["## Findings", ""]
        for i in items:
            out += _item(i)
    else:
        out += ["No findings.", ""]
    out += ["<details><summary>Details (JSON)</summary>", ""]
    out += _fence(dumps(document.to_json()), "json")
    out += ["", "</details>", ""]
    return "\n".join(out)


def _doctor_hook() -> Any:
    """`compat.report_markdown.doctor_markdown` when that module exists (the doctor's own report), else None."""
    import importlib

    try:
        module = importlib.import_module("compat.report_markdown")
    except ModuleNotFoundError as exc:
        if exc.name != "compat.report_markdown":
            raise
        return None
    return getattr(module, "doctor_markdown", None)


def render_markdown(document: Document) -> str:
    if document.kind == "doctor":
        hook = _doctor_hook()
        if hook is not None:
            text = str(hook(document.to_json(), redact=False))
            return text if text.endswith("\n") else text + "\n"
    return generic_markdown(document)
