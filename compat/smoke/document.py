"""The document of `compat smoke` (and `--distributed`): one training run's result (text: `compat.smoke.report`,
`compat.smoke.distributed`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any, Optional

from compat._valueclass import valueclass
from compat.output.documents import Document, Item, finding_item
from compat.smoke.result import SmokeResult


def _with_interpreter(text: str, interpreter: Optional[Mapping[str, Any]]) -> str:
    """The report's header line, then the interpreter it ran with."""
    if interpreter is None:
        return text
    from compat._text import sanitize
    from compat.target import header_line

    head, nl, rest = text.partition("\n")
    return f"{head}\n{sanitize(header_line(dict(interpreter)))}{nl}{rest}"


@valueclass(frozen=False)
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
            from compat.smoke.report import render_text

            out = render_text(self.result, stream)
        return _with_interpreter(out, self.interpreter)

    def items(self) -> list[Item]:
        from compat.smoke.report import smoke_findings

        return [finding_item(f, None) for f in smoke_findings(self.result)]

    def verdict(self) -> str:
        return self.result.verdict

    def summary(self) -> list[tuple[str, str]]:
        r = self.result
        return [
            ("status", r.verdict),
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
