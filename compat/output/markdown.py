"""Markdown: a readable report (summary table, findings with their fixes, the full document in <details>)."""

from __future__ import annotations

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


def render_markdown(document: Document) -> str:
    if document.kind == "doctor":  # the doctor's own report (also `compat report`)
        from compat.report_markdown import doctor_markdown

        text = doctor_markdown(document.to_json(), redact=False)
        return text if text.endswith("\n") else text + "\n"
    return generic_markdown(document)
