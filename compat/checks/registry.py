"""The one check registry: each check declares its ids, what it requires and which entry points run it.

A check is a function of a context (`compat.resolver.Ctx` today) that yields `Finding`s and `Skip`s. It is
registered once with `@check(...)`; `run_checks` orders the checks so that a check runs after the checks it
requires (graphlib), and skips a check, with the reason, when a requirement failed: a required fact is
missing, or a required check reported an error or was itself skipped. That is how one root cause gives one
error and no cascade, without hand-written suppression (scientific-python/repo-review works the same way).

Requirements are strings:
- ``"fact:NAME"``: the context's ``has_fact(NAME)`` must be true (e.g. ``"fact:driver"``);
- ``"check:NAME"``: the named check must have run without an error finding;
- ``"probe:NAME"``: the context's ``has_probe(NAME)`` must be true (doctor probes).

`run_checks` keeps the findings that `compat.selection.selected` keeps (``--select``/``--ignore``).
"""

from __future__ import annotations

import functools
import graphlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol, TypeVar, Union

from compat._valueclass import valueclass
from compat.findings import Finding, Skip
from compat.selection import selected

EntryPoint = Literal["check", "doctor", "dockerfile", "guard", "explain", "smoke", "run"]
ENTRY_POINTS: tuple[EntryPoint, ...] = ("check", "doctor", "dockerfile", "guard", "explain", "smoke", "run")

Result = Union[Finding, Skip]


class CheckContext(Protocol):
    """What a check context offers the registry to decide requirements."""

    def has_fact(self, name: str) -> bool: ...

    def has_probe(self, name: str) -> bool: ...


CheckFn = Callable[[Any], Iterable[Result]]
F = TypeVar("F", bound=CheckFn)


@valueclass
class CheckSpec:
    """One registered check."""

    name: str
    """Unique name, used in ``check:NAME`` requirements (usually its main finding id)."""
    ids: tuple[str, ...]
    """Every finding id (or id prefix ending in '.') this check can report; each id is declared once."""
    requires: tuple[str, ...]
    """``fact:X``, ``probe:X`` or ``check:X``; a failed requirement skips this check with the reason."""
    entry_points: frozenset[str]
    """Which entry points run it."""
    run: CheckFn
    doc: str = ""
    order: int = 0
    """Registration order: ties in the topological order keep it (deterministic reports)."""
    covered_by: tuple[str, ...] = ()
    """Checks whose errors may already name this check's root cause: a finding of this check whose every fact
    equals a fact of such an error (the same GPU, the same versions) is skipped with that reason. Finer than
    ``check:`` (which skips the whole check): a known issue of one GPU is still reported beside an error about
    another GPU."""


REGISTRY: dict[str, CheckSpec] = {}
_DECLARED_IDS: dict[str, str] = {}


class RegistryError(RuntimeError):
    """A programming error in a check declaration (duplicate name or id, unknown requirement)."""


def check(
    name: str,
    *,
    ids: Sequence[str] = (),
    requires: Sequence[str] = (),
    entry_points: Iterable[str] = ("check", "doctor", "dockerfile", "guard"),
    doc: str = "",
    covered_by: Sequence[str] = (),
) -> Callable[[F], F]:
    """Register `fn` as the check `name`. `ids` defaults to ``(name,)``."""

    def deco(fn: F) -> F:
        register(
            CheckSpec(
                name=name,
                ids=tuple(ids) or (name,),
                requires=tuple(requires),
                entry_points=frozenset(entry_points),
                run=fn,
                doc=doc or (fn.__doc__ or "").strip().split("\n")[0],
                order=len(REGISTRY),
                covered_by=tuple(covered_by),
            )
        )
        return fn

    return deco


def register(spec: CheckSpec) -> None:
    if spec.name in REGISTRY:
        raise RegistryError(f"check {spec.name!r} registered twice")
    bad = [ep for ep in spec.entry_points if ep not in ENTRY_POINTS]
    if bad:
        raise RegistryError(f"check {spec.name!r}: unknown entry point(s) {bad}")
    for req in spec.requires:
        if not req.startswith(("fact:", "check:", "probe:")):
            raise RegistryError(f"check {spec.name!r}: requirement {req!r} is not fact:/check:/probe:")
    for fid in spec.ids:
        owner = _DECLARED_IDS.get(fid)
        if owner is not None:
            raise RegistryError(f"finding id {fid!r} declared by both {owner!r} and {spec.name!r}")
        _DECLARED_IDS[fid] = spec.name
    REGISTRY[spec.name] = spec


