"""`compat suggest`: the newest PyTorch and TensorFlow that work on a machine, and what blocks anything newer.

Pure: facts + matrix in, a suggestion document out. Versions compare as versions, never as strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from packaging.version import Version

from compat.facts import Facts
from compat.findings import Finding
from compat.matrix import Matrix, TfRelease, TorchRelease, TorchVariant
from compat.resolver import (
    Ctx,
    arch_support,
    build_context,
    check_driver_gpu,
    driver_can_run,
    driver_requirement,
)
from compat.versions import CC


@dataclass
class Pick:
    version: str
    variant: Optional[str]
    command: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "variant": self.variant,
            "command": self.command,
            "reason": self.reason,
        }


@dataclass
class Suggestion:
    torch: Optional[Pick]
    tensorflow: Optional[Pick]
    blocked: list[dict[str, str]] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "torch": self.torch.to_json() if self.torch else None,
            "tensorflow": self.tensorflow.to_json() if self.tensorflow else None,
            "blocked": self.blocked,
            "unavailable": dict(sorted(self.unavailable.items())),
        }


def _ccs(ctx: Ctx) -> list[CC]:
    return sorted({g.cc for g in (ctx.gpus or []) if g.cc is not None})


def _known_blocker(ctx: Ctx, framework: str, version: Version) -> Optional[str]:
    """A known-bad combination (severity error) that this release would hit on this machine."""
    values: dict[str, list[Version]] = {framework: [version]}
    if ctx.python is not None:
        values["python"] = [ctx.python]
    if ctx.driver is not None:
        values["driver"] = [ctx.driver]
    ccs = _ccs(ctx)
    if ccs:
        values["cc"] = [Version(str(c)) for c in ccs]
    for issue in ctx.m.known_issues:
        if issue.severity != "error" or framework not in issue.when or not set(issue.when) <= set(values):
            continue
        if all(any(v in spec for v in values[k]) for k, spec in issue.when.items()):
            return f"{issue.title} ({issue.source})"
    return None


def _why_variant_fails(ctx: Ctx, r: TorchRelease, v: TorchVariant) -> Optional[str]:
    """None when variant `v` of release `r` works on this machine, else every reason it does not."""
    why: list[str] = []
    if ctx.python_tag is not None and ctx.python_tag not in r.python:
        why.append(f"no wheels for Python {ctx.python_tag}")
    if v.is_cuda:
        os_name = ctx.driver_os()
        if ctx.driver is not None and v.cuda:
            state = driver_can_run(ctx.m, ctx.driver, Version(v.cuda), os_name)
            if state == "no" or state is None:
                why.append(_driver_need(ctx, v.cuda, os_name))
        for cc in _ccs(ctx):
            if v.archs is None:
                why.append("its compiled architectures are unknown")
                break
            how, _ = arch_support(v.archs, cc)
            if how == "none":
                why.append(f"this GPU ({cc.sm}) is not compiled into {v.tag} wheels")
            elif (
                how == "ptx"
                and ctx.driver is not None
                and v.cuda
                and driver_can_run(ctx.m, ctx.driver, Version(v.cuda), os_name) != "ok"
            ):
                why.append(f"this GPU ({cc.sm}) needs PTX JIT, which needs the driver of CUDA {v.cuda}")
    known = _known_blocker(ctx, "torch", r.version)
    if known:
        why.append(known)
    return "; ".join(why) or None


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


def _torch_command(r: TorchRelease, v: TorchVariant, os_name: str) -> str:
    default = (
        r.pypi_default if os_name == "linux" else r.pypi_default_windows if os_name == "windows" else "cpu"
    )
    if v.tag == default:
        return f"pip install torch=={r.raw}"
    url = v.index_url or f"https://download.pytorch.org/whl/{v.tag}"
    return f"pip install torch=={r.raw} --index-url {url}"


def suggest_torch(ctx: Ctx, want_gpu: bool) -> tuple[Optional[Pick], list[dict[str, str]], Optional[str]]:
    releases = sorted(
        (r for r in ctx.m.torch if not r.version.is_prerelease), key=lambda r: r.version, reverse=True
    )
    if not releases:
        return None, [], "the matrix has no PyTorch releases"
    newest = releases[0]
    os_name = ctx.os or "linux"
    gpu_ok = want_gpu and os_name != "macos"
    fails: list[tuple[Version, str]] = []
    for r in releases:
        cands = [v for v in r.variants if v.is_cuda] if gpu_ok else [v for v in r.variants if v.tag == "cpu"]
        if not cands and not gpu_ok:
            cands = [v for v in r.variants if not v.is_cuda and not v.tag.startswith("rocm")]
        cands.sort(key=lambda v: Version(v.cuda or "0"), reverse=True)
        reasons = []
        for v in cands:
            why = _why_variant_fails(ctx, r, v)
            if why is None:
                pick = Pick(r.raw, v.tag, _torch_command(r, v, os_name), _torch_reason(ctx, r, v, newest))
                return pick, _group_blocked("torch", fails, newest.version), None
            reasons.append((v.tag, why))
        if reasons:
            # The newest-CUDA variant's reason stands for the release.
            fails.append((r.version, reasons[0][1]))
    blocked = _group_blocked("torch", fails, newest.version)
    return None, blocked, _unavailable(blocked)


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


def _tf_command(r: TfRelease, gpu: bool, os_name: str) -> str:
    if gpu and os_name == "linux" and r.and_cuda:
        return f"pip install 'tensorflow[and-cuda]=={r.raw}'"
    return f"pip install tensorflow=={r.raw}"


def _why_tf_fails(ctx: Ctx, r: TfRelease, gpu: bool) -> Optional[str]:
    why: list[str] = []
    if ctx.python_tag is not None and ctx.python_tag not in r.python:
        why.append(f"no wheels for Python {ctx.python_tag}")
    if gpu:
        if ctx.os == "windows" and r.windows_gpu is False:
            why.append("no GPU support on native Windows after TensorFlow 2.10 (use WSL2)")
        elif ctx.os == "macos":
            why.append("no CUDA on macOS")
        elif ctx.driver is not None and r.cuda:
            state = driver_can_run(ctx.m, ctx.driver, Version(r.cuda), ctx.driver_os())
            if state == "no" or state is None:
                why.append(_driver_need(ctx, r.cuda, ctx.driver_os()))
        for cc in _ccs(ctx):
            if r.archs is not None and arch_support(r.archs, cc)[0] == "none":
                why.append(f"this GPU ({cc.sm}) is not compiled into TensorFlow's wheels")
        known = _known_blocker(ctx, "tensorflow", r.version)
        if known:
            why.append(known)
    return "; ".join(why) or None


def suggest_tf(ctx: Ctx, want_gpu: bool) -> tuple[Optional[Pick], list[dict[str, str]], Optional[str]]:
    releases = sorted(
        (r for r in ctx.m.tensorflow if not r.version.is_prerelease), key=lambda r: r.version, reverse=True
    )
    if not releases:
        return None, [], "the matrix has no TensorFlow releases"
    fails: list[tuple[Version, str]] = []
    for r in releases:
        why = _why_tf_fails(ctx, r, want_gpu)
        if why is None:
            needs = ""
            if want_gpu and not (ctx.os == "linux" and r.and_cuda) and r.cuda:
                needs = f"; it needs CUDA {r.cuda} and cuDNN {r.cudnn} installed on the system"
            reason = (
                "newest TensorFlow that runs here"
                + (f" on the GPU (CUDA {r.cuda}, cuDNN {r.cudnn})" if want_gpu else " on the CPU")
                + needs
            )
            return (
                Pick(
                    r.raw,
                    "and-cuda" if want_gpu and r.and_cuda and ctx.os == "linux" else None,
                    _tf_command(r, want_gpu, ctx.os or "linux"),
                    reason,
                ),
                _group_blocked("tensorflow", fails, releases[0].version),
                None,
            )
        fails.append((r.version, why))
    blocked = _group_blocked("tensorflow", fails, releases[0].version)
    return None, blocked, _unavailable(blocked)


def suggest(facts: Facts, m: Matrix) -> Suggestion:
    ctx = build_context(facts, m)
    want_gpu = bool(ctx.gpus) or ctx.driver is not None
    # A driver branch that no longer drives this GPU blocks everything: answer for the branch that does.
    unsupported = [f for f in check_driver_gpu(ctx) if isinstance(f, Finding)]
    first: list[dict[str, str]] = []
    branch_note = ""
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
        best = max(known) if known else None
        ctx.driver, ctx.driver_raw = (best[0], best[1]) if best else (None, None)
        branch_note = f" (after switching to the R{last} driver branch)"
    t, tb, tr = suggest_torch(ctx, want_gpu)
    f, fb, fr = suggest_tf(ctx, want_gpu)
    for pick in (t, f):
        if pick is not None and branch_note:
            pick.reason += branch_note
    s = Suggestion(t, f, first + tb + fb)
    if t is None and tr:
        s.unavailable["torch"] = tr
    if f is None and fr:
        s.unavailable["tensorflow"] = fr
    return s


def render_suggestion(s: Suggestion) -> str:
    lines = []
    for name, pick in (("PyTorch", s.torch), ("TensorFlow", s.tensorflow)):
        key = "torch" if name == "PyTorch" else "tensorflow"
        if pick is None:
            lines.append(f"{name}: no release works here — {s.unavailable.get(key, 'unknown')}")
            continue
        lines.append(
            f"{name} {pick.version}" + (f" ({pick.variant})" if pick.variant else "") + f": {pick.reason}"
        )
        lines.append(f"  $ {pick.command}")
    if s.blocked:
        lines.append("")
        lines.append("What blocks anything newer:")
        for b in s.blocked:
            lines.append(f"  - {b['what']}: {b['why']}")
    return "\n".join(lines) + "\n"
