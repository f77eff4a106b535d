"""The one output layer: document objects, `emit(document, format, fail_on)` and the renderers.

Every command that prints a result builds a document (`compat.output.documents`) whose `to_json()` is the public
JSON contract, then calls `emit`, which writes it as text, json, markdown, sarif or github (Actions workflow
commands) and returns the exit code. `compat.schema_version.SCHEMA_VERSION` is the one `schema_version` every document carries; the JSON
Schemas of the documents ship in `compat/schema/`.

This module stays light (`import compat` must not pull in renderers): everything else is imported on use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

FORMATS = ("text", "json", "markdown", "sarif", "github")
"""The values of `--format` (`--json` is an alias of `--format json`)."""

if TYPE_CHECKING:
    from compat.output.documents import Document


def emit(document: Document, fmt: str = "text", fail_on: str = "error", **kw: Any) -> int:
    """Write `document` in `fmt` on stdout and return the exit code (see `compat.output.emit.emit`)."""
    from compat.output.emit import emit as _emit

    return _emit(document, fmt, fail_on, **kw)


__all__ = ["FORMATS", "emit"]
