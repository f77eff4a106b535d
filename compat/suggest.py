"""`compat suggest`: the newest PyTorch and TensorFlow that work on a machine, and what blocks anything newer.

Pure: facts + matrix in, a suggestion document out. Every candidate install is checked by the resolver exactly as
`compat check` would check it, so what suggest picks passes check (with no warning when a warning-free option
exists), and "what blocks newer" names the resolver's own finding for each release. Versions compare as versions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, Optional

from packaging.version import Version

from compat._valueclass import valueclass
from compat.checks.arch import WHEEL_ARCH
from compat.checks.context import Ctx, build_context
from compat.checks.driver import DRIVER_CUDA, check_driver_gpu, check_driver_gpu_too_new, undriven_gpus
from compat.checks.python import PYTHON_FRAMEWORK
from compat.checks.rules import driver_requirement
from compat.checks.tensorflow import TF_WINDOWS
from compat.errors import InputError
from compat.facts import Facts
from compat.findings import Finding
from compat.installcmd import installer, jax_command, pypi_default_tag, tf_command, torch_command
from compat.matrix import Matrix, TfRelease, TorchRelease, TorchVariant
from compat.schema_version import SCHEMA_VERSION
from compat.solver.solve import Recheck, apply_changes
from compat.versions import CC, parse_cc


@valueclass(frozen=False)
class Pick:
    version: str
    variant: Optional[str]
    command: str
    reason: str
    changes: dict[str, str] = field(default_factory=dict)
    """The facts this pick sets, in `compat check` flag vocabulary (`compat check --torch 2.8.0+cu128`)."""
    wheel: Optional[str] = None
    """torch: "pypi-default" (what plain `pip install torch==X` gets) or "official-variant" (PyTorch's index)."""
    warnings: list[str] = field(default_factory=list)
    """Titles of the warnings `compat check` gives for this pick (empty: a warning-free pick)."""
    installer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "variant": self.variant,
            "command": self.command,
            "reason": self.reason,
            "kind": "shell",
            "changes": dict(sorted(self.changes.items())),
            "wheel": self.wheel,
            "warnings": list(self.warnings),
            "installer": self.installer,
        }


@valueclass(frozen=False)
class Suggestion:
    torch: Optional[Pick]
    tensorflow: Optional[Pick]
    blocked: list[dict[str, str]] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    manual: dict[str, str] = field(default_factory=dict)
    """When no release works: the manual route, per framework."""
    jax: Optional[Pick] = None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "torch": self.torch.to_json() if self.torch else None,
            "tensorflow": self.tensorflow.to_json() if self.tensorflow else None,
            "jax": self.jax.to_json() if self.jax else None,
            "blocked": self.blocked,
            "unavailable": dict(sorted(self.unavailable.items())),
            "manual": dict(sorted(self.manual.items())),
        }


def _ccs(ctx: Ctx) -> list[CC]:
    return sorted({g.cc for g in (ctx.gpus or []) if g.cc is not None})


@valueclass(frozen=False)
class _Eval:
    """One candidate install, checked by the resolver exactly as `compat check` would check it."""

    version: Version
    tag: Optional[str]
    changes: dict[str, str]
    errors: list[Finding]
    warnings: list[Finding]
    unknown: list[str] = field(default_factory=list)
    """Data the matrix lacks for this candidate (compiled architectures): not clean, not an error."""

    @property
    def clean(self) -> bool:
        return not self.errors and not self.warnings and not self.unknown

    @property
    def tier(self) -> int:
        """0: passes check with no warning; 1: warnings only; 2: no error, but data the matrix lacks; 3: errors."""
        if self.errors:
            return 3
        if self.unknown:
            return 2
        return 1 if self.warnings else 0


# Checks whose skip for lack of matrix data leaves a candidate unproven (not clean, not an error).
_DATA_CHECKS = {
    "driver.cuda": "its driver requirement is unknown to the matrix",
    "wheel.arch": "its compiled architectures are unknown to the matrix",
}


def _evaluate(recheck: Recheck, changes: dict[str, str]) -> _Eval:
    rep = recheck.report(tuple(changes.items()))
    unknown = [
        _DATA_CHECKS[s.id]
        for s in rep.skipped
        if s.id in _DATA_CHECKS and ("matrix" in s.reason and "give --" not in s.reason)
    ]
    ver = Version(Version(next(iter(changes.values()))).public)
    tag = Version(changes["torch"]).local if "torch" in changes else None
    return _Eval(
        ver,
        tag,
        dict(changes),
        [f for f in rep.findings if f.severity == "error"],
        [f for f in rep.findings if f.severity == "warning"],
        unknown,
    )


