"""The document of `compat suggest` and its text: the framework releases to install here, with the commands."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import IO, Any, Optional

from compat._valueclass import valueclass
from compat.errors import EXIT_OK
from compat.output.documents import Document, Item
from compat.suggest import Suggestion


def render_suggestion(s: Suggestion) -> str:
    """The text of `compat suggest`: each framework's pick with its command, then what blocks newer releases."""
    lines = []
    for name, pick in (("PyTorch", s.torch), ("TensorFlow", s.tensorflow), ("JAX", s.jax)):
        key = {"PyTorch": "torch", "TensorFlow": "tensorflow", "JAX": "jax"}[name]
        if name == "JAX" and pick is None and key not in s.unavailable:
            continue
        if pick is None:
            lines.append(f"{name}: no release works here — {s.unavailable.get(key, 'unknown')}")
            if key in s.manual:
                lines.append(f"  {s.manual[key]}")
            continue
        lines.append(
            f"{name} {pick.version}" + (f" ({pick.variant})" if pick.variant else "") + f": {pick.reason}"
        )
        lines.append(f"  $ {pick.command}")
        for w in pick.warnings:
            lines.append(f"  (compat check warns: {w})")
    if s.blocked:
        lines.append("")
        lines.append("What blocks anything newer:")
        for b in s.blocked:
            lines.append(f"  - {b['what']}: {b['why']}")
    return "\n".join(lines) + "\n"


@valueclass(frozen=False)
class SuggestionDocument(Document):
    """`compat suggest`: the framework releases to install here, with the commands."""

    suggestion: Suggestion
    facts: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "suggestion"
    title: str = "compat suggest"
    interpreter: Optional[Mapping[str, Any]] = None
    """The environment whose Python version was used (JSON key `interpreter`, and the text's first line)."""

    def to_json(self) -> dict[str, Any]:
        doc = self.suggestion.to_json()
        doc["facts"] = dict(self.facts)
        if self.interpreter is not None:
            doc["interpreter"] = dict(self.interpreter)
        return doc

    def text(self, stream: IO[str]) -> str:
        from compat._text import sanitize
        from compat.target import header_line

        head = "" if self.interpreter is None else sanitize(header_line(dict(self.interpreter))) + "\n"
        return head + render_suggestion(self.suggestion)

    def items(self) -> list[Item]:
        doc = self.suggestion.to_json()
        out = []
        for fw in ("torch", "tensorflow", "jax"):
            pick = doc.get(fw)
            if isinstance(pick, Mapping):
                cmd = pick.get("command")
                out.append(
                    Item(
                        f"suggest.{fw}",
                        "info",
                        f"{fw} {pick.get('version')}",
                        str(pick.get("reason") or ""),
                        fixes=((f"install {fw} {pick.get('version')}", cmd),) if cmd else (),
                    )
                )
            elif fw in doc.get("unavailable", {}):
                out.append(Item(f"suggest.{fw}", "warning", f"no {fw} release", doc["unavailable"][fw]))
        return out

    def verdict(self) -> str:
        return "ok"

    def summary(self) -> list[tuple[str, str]]:
        doc = self.suggestion.to_json()
        return [
            (fw, str(doc[fw].get("version")) if isinstance(doc.get(fw), Mapping) else "-")
            for fw in ("torch", "tensorflow", "jax")
        ]

    def exit_code(self, fail_on: str) -> int:
        return EXIT_OK