def declared_ids() -> dict[str, str]:
    """Every declared finding id → the check that declares it."""
    return dict(_DECLARED_IDS)


@valueclass(frozen=False)
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)


def ordered(specs: Iterable[CheckSpec]) -> list[CheckSpec]:
    """`specs` in an order where every check comes after the checks it requires (registration order on ties)."""
    return list(_ordered(tuple(specs)))


@functools.lru_cache(maxsize=64)
def _ordered(specs_in: tuple[CheckSpec, ...]) -> tuple[CheckSpec, ...]:
    specs = sorted(specs_in, key=lambda s: s.order)
    by_name = {s.name: s for s in specs}
    ts: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
    for s in specs:
        deps = [r[6:] for r in s.requires if r.startswith("check:") and r[6:] in by_name]
        deps += [n for n in s.covered_by if n in by_name]
        ts.add(s.name, *deps)
    try:
        ts.prepare()
    except graphlib.CycleError as exc:  # a declaration bug, caught by the registry's own test
        raise RegistryError(f"checks require each other in a cycle: {exc.args[1]}") from None
    out: list[CheckSpec] = []
    while ts.is_active():
        ready = sorted(ts.get_ready(), key=lambda n: by_name[n].order)
        out.extend(by_name[n] for n in ready)
        ts.done(*ready)
    return tuple(out)


def _unmet(spec: CheckSpec, ctx: CheckContext, failed: dict[str, str]) -> str | None:
    for req in spec.requires:
        kind, _, name = req.partition(":")
        if kind == "fact" and not ctx.has_fact(name):
            return f"needs the {name} fact, which is not known"
        if kind == "probe" and not ctx.has_probe(name):
            return f"needs the {name} probe, which did not run or failed"
        if kind == "check" and name in failed:
            return f"skipped because {name} {failed[name]}"
    return None


def run_checks(
    ctx: CheckContext,
    entry_point: str,
    *,
    specs: Iterable[CheckSpec] | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> RunResult:
    """Run every registered check for `entry_point` on `ctx`, requirements first."""
    chosen = [s for s in (REGISTRY.values() if specs is None else specs) if entry_point in s.entry_points]
    result = RunResult()
    failed: dict[str, str] = {}
    errors: dict[str, list[Finding]] = {}
    for spec in ordered(chosen):
        reason = _unmet(spec, ctx, failed)
        if reason is not None:
            failed[spec.name] = "was skipped"
            result.skipped.append(Skip(spec.name, reason))
            continue
        result.ran.append(spec.name)
        for r in _iterate(spec.run(ctx)):
            if isinstance(r, Skip):
                result.skipped.append(r)
                continue
            cover = _covering(r, spec, errors)
            if cover is not None:
                result.skipped.append(
                    Skip(r.id, f"{cover.id} already reports this root cause ({cover.title})")
                )
                continue
            if r.severity == "error":
                failed.setdefault(spec.name, f"found an error ({r.id})")
                errors.setdefault(spec.name, []).append(r)
            if selected(r.id, select, ignore):
                result.findings.append(r)
    return result


def _covering(r: Finding, spec: CheckSpec, errors: dict[str, list[Finding]]) -> Finding | None:
    """An error of a `covered_by` check resting on the same facts as `r`, if any."""
    if not spec.covered_by or not r.facts:
        return None
    for name in spec.covered_by:
        for e in errors.get(name, ()):
            if all(k in e.facts and _same_value(v, e.facts[k]) for k, v in r.facts.items()):
                return e
    return None


def _same_value(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        from packaging.version import InvalidVersion, Version

        try:
            return Version(Version(a).public) == Version(Version(b).public)
        except InvalidVersion:
            return False
    return False


def _iterate(results: Iterable[Result]) -> Iterator[Result]:
    yield from results
