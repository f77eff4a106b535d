"""The document of `compat explain`: the diagnoses of a log, most likely first (text: `compat.explain.render`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any, Optional

from compat._valueclass import valueclass
from compat.errors import EXIT_OK
from compat.explain.diagnosis import Diagnosis, explain_document, verdict_of
from compat.output.documents import Document, Item, fix_pairs


@valueclass(frozen=False)
class ExplainDocument(Document):
    """`compat explain`: the diagnoses of a log, most likely first. Exit 0 whatever was found."""

    diagnoses: Sequence[Diagnosis]
    source: str = "<stdin>"
    lines: int = 0
    kind: str = "explain"

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"compat explain {self.source}"

    @property
    def file(self) -> Optional[str]:  # type: ignore[override]
        return None if self.source == "<stdin>" else self.source

    def to_json(self) -> dict[str, Any]:
        return explain_document(self.diagnoses)

    def text(self, stream: IO[str]) -> str:
        from compat.explain.render import render

        return render(list(self.diagnoses), self.source, self.lines, stream)

    def items(self) -> list[Item]:
        out = []
        for i, d in enumerate(self.diagnoses):
            line = d.evidence_at[0].line if d.evidence_at else None
            sev = "error" if i == 0 and not d.suspected and d.confidence >= 0.4 else "warning"
            out.append(
                Item(
                    id=f"explain.{d.category}",
                    severity=sev,
                    title=d.title,
                    message=d.explanation,
                    fixes=fix_pairs(d.fixes),
                    file=self.file if line is not None else None,
                    line=line,
                    where=self.source,
                )
            )
        return out

    def verdict(self) -> str:
        return verdict_of(self.diagnoses)

    def summary(self) -> list[tuple[str, str]]:
        return [
            ("status", self.verdict()),
            ("diagnoses", str(len(self.diagnoses))),
            ("lines read", str(self.lines)),
        ]

    def exit_code(self, fail_on: str) -> int:
        return EXIT_OK
