"""The document of `compat fleet` and `compat fleet merge`: every node's verdict, drift, sick GPUs, failed smokes
(built and rendered as text by `compat.fleet.report`)."""

from __future__ import annotations

from typing import IO, Any

from compat._valueclass import valueclass
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK
from compat.fleet.report import at_or_above, render_text
from compat.output.documents import Document, Item


@valueclass(frozen=False)
class FleetDocument(Document):
    """`compat fleet` and `compat fleet merge`: every node's verdict, drift, sick GPUs, failed smokes."""

    doc: dict[str, Any]
    merge: bool = False

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "fleet"

    @property
    def title(self) -> str:  # type: ignore[override]
        return "compat fleet merge" if self.merge else "compat fleet"

    def to_json(self) -> dict[str, Any]:
        return self.doc

    def text(self, stream: IO[str]) -> str:
        return render_text(self.doc, stream)

    def items(self) -> list[Item]:
        out: list[Item] = []
        for node in self.doc.get("nodes") or []:
            name = str(node.get("name"))
            if node.get("status") in ("unreachable", "failed"):
                out.append(
                    Item(
                        f"fleet.{node['status']}",
                        "error",
                        f"{name}: {node['status']}",
                        str(node.get("reason") or ""),
                        where=name,
                    )
                )
            for sev, key in (("error", "errors"), ("warning", "warnings")):
                for f in node.get(key) or []:
                    out.append(Item(str(f.get("id")), sev, f"{name}: {f.get('title')}", where=name))
        for d in self.doc.get("drift") or []:
            nodes = ", ".join(map(str, d.get("nodes") or []))
            # The fleet's verdict counts drift as an error (compat.fleet.report._verdict): so does its finding.
            out.append(Item("fleet.drift", "error", f"{d.get('fact')} differs from the majority on {nodes}"))
        for dup in self.doc.get("duplicates") or []:
            sources = ", ".join(map(str, dup.get("sources") or []))
            out.append(
                Item("fleet.duplicate", "warning", f"{dup.get('name')} reported more than once", sources)
            )
        return out

    def verdict(self) -> str:
        return str(self.doc.get("verdict"))

    def summary(self) -> list[tuple[str, str]]:
        rows = [("verdict", self.verdict()), ("source", str(self.doc.get("source")))]
        rows += [(k.replace("_", " "), str(v)) for k, v in (self.doc.get("summary") or {}).items()]
        return rows

    def exit_code(self, fail_on: str) -> int:
        return EXIT_INCOMPATIBLE if at_or_above(self.doc, fail_on) else EXIT_OK
