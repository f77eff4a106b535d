"""The resolver: a pure function from (facts, matrix) to findings. No I/O, no probing, no printing.

The checks live in `compat.checks` (one module per subject), registered in `compat.checks.registry`; this module
builds the context and runs them. Findings carry the stack changes that could repair them (`Finding.repair`);
the solver turns those into re-checked fixes afterwards (compat.pipeline.check).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from compat.checks import arch, cudnn, driver, frameworks, gpu, jax, known, python, tensorflow, torch, unknown
from compat.checks.context import Ctx, Result, build_context
from compat.checks.registry import REGISTRY, CheckSpec, run_checks
from compat.facts import Facts
from compat.findings import Report, unique
from compat.matrix import Matrix

# The resolver's checks in report order (the registry keeps it on ties of its requirement order).
CHECKS: tuple[Callable[[Ctx], Iterator[Result]], ...] = (
    unknown.check_unknown_versions,
    gpu.check_unknown_gpu,
    gpu.check_required_gpu,
    driver.check_driver_branch,
    driver.check_driver_gpu,
    driver.check_driver_gpu_too_new,
    torch.check_torch_variant,
    driver.check_driver_cuda,
    arch.check_wheel_arch,
    arch.check_toolkit_arch,
    python.check_python,
    tensorflow.check_tensorflow,
    jax.check_jax_release,
    cudnn.check_cudnn,
    frameworks.check_cpu_build,
    known.check_known_issues,
)


_SPECS: dict[tuple[str, tuple[object, ...], int], list[CheckSpec]] = {}


# Stable check ids, declared once each in their check modules (never renumber or rename: users select on them).
CHECK_IDS: tuple[str, ...] = tuple(
    i for s in REGISTRY.values() if s.run in CHECKS for i in s.ids if not i.endswith(".")
)


def _specs(entry_point: str, extra: tuple[Callable[[Ctx], Iterator[Result]], ...]) -> list[CheckSpec]:
    key = (entry_point, tuple(extra), len(REGISTRY))
    if key not in _SPECS:
        _SPECS[key] = _build_specs(entry_point, extra)
    return _SPECS[key]


def _build_specs(entry_point: str, extra: tuple[Callable[[Ctx], Iterator[Result]], ...]) -> list[CheckSpec]:
    by_fn = {s.run: s for s in REGISTRY.values()}
    core = [by_fn[fn] for fn in CHECKS]
    names = {s.name for s in core}
    # The doctor's checks read live probe data: they run only when handed in through extra_checks (the doctor,
    # `compat check --snapshot`, explain's cross-check), wrapped so that malformed probe data is a skip.
    rest = [
        s
        for s in REGISTRY.values()
        if s.name not in names and entry_point in s.entry_points and "doctor" not in s.entry_points
    ]
    specs = [replace(s, order=i) for i, s in enumerate(core + rest)]
    for fn in extra:  # checks handed in as functions (the doctor's), unless registered already
        base = getattr(fn, "__wrapped__", fn)
        if base in by_fn:
            spec = by_fn[base]
            if spec not in core + rest:
                specs.append(replace(spec, run=fn, order=len(specs), entry_points=frozenset({entry_point})))
            continue
        name = getattr(fn, "__name__", repr(fn))
        specs.append(
            CheckSpec(
                f"extra:{name}", (), (), frozenset({entry_point}), fn, order=len(specs)
            )  # not registered
        )
    return specs


def resolve(
    facts: Facts,
    matrix: Matrix,
    *,
    require_gpu: bool = False,
    extra_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = (),
    entry_point: str = "check",
) -> Report:
    """Evaluate every check on `facts`; findings (with their static fixes and repair axes, no solver fixes),
    skips (with reasons) and the facts used."""
    ctx = build_context(facts, matrix, require_gpu)
    result = run_checks(ctx, entry_point, specs=_specs(entry_point, extra_checks))
    # Identical reports (the same id and title, e.g. one known issue matching two GPUs) are shown once.
    skipped = unique(result.skipped, lambda s: (s.id, s.reason))
    findings = unique(result.findings, lambda f: (f.id, f.title))
    return Report(findings, skipped, facts.to_json(), matrix.updated_date)