def _driver_need(ctx: Ctx, cuda: str, os_name: str) -> str:
    floor, own, _ = driver_requirement(ctx.m, Version(cuda), os_name)
    # The lower of the two runs it (CUDA 11.0's own driver is below the 11.x minor-version floor).
    need = min((d for d in (floor, own) if d is not None), key=Version, default=None)
    if need is None:
        return f"the {os_name} driver requirement of CUDA {cuda} is unknown to the matrix"
    major = Version(cuda).release[0]
    return (
        f"needs driver ≥ {need} (CUDA {major}.x)"
        if need == floor and major in ctx.m.minor_compat
        else f"needs driver ≥ {need} (CUDA {cuda})"
    )


def _sm(f: Finding) -> str:
    cc = f.facts.get("cc")
    try:
        return parse_cc(str(cc)).sm if cc else "?"
    except InputError:
        return str(cc)


def _why(ctx: Ctx, ev: _Eval, what: str) -> str:
    """The real blocker of one candidate, named from the resolver's own findings (errors first)."""
    out: list[str] = []
    for f in ev.errors:
        if f.id == DRIVER_CUDA and "cuda" in f.facts and "driver" in f.facts:
            out.append(_driver_need(ctx, str(f.facts["cuda"]), ctx.driver_os()))
        elif f.id == WHEEL_ARCH:
            out.append(f"this GPU ({_sm(f)}) is not compiled into {what} wheels")
        elif f.id == PYTHON_FRAMEWORK:
            out.append(f"no wheels for Python {ctx.python_tag}")
        elif f.id == TF_WINDOWS:
            out.append("no GPU support on native Windows after TensorFlow 2.10 (use WSL2)")
        elif f.id.startswith("known."):
            row = next((k for k in ctx.m.known_issues if f"known.{k.id}" == f.id), None)
            out.append(f"{f.title} ({row.source})" if row else f.title)
        else:
            out.append(f.title)
    if not out:
        for f in ev.warnings:
            if f.id == DRIVER_CUDA and "cuda" in f.facts:
                _, own, _ = driver_requirement(ctx.m, Version(str(f.facts["cuda"])), ctx.driver_os())
                out.append(
                    "runs only under CUDA minor-version compatibility"
                    + (f" (full support needs driver ≥ {own})" if own else "")
                )
            elif f.id == WHEEL_ARCH:
                out.append(f"this GPU ({_sm(f)}) runs {what} wheels only through PTX JIT")
            else:
                out.append(f"only with a warning: {f.title}")
        out += ev.unknown
    return "; ".join(dict.fromkeys(out)) or "no release matches"


def _group_blocked(name: str, fails: list[tuple[Version, str]], newest: Version) -> list[dict[str, str]]:
    """One entry per distinct cause with the releases it blocks ('torch 2.11.0 and newer: needs driver ≥ 580')."""
    spans: dict[str, list[Version]] = {}
    for ver, why in fails:
        spans.setdefault(why, []).append(ver)
    out = []
    for why, vers in sorted(spans.items(), key=lambda x: min(x[1]), reverse=True):
        lo, hi = min(vers), max(vers)
        what = (
            f"{name} {lo}"
            if lo == hi
            else (f"{name} {lo} and newer" if hi == newest else f"{name} {lo} to {hi}")
        )
        out.append({"what": what, "why": why})
    return out


def _unavailable(blocked: list[dict[str, str]]) -> str:
    return "; ".join(f"{b['what']}: {b['why']}" for b in blocked) or "no release matches"


def _best(evals: list[_Eval]) -> _Eval:
    """The candidate of a release that comes closest to working (fewest errors, then warnings)."""
    return min(evals, key=lambda e: (e.tier, len(e.errors), len(e.warnings) + len(e.unknown)))


def _choose(
    per_release: list[tuple[Version, list[_Eval]]], prefer: Callable[[_Eval], tuple[Any, ...]]
) -> Optional[_Eval]:
    """The newest release with a candidate of the best tier found anywhere: warning-free when any warning-free
    one exists (what `compat check` then confirms), else warnings only, else unproven by the matrix."""
    tiers = [e.tier for _, evs in per_release for e in evs if e.tier < 3]
    if not tiers:
        return None
    want = min(tiers)
    for _, evs in per_release:
        ok = [e for e in evs if e.tier == want]
        if ok:
            return min(ok, key=prefer)
    return None


