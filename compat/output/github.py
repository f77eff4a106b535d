"""GitHub Actions workflow commands: `::error file=F,line=L,title=T::message`, one per finding."""

from __future__ import annotations

from compat.output.documents import Document

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    """A command's message, escaped as the Actions runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    """A property value (file, title): also ':' and ','."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(document: Document) -> str:
    lines = []
    for i in document.items():
        props = []
        if i.file:
            props.append(f"file={_prop(i.file)}")
            if i.line is not None:
                props.append(f"line={i.line}")
        props.append(f"title={_prop(f'{i.title} [{i.id}]')}")
        message = i.message or i.title
        for text, command in i.fixes:
            message += f"\nFix: {text}" + (f"\n  $ {command}" if command else "")
        lines.append(f"::{_LEVEL.get(i.severity, 'error')} {','.join(props)}::{_data(message)}")
    lines.append(f"{document.title}: {document.verdict()} ({len(document.items())} finding(s))")
    return "\n".join(lines) + "\n"
