"""The document of `compat matrix cuda|gpu|cudnn|torch|tensorflow|jax KEY` (one matrix row) and its text."""

from __future__ import annotations

from typing import IO, Any

from compat._valueclass import valueclass
from compat.errors import EXIT_OK
from compat.output.documents import Document


@valueclass(frozen=False)
class MatrixRowDocument(Document):
    """`compat matrix cuda|gpu|cudnn|torch|tensorflow|jax KEY`: one row of the matrix."""

    subject: str
    row: dict[str, Any]
    label: str = ""

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"matrix-{self.subject}"

    @property
    def title(self) -> str:  # type: ignore[override]
        return f"{self.label or self.subject} {self.row.get('version') or self.row.get('name')}"

    def to_json(self) -> dict[str, Any]:
        return self.row

    def text(self, stream: IO[str]) -> str:
        return "\n".join(_row_lines(self.row, self.title)) + "\n"

    def verdict(self) -> str:
        return "ok"

    def summary(self) -> list[tuple[str, str]]:
        return [(k, _cell(v)) for k, v in self.row.items() if not isinstance(v, (list, dict))]

    def exit_code(self, fail_on: str) -> int:
        return EXIT_OK


def _row_lines(doc: dict[str, Any], title: str) -> list[str]:
    """The title, then one line per key (sorted); a list of tables is one indented line per table."""
    out = [title]
    for k in sorted(doc):
        v = doc[k]
        if isinstance(v, list) and v and isinstance(v[0], dict):
            out.append(f"  {k}:")
            for item in v:
                out.append(
                    "    - "
                    + ", ".join(
                        f"{ik}={iv if not isinstance(iv, list) else ' '.join(map(str, iv))}"
                        for ik, iv in item.items()
                    )
                )
        elif isinstance(v, dict):
            out.append(f"  {k}: " + ", ".join(f"{ik}={iv}" for ik, iv in v.items()))
        elif isinstance(v, list):
            out.append(f"  {k}: {', '.join(map(str, v))}")
        else:
            out.append(f"  {k}: {v}")
    return out


def _cell(v: Any) -> str:
    return "-" if v is None else str(v)
