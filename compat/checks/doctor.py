"""The doctor's checks, in report order: one module per subject, each check registered once in the registry.

`doctor_checks` is what compat.resolver.resolve(extra_checks=) runs for `compat doctor`, `compat check --snapshot`
and explain's cross-check. Adding a doctor check: a function with its `@check(...)` line in the subject module,
and its name in DOCTOR_ORDER below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from compat.checks import doctor_frameworks, doctor_gpu, doctor_health, doctor_host, doctor_toolchain
from compat.checks.context import Ctx, Result
from compat.checks.doctor_frameworks import PROBE_FAILED
from compat.checks.registry import REGISTRY
from compat.findings import Skip

DOCTOR_ORDER = (
    "doctor.gpu-presence",
    "doctor.driver-state",
    "doctor.visible-devices",
    "doctor.gpu-usage",
    "doctor.gpu-health",
    "doctor.kernel-log",
    "doctor.resources",
    "doctor.toolkits",
    "doctor.frameworks",
    "doctor.environment",
    "doctor.probe-failures",
    *doctor_toolchain.CHECK_NAMES,  # issue 18: NVML garbage, a broken nvcc, toolkit vs torch, host compiler
)
"""Registered doctor checks in the order the report shows them."""

_MODULES = (
    doctor_gpu,
    doctor_health,
    doctor_host,
    doctor_frameworks,
    doctor_toolchain,
)  # imported: each registers its checks


def _guarded(check: Callable[[Ctx], Iterable[Result]]) -> Callable[[Ctx], Iterator[Result]]:
    """A check that meets probe data of an unexpected shape (a hand-edited or foreign snapshot) skips with the
    reason instead of taking the whole report down; findings it yielded before that are kept."""

    def run(ctx: Ctx) -> Iterator[Result]:
        try:
            yield from check(ctx)
        except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
            yield Skip(
                f"{PROBE_FAILED}.{check.__name__.removeprefix('check_')}",
                f"unexpected probe data: {type(exc).__name__}: {exc}",
            )

    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    run.__wrapped__ = check  # type: ignore[attr-defined]  # the registry maps the wrapper to its registered check
    return run


doctor_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = tuple(
    _guarded(REGISTRY[name].run) for name in DOCTOR_ORDER
)

__all__ = ["DOCTOR_ORDER", "doctor_checks"]
