"""From a parsed Dockerfile to stages with facts, then to findings through the shared resolver."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from compat.dockerfile.checks import check_stage, stage_facts
from compat.dockerfile.jaxchecks import jax_recheck
from compat.dockerfile.jaxchecks import stage_checks as jax_stage_checks
from compat.dockerfile.jaxinstall import derive as derive_jax
from compat.dockerfile.model import (
    CPU_WHEEL,
    Options,
    Stage,
)
from compat.dockerfile.parser import (
    Dockerfile,
)
from compat.dockerfile.stages import build_stages
from compat.errors import InputError
from compat.findings import Finding, Fix, Report, Skip, unique
from compat.installcmd import dockerfile_installer, restate
from compat.matrix import Matrix
from compat.pipeline.check import check_stack
from compat.solver.solve import Recheck, closes

_DROP_FOR_AND_CUDA = ("tensorflow.cuda", "tensorflow.cudnn")


def analyze(df: Dockerfile, m: Matrix, opts: Options) -> Report:
    stages, notes = build_stages(df, m, opts)
    if not stages:
        raise InputError("no FROM instruction: this is not a Dockerfile")
    findings: list[Finding] = list(notes)
    skipped: list[Skip] = []
    stage_docs: list[dict[str, Any]] = []
    last_facts: dict[str, Any] = {}
    for st in stages:
        jax_notes: list[Finding] = []
        if st.jax is not None:
            st.jax_view, jax_notes = derive_jax(st, m)
        facts, lines = stage_facts(st, opts, m)
        rep = check_stack(facts, m)
        recheck = jax_recheck(facts, m)  # one memo per stage: the re-checks of its other jax installs
        own = list(st.findings) + jax_notes
        for r in check_stage(st, m, opts):
            if isinstance(r, Skip):
                skipped.append(r)
            else:
                own.append(r)
        if st.jax_view is not None:
            own.extend(jax_stage_checks(st, m, recheck))
        own_ids = {f.id for f in own}
        for f in rep.findings:
            if f.id == "jax.cpu-build" and f.id in own_ids:
                continue  # the Dockerfile's own (CPU-only jax in a CUDA image) says it with the line to change
            if f.id.startswith("jax."):
                jf = _jax_finding(f, st, recheck, rep.findings)
                if jf is None:
                    continue
                f = jf
            if st.tf is not None and st.tf.and_cuda and f.id in _DROP_FOR_AND_CUDA:
                continue
            if f.id == "toolkit.arch" and not (st.stack.nvcc or st.stack.flavour == "devel"):
                continue
            if f.id == "framework.cpu-build" and CPU_WHEEL in own_ids:
                continue
            if f.id in ("tensorflow.cuda", "tensorflow.cudnn") and st.tf is not None and st.tf.from_base:
                continue
            line = _line_for(f, lines, st)
            facts_ = dict(f.facts)
            facts_["stage"] = st.label
            own.append(replace(f, line=line, facts=facts_))
        for f in own:
            if f.line is None:
                f = replace(f, line=st.line)
            findings.append(f)
        skipped.extend(_in_dockerfile_terms(sk, st.label, len(stages) > 1) for sk in rep.skipped)
        fj = facts.to_json()
        stage_docs.append(
            {
                "name": st.name,
                "index": st.index,
                "line": st.line,
                "base": st.base,
                "from_stage": st.parent,
                "facts": fj,
            }
        )
        last_facts = fj
    findings.extend(_default_driver(stages[-1], m, opts))
    report = Report(
        unique(findings, lambda f: (f.id, f.title, f.line)),
        unique(skipped, lambda s: (s.id, s.reason)),
        last_facts,
        m.updated_date,
    )
    report.extra["stages"] = stage_docs
    return report


def _default_driver(st: Stage, m: Matrix, opts: Options) -> list[Finding]:
    """The image that runs (last stage) against the oldest supported driver branch, without --target-driver."""
    if opts.target_driver or st.stack.kind != "cuda" or st.cuda is None or st.cuda.line != st.line:
        return []
    if st.env.get("NVIDIA_DISABLE_REQUIRE", "") not in ("", "0", "false"):
        return []
    import datetime as _dt

    from compat.dockerfile.drivers import default_driver_findings

    return list(
        default_driver_findings(
            m,
            image=st.base,
            cuda=st.cuda.value,
            require_branches=st.stack.require_branches,
            line=st.line,
            day=opts.today or _dt.date.today(),
            facts={"stage": st.label},
        )
    )


def _jax_finding(f: Finding, st: Stage, recheck: Recheck, before: list[Finding]) -> Finding | None:
    """A resolver jax.* finding in Dockerfile terms: dropped where it does not apply to the image, its install
    fixes written as Dockerfile lines and kept only when the solver's re-check of the changed stage closes it."""
    v = st.jax_view
    if v is None:
        return f
    if f.id == "jax.cudnn" and v.pip_cuda is not False:
        return None  # JAX loads the pip cuDNN wheels (or it is unknown which): the image's cuDNN is not used
    fixes: list[Fix] = []
    for x in f.fixes:
        label = dict(x.changes).get("jax")
        line = restate(x.command, dockerfile_installer(v.tool)) if x.command else None
        if label is None or line is None:
            fixes.append(x)
            continue
        after = recheck.findings((("jax", label),))
        if not closes(before, after, f):
            continue
        fixes.append(replace(x, command=line))
    return replace(f, fixes=tuple(fixes))


