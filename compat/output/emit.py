"""`emit(document, format, fail_on)`: the one place a command's result is written and its exit code decided."""

from __future__ import annotations

import sys
from typing import IO, Optional

from compat.errors import InputError
from compat.output import FORMATS
from compat.output.documents import Document


def render(document: Document, fmt: str, stream: IO[str]) -> str:
    """`document` as the text of `fmt` (`stream` decides colour for the text format)."""
    if fmt == "text":
        return document.text(stream)
    if fmt == "json":
        from compat.render import dumps

        return dumps(document.to_json()) + "\n"
    if fmt == "markdown":
        from compat.output.markdown import render_markdown

        return render_markdown(document)
    if fmt == "sarif":
        from compat.output.sarif import render_sarif

        return render_sarif(document)
    if fmt == "github":
        from compat.output.github import render_github

        return render_github(document)
    raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def emit(
    document: Document, fmt: str = "text", fail_on: str = "error", stream: Optional[IO[str]] = None
) -> int:
    """Write `document` in `fmt` (one document alone on stdout) and return the exit code for `fail_on`."""
    out = stream or sys.stdout
    out.write(render(document, fmt, out))
    return document.exit_code(fail_on)