def suggest_torch(
    ctx: Ctx, facts: Facts, want_gpu: bool
) -> tuple[Optional[Pick], list[dict[str, str]], Optional[str]]:
    releases = sorted(
        (r for r in ctx.m.torch if not r.version.is_prerelease), key=lambda r: r.version, reverse=True
    )
    if not releases:
        return None, [], "the matrix has no PyTorch releases"
    newest = releases[0]
    os_name = ctx.os or "linux"
    gpu_ok = want_gpu and os_name != "macos"
    per_release: list[tuple[Version, list[_Eval]]] = []
    by_eval: dict[int, tuple[TorchRelease, TorchVariant]] = {}
    recheck = Recheck(facts, ctx.m)
    for r in releases:
        cands = [v for v in r.variants if v.is_cuda] if gpu_ok else [v for v in r.variants if v.tag == "cpu"]
        if not cands and not gpu_ok:
            cands = [v for v in r.variants if not v.is_cuda and not v.tag.startswith("rocm")]
        evs = []
        for v in cands:
            ev = _evaluate(recheck, {"torch": f"{r.raw}+{v.tag}"})
            by_eval[id(ev)] = (r, v)
            evs.append(ev)
        if evs:
            per_release.append((r.version, evs))

    def prefer(e: _Eval) -> tuple[Any, ...]:
        r, v = by_eval[id(e)]
        cuda = Version(v.cuda or "0").release
        return (0 if v.tag == pypi_default_tag(r, os_name) else 1, tuple(-x for x in cuda))

    chosen = _choose(per_release, prefer)
    fails = [
        (ver, _why(ctx, _best(evs), f"{_best(evs).tag}"))
        for ver, evs in per_release
        if chosen is None or ver > chosen.version
    ]
    blocked = _group_blocked("torch", fails, newest.version)
    if chosen is None:
        return None, blocked, _unavailable(blocked)
    r, v = by_eval[id(chosen)]
    inst = installer(facts)
    command, wheel = torch_command(r, v, os_name, inst)
    pick = Pick(
        r.raw,
        v.tag,
        command,
        _torch_reason(ctx, r, v, newest),
        dict(chosen.changes),
        wheel,
        [f.title for f in chosen.warnings],
        inst.note,
    )
    return pick, blocked, None


def _torch_reason(ctx: Ctx, r: TorchRelease, v: TorchVariant, newest: TorchRelease) -> str:
    bits = [f"newest PyTorch whose {v.tag} build"]
    if v.is_cuda:
        bits.append(
            f"(CUDA {v.cuda}) runs on driver {ctx.driver_raw}" if ctx.driver_raw else f"(CUDA {v.cuda})"
        )
        if _ccs(ctx):
            bits.append("with native kernels for " + ", ".join(c.sm for c in _ccs(ctx)))
    if ctx.python_tag is not None:
        bits.append(f"{'and ' if v.is_cuda else ''}has Python {ctx.python_tag} wheels")
    if r.version == newest.version:
        bits.append("(the newest release)")
    return " ".join(bits)


def suggest_tf(
    ctx: Ctx, facts: Facts, want_gpu: bool
) -> tuple[Optional[Pick], list[dict[str, str]], Optional[str]]:
    releases = sorted(
        (r for r in ctx.m.tensorflow if not r.version.is_prerelease), key=lambda r: r.version, reverse=True
    )
    if not releases:
        return None, [], "the matrix has no TensorFlow releases"
    per_release: list[tuple[Version, list[_Eval]]] = []
    rows: dict[Version, TfRelease] = {}
    recheck = Recheck(facts, ctx.m)
    for r in releases:
        per_release.append((r.version, [_evaluate(recheck, {"tensorflow": r.raw})]))
        rows[r.version] = r
    chosen = _choose(per_release, lambda e: ())
    fails = [
        (ver, _why(ctx, evs[0], "TensorFlow's"))
        for ver, evs in per_release
        if chosen is None or ver > chosen.version
    ]
    blocked = _group_blocked("tensorflow", fails, releases[0].version)
    if chosen is None:
        return None, blocked, _unavailable(blocked)
    r = rows[chosen.version]
    needs = ""
    if want_gpu and not (ctx.os == "linux" and r.and_cuda) and r.cuda:
        needs = f"; it needs CUDA {r.cuda} and cuDNN {r.cudnn} installed on the system"
    reason = (
        "newest TensorFlow that runs here"
        + (f" on the GPU (CUDA {r.cuda}, cuDNN {r.cudnn})" if want_gpu else " on the CPU")
        + needs
    )
    inst = installer(facts)
    pick = Pick(
        r.raw,
        "and-cuda" if want_gpu and r.and_cuda and ctx.os == "linux" else None,
        tf_command(r, want_gpu, ctx.os or "linux", inst),
        reason,
        dict(chosen.changes),
        None,
        [f.title for f in chosen.warnings],
        inst.note,
    )
    return pick, blocked, None


MANUAL = {
    "torch": "No official PyTorch wheel works here: change what blocks it (above), or build PyTorch from source "
    "for this GPU (https://github.com/pytorch/pytorch#from-source).",
    "tensorflow": "No official TensorFlow wheel works here: change what blocks it (above), or build TensorFlow "
    "from source (https://www.tensorflow.org/install/source).",
}