def _line_for(f: Finding, lines: Mapping[str, int], st: Stage) -> int:
    if f.id.startswith("jax.") and "jax" in lines:
        return lines["jax"]
    text = (f.title + " " + " ".join(f.facts)).lower()
    for key, name in (
        ("torch", "torch"),
        ("tensorflow", "tensorflow"),
        ("cudnn", "cudnn"),
        ("python", "python"),
        ("cuda", "cuda"),
    ):
        if key in text and name in lines:
            return lines[name]
    return st.line


# The resolver's skip reasons name `compat check` flags; `compat dockerfile` has other ones (issue 19, item 11;
# issue 20: skipped checks speak the command's language, and multi-stage skips name their stage).
_SKIP_TERMS = (
    ("(give --driver)", "(give --target-driver)"),
    ("(give --gpu or --cc)", "(give --target-gpu or --target-cc)"),
    ("no PyTorch version given (--torch)", "no PyTorch installed in this image"),
    ("no TensorFlow version given (--tensorflow)", "no TensorFlow installed in this image"),
    ("no cuDNN version given (--cudnn)", "no cuDNN known in this image"),
    ("(give --torch, --tensorflow or --cuda)", "(no framework or CUDA toolkit in this image)"),
    ("(give --torch or --tensorflow)", "(no framework installed in this image)"),
    ("(give --cuda)", "(no CUDA toolkit in this image)"),
    ("(--torch, --tensorflow)", "(none installed in this image)"),
    ("no CUDA version given (--cuda)", "no CUDA toolkit in this image"),
    ("(give --cudnn)", "(no cuDNN in this image)"),
    ("(give --python)", "(the image's Python version is unknown)"),
    ("(give --os)", "(the image's operating system is unknown)"),
)
_OWN_FLAGS = ("--target-driver", "--target-gpu", "--target-cc", "--build-arg", "--context")


def _no_foreign_flags(reason: str) -> str:
    """A parenthesis that still names a flag `compat dockerfile` does not have goes (issue 20: never name them)."""
    import re

    def keep(m: re.Match[str]) -> str:
        return m.group(0) if any(f in m.group(0) for f in _OWN_FLAGS) else ""

    return re.sub(r"\s*\((?:give )?--[a-z][^)]*\)", keep, reason)


def _in_dockerfile_terms(s: Skip, stage: str, several: bool) -> Skip:
    reason = s.reason
    for old, new in _SKIP_TERMS:
        reason = reason.replace(old, new)
    reason = _no_foreign_flags(reason)
    if several:
        reason = f"{reason} [stage {stage}]"
    return replace(s, reason=reason)
