"""The closure property, checked independently of the solver, and the stacks the sweep generates from the matrix."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Optional

from compat.facts import FACT_PARSERS, Facts, apply_flags, make_fact
from compat.findings import Finding, Report
from compat.matrix import Matrix
from compat.pipeline.check import check_stack
from compat.resolver import resolve

RANK = {"info": 0, "warning": 1, "error": 2}

# A spread of drivers (R470 … R580), GPUs (Kepler … Blackwell) and Pythons for the sweep.
DRIVERS = (None, "470.82.01", "535.104.05", "550.54.14", "580.65.06")
GPUS = ("Tesla K80", "GTX 1080", "Tesla V100", "RTX 4090", "RTX 5090")
PYTHONS = ("3.9", "3.12")
TOOLKITS = ("10.2", "11.7", "11.8", "12.1", "12.4", "12.8", "13.0")
CUDNNS = ("8.2.4", "8.9.7", "9.1.0", "9.10.2")
TF_SYSTEMS = (("11.8", "8.6.0"), ("12.4", "9.1.0"))


def facts_of(os: str = "linux", **flags: Optional[str]) -> Facts:
    """Facts the way `compat check` builds them from its flags."""
    base = Facts(values={"os": make_fact("os", os, "--os")})
    return apply_flags(base, {k: v for k, v in flags.items() if v is not None})


def subject(f: Finding) -> Optional[str]:
    """What a finding is about, read from the finding itself (the test does not use the solver's helper)."""
    if f.subject:
        return f.subject
    for key in ("torch", "tensorflow"):
        if key in f.facts:
            return key
    fw = f.facts.get("framework")
    if isinstance(fw, str):
        return "torch" if fw.startswith("torch") else "tensorflow"
    return None


def closure_failures(
    m: Matrix, facts: Facts, label: str, before: Optional[Report] = None, require_gpu: bool = False
) -> Iterator[str]:
    """Every fix with `changes`: applied through the `compat check` flags, its finding is gone (nothing with the
    same id and subject at the same or a worse severity) and no new error appears."""
    if before is None:
        before = check_stack(facts, m, require_gpu=require_gpu)
    had_errors = {(f.id, subject(f)) for f in before.findings if f.severity == "error"}
    for f in before.findings:
        for fix in f.fixes:
            changes: Mapping[str, str] = fix.change_map
            if not changes:
                continue
            bad_keys = set(changes) - set(FACT_PARSERS)
            if bad_keys:
                yield f"{label}: {f.id}: changes {sorted(bad_keys)} are not `compat check` facts"
                continue
            after = resolve(apply_flags(facts, dict(changes)), m, require_gpu=require_gpu).findings
            same = [
                g
                for g in after
                if (g.id, subject(g)) == (f.id, subject(f)) and RANK[g.severity] >= RANK[f.severity]
            ]
            if same:
                yield f"{label}: {f.id} {dict(changes)} leaves: {same[0].title}"
            new = [g for g in after if g.severity == "error" and (g.id, subject(g)) not in had_errors]
            if new:
                yield f"{label}: {f.id} {dict(changes)} adds: {new[0].id}: {new[0].title}"


def sweep_stacks(m: Matrix) -> Iterator[tuple[str, Facts]]:
    """Every torch and TensorFlow release × variant × drivers × GPUs × Pythons, plus toolkits and cuDNN."""
    for r in m.torch:
        for v in r.variants:
            for drv in DRIVERS:
                for gpu in GPUS:
                    for py in PYTHONS:
                        t = f"{r.raw}+{v.tag}"
                        yield (
                            f"torch {t} driver {drv} {gpu} py{py}",
                            facts_of(torch=t, driver=drv, gpu=gpu, python=py),
                        )
    for tr in m.tensorflow:
        for drv in DRIVERS:
            for gpu in GPUS:
                for py in PYTHONS:
                    yield (
                        f"tf {tr.raw} driver {drv} {gpu} py{py}",
                        facts_of(tensorflow=tr.raw, driver=drv, gpu=gpu, python=py),
                    )
    # TensorFlow on a system CUDA and cuDNN: its holistic `tensorflow[and-cuda]==X` fix changes both (issue 27).
    for tr in m.tensorflow:
        for cuda, dn in TF_SYSTEMS:
            for drv in DRIVERS:
                yield (
                    f"tf {tr.raw} cuda {cuda} cudnn {dn} driver {drv}",
                    facts_of(
                        tensorflow=tr.raw, cuda=cuda, cudnn=dn, driver=drv, gpu="RTX 4090", python="3.10"
                    ),
                )
    for cuda in TOOLKITS:
        for drv in DRIVERS:
            for gpu in GPUS:
                yield f"cuda {cuda} driver {drv} {gpu}", facts_of(cuda=cuda, driver=drv, gpu=gpu)
                for dn in CUDNNS:
                    yield (
                        f"cuda {cuda} cudnn {dn} driver {drv} {gpu}",
                        facts_of(cuda=cuda, cudnn=dn, driver=drv, gpu=gpu),
                    )
