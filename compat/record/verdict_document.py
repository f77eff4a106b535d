"""The document of `compat explain --last`: the verdict of the last recorded run (compat run / watch / notebook)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from compat._valueclass import valueclass
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK
from compat.output.documents import Document, Item, fix_pairs


@valueclass(frozen=False)
class RunVerdictDocument(Document):
    """`compat explain --last`: the verdict of the last recorded run (compat run / watch / notebook)."""

    doc: dict[str, Any]
    text_out: str = ""
    kind: str = "run-verdict"
    title: str = "compat explain --last"

    def to_json(self) -> dict[str, Any]:
        return self.doc

    def text(self, stream: IO[str]) -> str:
        return self.text_out

    def _verdict(self) -> Mapping[str, Any]:
        v = self.doc.get("verdict")
        return v if isinstance(v, Mapping) else {}

    def items(self) -> list[Item]:
        v = self._verdict()
        found = [f for f in v.get("findings") or [] if isinstance(f, Mapping)]
        if found:
            return [
                Item(
                    str(f.get("id")),
                    str(f.get("severity") or "error"),
                    str(f.get("title") or ""),
                    str(f.get("message") or ""),
                    fixes=fix_pairs(f.get("fixes") or []),
                    where=str(self.doc.get("record")),
                )
                for f in found
            ]
        if v.get("outcome") == "ok":
            return []
        cause = v.get("cause") or v.get("category") or v.get("outcome") or "failed"
        return [
            Item(
                f"run.{cause}",
                # "unknown": it ended and nothing recorded shows a failure (compat watch exits 0 for it)
                "info" if v.get("outcome") == "unknown" else "error",
                str(v.get("title") or v.get("summary") or f"the run ended: {v.get('outcome')}"),
                str(v.get("message") or v.get("explanation") or ""),
                where=str(self.doc.get("record")),
            )
        ]

    def verdict(self) -> str:
        return str(self._verdict().get("outcome") or "unknown")

    def exit_code(self, fail_on: str) -> int:
        outcome = self._verdict().get("outcome")
        if outcome == "unknown":  # as `compat watch` answers it: the findings' severities against --fail-on
            return super().exit_code(fail_on)
        return EXIT_OK if outcome == "ok" else EXIT_INCOMPATIBLE
