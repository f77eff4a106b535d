"""The doctor's checks, in report order: one module per subject, each check registered once in the registry.

`doctor_checks` is what compat.resolver.resolve(extra_checks=) runs for `compat doctor`, `compat check --snapshot`
and explain's cross-check. Adding a doctor check: a function with its `@check(...)` line in the subject module,
and its name in DOCTOR_ORDER below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compat.checks import doctor_frameworks, doctor_gpu, doctor_health, doctor_host, doctor_toolchain
from compat.checks.context import Ctx, Result
from compat.checks.doctor_common import DOCTOR_CHECK_IDS, _guarded
from compat.checks.registry import REGISTRY

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

doctor_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = tuple(
    _guarded(REGISTRY[name].run) for name in DOCTOR_ORDER
)

__all__ = ["DOCTOR_CHECK_IDS", "DOCTOR_ORDER", "doctor_checks"]
