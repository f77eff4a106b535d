"""The one output layer: the document protocol, `emit(document, format, fail_on)` and the renderers.

Every command that prints a result builds a document (`compat.output.documents.Document`; each stage owns the
document of its result) whose `to_json()` is the public JSON contract, then calls `compat.output.emit.emit`, which
writes it as text, json, markdown, sarif or github (Actions workflow commands) and returns the exit code.
`compat.schema_version.SCHEMA_VERSION` is the one `schema_version` every document carries; the JSON Schemas of the
documents ship in `compat/schema/`.

This module stays light (`import compat` must not pull in renderers): it holds only `FORMATS`.
"""

from __future__ import annotations

FORMATS = ("text", "json", "markdown", "sarif", "github")
"""The values of `--format` (`--json` is an alias of `--format json`)."""

__all__ = ["FORMATS"]