def suggest(facts: Facts, m: Matrix) -> Suggestion:
    ctx = build_context(facts, m)
    want_gpu = bool(ctx.gpus) or ctx.driver is not None
    # A driver branch that no longer drives this GPU blocks everything: answer for the branch that does.
    unsupported = [f for f in check_driver_gpu(ctx) if isinstance(f, Finding)]
    first: list[dict[str, str]] = []
    branch_note = jax_note = ""
    if unsupported:
        first = [
            {"what": "every GPU build", "why": f"{unsupported[0].title}: {unsupported[0].fixes[0].text}"}
        ]
        # Answer for the newest driver of the last branch that supports the GPU (as far as the matrix knows it).
        last = min(
            r.last_driver for g in _ccs(ctx) if (r := m.cc_row(g)) is not None and r.last_driver is not None
        )
        known = [
            (Version(d), d)
            for r in m.cuda_releases
            for d in r.min_driver.values()
            if d is not None and Version(d).release[0] <= last
        ]
        if known:
            facts = apply_changes(facts, {"driver": max(known)[1]})
        else:
            facts = Facts(
                {k: v for k, v in facts.values.items() if k != "driver"}, facts.gpus, facts.gpus_source
            )
        ctx = build_context(facts, m)
        branch_note = f" (after switching to the R{last} driver branch)"
    elif undriven := undriven_gpus(ctx):
        # A driver older than the GPU drives nothing: the driver must change first; answer for the one it needs.
        too_old = [f for f in check_driver_gpu_too_new(ctx) if isinstance(f, Finding)]
        need = max((n for _, n in undriven), key=lambda n: n.branch)
        first = [
            {
                "what": "every GPU build",
                "why": f"{too_old[0].title}: the driver must change first (R{need.branch} or newer)",
            }
        ]
        facts = apply_changes(facts, {"driver": need.raw})
        ctx = build_context(facts, m)
        branch_note = jax_note = f" (after upgrading the driver to R{need.branch} or newer, ≥ {need.raw})"
    t, tb, tr = suggest_torch(ctx, facts, want_gpu)
    f, fb, fr = suggest_tf(ctx, facts, want_gpu)
    for pick in (t, f):
        if pick is not None and branch_note:
            pick.reason += branch_note
            drv = facts.get("driver")
            if drv is not None and drv.raw:
                # The answer holds on that branch's driver: `compat check` with these changes confirms it.
                pick.changes["driver"] = drv.raw
    s = Suggestion(t, f, first + tb + fb)
    if t is None and tr:
        s.unavailable["torch"] = tr
        s.manual["torch"] = MANUAL["torch"]
    if f is None and fr:
        s.unavailable["tensorflow"] = fr
        s.manual["tensorflow"] = MANUAL["tensorflow"]
    s.jax, jr = suggest_jax(ctx, facts, want_gpu)
    if s.jax is not None and jax_note:
        s.jax.reason += jax_note
        s.jax.changes["driver"] = ctx.driver_raw or ""
    if s.jax is None and jr:
        s.unavailable["jax"] = jr
    return s


def suggest_jax(ctx: Ctx, facts: Facts, want_gpu: bool) -> tuple[Optional[Pick], Optional[str]]:
    """The newest JAX release (and CUDA build) that the `jax.*` checks pass on these facts."""
    from compat.checks.jax import newest_for
    from compat.jaxmatrix import JaxTableError, jax_table

    try:
        table = jax_table(ctx.m)
    except JaxTableError:
        return None, "the matrix has no JAX table"
    py = facts.get("python")
    python = py.raw if py is not None and py.raw else None
    if python and python.count(".") > 1:
        python = ".".join(python.split(".")[:2])
    if not want_gpu:
        for r in table.releases:
            if not python or r.python_ok(python) is not False:
                return (
                    Pick(
                        r.version,
                        None,
                        jax_command(r, None),
                        "the newest JAX release (CPU)",
                        {"jax": r.version},
                    ),
                    None,
                )
        return None, f"no JAX release in the matrix has wheels for Python {python}"
    if (ctx.os or "linux") == "windows":
        return None, "JAX has no NVIDIA GPU support on native Windows (WSL2: experimental)"
    ccs = _ccs(ctx)
    best = newest_for(table, ctx.m, python=python, driver=ctx.driver_raw, cc=min(ccs) if ccs else None)
    if best is None:
        return None, "no JAX release in the matrix runs on this driver, GPU and Python"
    r, major = best
    reason = f"the newest JAX release whose CUDA {major} build runs on these facts"
    return Pick(
        r.version, f"cuda{major}", jax_command(r, major), reason, {"jax": f"{r.version}+cuda{major}"}
    ), None
