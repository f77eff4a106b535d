"""One document class per kind of result a command prints.

Each has `to_json()` (the public JSON contract, byte-for-byte what `--json` printed before this layer existed),
`text(stream)` (the terminal renderer of that document), `items()` (its findings in one neutral shape, for the
markdown, SARIF and GitHub renderers) and `exit_code(fail_on)`. `kind` names the JSON Schema in `compat/schema/`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import IO, TYPE_CHECKING, Any, Optional

from compat._record import record
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK

if TYPE_CHECKING:
    from compat.explain import Diagnosis
    from compat.findings import Finding, Report
    from compat.smoke.result import SmokeResult
    from compat.suggest import Suggestion

_RANK = {"info": 0, "note": 0, "warning": 1, "error": 2}


@record
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


def _fix_pairs(fixes: Sequence[Any]) -> tuple[tuple[str, Optional[str]], ...]:
    out = []
    for f in fixes:
        if isinstance(f, Mapping):
            out.append((str(f.get("text") or ""), f.get("command")))
        else:
            out.append((f.text, f.command))
    return tuple(out)


def _finding_item(f: Finding, default_file: Optional[str]) -> Item:
    file = f.facts.get("file") if isinstance(f.facts.get("file"), str) else None
    return Item(
        id=f.id,
        severity=f.severity,
        title=f.title,
        message=f.message,
        fixes=_fix_pairs(f.fixes),
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
        return (
            EXIT_INCOMPATIBLE
            if any(_RANK.get(i.severity, 2) >= _RANK[fail_on] for i in self.items())
            else EXIT_OK
        )


@record(frozen=False)
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
        return [_finding_item(f, self.file) for f in self.report.sorted_findings()]

    def verdict(self) -> str:
        return self.report.verdict

    def summary(self) -> list[tuple[str, str]]:
        rows = [("verdict", self.report.verdict), ("matrix updated", self.report.matrix_updated)]
        for sev in ("error", "warning", "info"):
            rows.append((f"{sev}s", str(sum(1 for f in self.report.findings if f.severity == sev))))
        rows.append(("skipped checks", str(len(self.report.skipped))))
        return rows

    def exit_code(self, fail_on: str) -> int:
        from compat.findings import at_or_above

        return EXIT_INCOMPATIBLE if at_or_above(self.report.findings, fail_on) else EXIT_OK


@record(frozen=False)
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
        from compat.explain import explain_document

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
                    fixes=_fix_pairs(d.fixes),
                    file=self.file if line is not None else None,
                    line=line,
                    where=self.source,
                )
            )
        return out

    def verdict(self) -> str:
        from compat.explain import status_of

        return status_of(self.diagnoses)

    def summary(self) -> list[tuple[str, str]]:
        return [
            ("status", self.verdict()),
            ("diagnoses", str(len(self.diagnoses))),
            ("lines read", str(self.lines)),
        ]

    def exit_code(self, fail_on: str) -> int:
        return EXIT_OK


def _with_interpreter(text: str, interpreter: Optional[Mapping[str, Any]]) -> str:
    """The report's header line, then the interpreter it ran with."""
    if interpreter is None:
        return text
    from compat._text import sanitize
    from compat.target import header_line

    head, nl, rest = text.partition("\n")
    return f"{head}\n{sanitize(header_line(dict(interpreter)))}{nl}{rest}"


@record(frozen=False)
class SmokeDocument(Document):
    """`compat smoke` (and `--distributed`): one training run's result; exit 0 passed, 1 otherwise."""

    result: SmokeResult
    distributed: bool = False
    interpreter: Optional[Mapping[str, Any]] = None
    """The interpreter the job trained with (`compat.target.Target.to_json()`): JSON key `interpreter` and the text
    header's second line."""

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "smoke-distributed" if self.distributed else "smoke"

    @property
    def title(self) -> str:  # type: ignore[override]
        return "compat smoke --distributed" if self.distributed else "compat smoke"

    def to_json(self) -> dict[str, Any]:
        doc = self.result.to_json()
        if self.interpreter is not None:
            doc["interpreter"] = dict(self.interpreter)
        return doc

    def text(self, stream: IO[str]) -> str:
        if self.distributed:
            from compat.smoke.distributed import render_text as distributed_text

            out = distributed_text(self.result, stream)
        else:
            from compat.smoke import render_text

            out = render_text(self.result, stream)
        return _with_interpreter(out, self.interpreter)

    def items(self) -> list[Item]:
        from compat.smoke import smoke_findings

        return [_finding_item(f, None) for f in smoke_findings(self.result)]

    def verdict(self) -> str:
        return self.result.status

    def summary(self) -> list[tuple[str, str]]:
        r = self.result
        return [
            ("status", r.status),
            ("framework", " ".join(x for x in (r.framework, r.framework_version) if x) or "-"),
            ("device", r.device_name or r.device or "-"),
            ("steps", str(r.steps)),
            ("seconds", f"{r.seconds:.1f}"),
        ]

    def exit_code(self, fail_on: str) -> int:
        if self.distributed:
            from compat.smoke.distributed import exit_code

            return exit_code(self.result.to_json())
        return self.result.exit_code


@record(frozen=False)
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
        from compat.fleet.report import render_text

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
        from compat.fleet.report import at_or_above

        return EXIT_INCOMPATIBLE if at_or_above(self.doc, fail_on) else EXIT_OK


@record(frozen=False)
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
        from compat.suggest import render_suggestion
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
