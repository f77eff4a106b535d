"""The document protocol (`Document`, `Item`), the findings report's document and `KINDS`, every document kind.

A document has `to_json()` (the public JSON contract, byte-for-byte what `--json` printed before this layer
existed), `text(stream)` (the terminal renderer of that document), `items()` (its findings in one neutral shape,
for the markdown, SARIF and GitHub renderers) and `exit_code(fail_on)`; `kind` names the JSON Schema in
`compat/schema/`. Each stage owns the document of its result, beside its text renderer: `compat.explain.document`,
`compat.smoke.document`, `compat.fleet.document`, `compat.suggest_document`, `compat.record.verdict_document`;
`compat.output.matrix_row` is a matrix row's. This module holds the one every findings command prints
(`ReportDocument`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Optional

from compat._valueclass import valueclass
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK
from compat.findings import SEVERITY_RANK, at_or_above

if TYPE_CHECKING:
    from compat.findings import Finding, Report


@valueclass
class Item:
    """One finding as the non-JSON formats show it."""

    id: str
    severity: str
    """"error", "warning" or "info"."""
    title: str
    message: str = ""
    fixes: tuple[tuple[str, Optional[str]], ...] = ()
    """(text, command or None) per fix."""
    file: Optional[str] = None
    line: Optional[int] = None
    where: Optional[str] = None
    """A logical location (a node, a stage, a log) when there is no file."""


def fix_pairs(fixes: Sequence[Any]) -> tuple[tuple[str, Optional[str]], ...]:
    """(text, command or None) per fix: `Fix` records or their JSON."""
    out = []
    for f in fixes:
        if isinstance(f, Mapping):
            out.append((str(f.get("text") or ""), f.get("command")))
        else:
            out.append((f.text, f.command))
    return tuple(out)


def finding_item(f: Finding, default_file: Optional[str]) -> Item:
    """A `Finding` as an `Item` (its `file` fact, else `default_file`)."""
    file = f.facts.get("file") if isinstance(f.facts.get("file"), str) else None
    return Item(
        id=f.id,
        severity=f.severity,
        title=f.title,
        message=f.message,
        fixes=fix_pairs(f.fixes),
        file=file or default_file,
        line=f.line,
        where=f.group,
    )


class Document:
    """The interface every document implements."""

    kind: str = "document"
    """The schema name: `compat/schema/<kind>.schema.json`."""
    title: str = "compat"
    file: Optional[str] = None
    """The file a file-based command read (SARIF artifact for findings without a file of their own)."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def text(self, stream: IO[str]) -> str:
        raise NotImplementedError

    def items(self) -> list[Item]:
        return []

    def verdict(self) -> str:
        return str(self.to_json().get("verdict") or "ok")

    def summary(self) -> list[tuple[str, str]]:
        """(label, value) rows of the markdown summary table."""
        return [("verdict", self.verdict())]

    def exit_code(self, fail_on: str) -> int:
        # An item's severity is a finding's (compat.findings.SEVERITIES); one read from a document of another
        # version counts as an error.
        error = SEVERITY_RANK["error"]
        level = SEVERITY_RANK[fail_on]
        return (
            EXIT_INCOMPATIBLE
            if any(SEVERITY_RANK.get(i.severity, error) >= level for i in self.items())
            else EXIT_OK
        )


@valueclass(frozen=False)
class ReportDocument(Document):
    """`compat check`, `doctor`, `dockerfile`, `compose`, `k8s`: a `Report` (findings, skips, facts)."""

    report: Report
    title: str = "compat check"
    kind: str = "report"
    file: Optional[str] = None
    show_skipped: bool = True
    """Text only: list every skipped check (False collapses them to a count, the commands' default)."""
    inventory: bool = False
    """Text only: open with the machine's inventory block (the doctor)."""

    def to_json(self) -> dict[str, Any]:
        return self.report.to_json()

    def text(self, stream: IO[str]) -> str:
        from compat.render import render_text

        return render_text(
            self.report, self.title, stream, show_skipped=self.show_skipped, inventory=self.inventory
        )

    def items(self) -> list[Item]:
        return [finding_item(f, self.file) for f in self.report.sorted_findings()]

    def verdict(self) -> str:
        return self.report.verdict

    def summary(self) -> list[tuple[str, str]]:
        rows = [("verdict", self.report.verdict), ("matrix updated", self.report.matrix_updated)]
        for sev in ("error", "warning", "info"):
            rows.append((f"{sev}s", str(sum(1 for f in self.report.findings if f.severity == sev))))
        rows.append(("skipped checks", str(len(self.report.skipped))))
        return rows

    def exit_code(self, fail_on: str) -> int:
        return EXIT_INCOMPATIBLE if at_or_above(self.report.findings, fail_on) else EXIT_OK


KINDS = (
    "report",
    "doctor",
    "dockerfile",
    "compose",
    "k8s",
    "explain",
    "smoke",
    "smoke-distributed",
    "fleet",
    "suggestion",
    "matrix-cuda",
    "matrix-gpu",
    "matrix-cudnn",
    "matrix-torch",
    "matrix-tensorflow",
    "matrix-jax",
    "run-verdict",
    "snapshot",
    "run",
)
"""Every document kind; each has `compat/schema/<kind>.schema.json` ("snapshot": `doctor --save-snapshot`; "run":
the recorder's run.json, a copy of `compat/record/run.schema.json`)."""
