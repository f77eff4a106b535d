"""Known issues: specific bad combinations from matrix/known_issues.yaml, each with its evidence."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from compat.checks.context import Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Fix

KNOWN_ISSUE = "known"


@check(
    "known",
    ids=("known.",),
    # A core check's error resting on the same facts (the same GPU, the same versions) already names the root
    # cause: one cause, one error. Declared here, applied by the registry.
    covered_by=(
        "driver.cuda",
        "wheel.arch",
        "python.framework",
        "tensorflow.cuda",
        "cudnn.cuda",
        "torch.variant",
    ),
)
def check_known_issues(ctx: Ctx) -> Iterator[Result]:
    """Rows of known_issues.yaml whose every condition matches the stack (ids: known.<row id>)."""
    values: dict[str, Version] = {}
    if ctx.torch is not None:
        values["torch"] = Version(ctx.torch.version.public)
    if ctx.tf is not None:
        values["tensorflow"] = Version(ctx.tf.version.public)
    for name in ("cuda", "cudnn", "driver"):
        v = getattr(ctx, name)
        if v is not None:
            values[name] = v
    if ctx.python is not None:
        values["python"] = ctx.python
    ccs = sorted({g.cc for g in (ctx.gpus or []) if g.cc is not None})
    for issue in ctx.m.known_issues:
        if any(k not in values and k != "cc" and k != "os" for k in issue.when):
            continue
        if any(not ctx.has_fact(flag) or ctx.facts.values[flag].value != "true" for flag in issue.requires):
            continue
        if "os" in issue.when:
            continue  # os is not a version; such rows are matched by the dockerfile/doctor layers
        if not all(values[k] in spec for k, spec in issue.when.items() if k != "cc"):
            continue
        facts = {k: str(values[k]) for k in issue.when if k in values}
        matching: list[str | None] = [None]
        if "cc" in issue.when:
            matching = [str(c) for c in ccs if Version(str(c)) in issue.when["cc"]]
        fixes = (Fix(issue.fix_text or "See the evidence", issue.fix_command),) if issue.fix_text else ()
        # One finding per matching GPU: the registry drops those a core error on that GPU already explains;
        # the resolver keeps the first that remains.
        for cc in matching:
            yield Finding(
                f"{KNOWN_ISSUE}.{issue.id}",
                issue.severity,
                issue.title,
                f"{issue.message} (evidence: {issue.source})",
                fixes,
                {**facts, "cc": cc} if cc is not None else facts,
                group="frameworks",
            )
