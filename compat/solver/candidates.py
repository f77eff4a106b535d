"""Candidate stack changes, one generator per axis (framework, Python, toolkit, cuDNN, driver), with their cost.

A candidate changes facts in `compat check` flag vocabulary. Its cost orders it by the size of the change:
another variant of the same release < a newer patch < a newer minor (or another toolkit) < an older release
< another Python < a driver upgrade. Generators apply only cheap necessary conditions (Python wheels exist,
the driver runs the CUDA at all, the GPU's architecture is compiled in); the solver re-checks every candidate
it shows through the resolver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from packaging.version import Version

from compat._valueclass import valueclass
from compat.checks.context import Ctx
from compat.checks.driver import undriven_gpus
from compat.checks.rules import arch_support, driver_can_run
from compat.installcmd import installer, pypi_default_tag, tf_command, torch_command
from compat.matrix import TfRelease, TorchRelease
from compat.versions import CC, major_minor

VARIANT, PATCH, MINOR, TOOLKIT, OLDER, PYTHON, DRIVER = 0, 1, 2, 2, 3, 4, 5
CATEGORY_NAMES = {
    VARIANT: "another variant of the same release",
    PATCH: "a newer patch release",
    MINOR: "a newer release",
    OLDER: "an older release",
    PYTHON: "another Python",
    DRIVER: "a driver upgrade",
}


@valueclass
class Candidate:
    """One stack change the solver may propose."""

    axis: str
    """"torch", "tensorflow", "python", "cuda", "cudnn" or "driver"."""
    changes: tuple[tuple[str, str], ...]
    """Facts it changes, in `compat check` flag vocabulary."""
    category: int
    """Size-of-change class (VARIANT … DRIVER)."""
    tiebreak: tuple[float, ...]
    """Order inside the class: nearer first."""
    text: str
    command: str | None
    kind: str
    wheel: str | None = None
    """For torch: "pypi-default" (plain `pip install torch==X`) or "official-variant"."""
    note: str = ""


def _driver_runs(ctx: Ctx, cuda: str | None) -> bool:
    if ctx.driver is None or cuda is None or ctx.os == "macos":
        return True
    if undriven_gpus(ctx):  # a driver older than the GPU runs no GPU build: the driver must change first
        return False
    return driver_can_run(ctx.m, ctx.driver, Version(cuda), ctx.driver_os()) in ("ok", "minor")


def _release_cost(cur: Version | None, ver: Version, minors: list[tuple[int, ...]]) -> tuple[int, float]:
    """(category, distance in minor releases) of moving from `cur` to `ver`."""
    if cur is None:
        return MINOR, 0.0
    key = tuple(ver.release[:2])
    here = tuple(cur.release[:2])
    below = sum(1 for m in minors if m < here)
    pos_cur = minors.index(here) if here in minors else below - 0.5
    dist = abs(minors.index(key) - pos_cur)
    if ver == cur:
        return VARIANT, 0.0
    if ver > cur:
        return (PATCH if key == here else MINOR), dist
    return OLDER, dist


def _minors(versions: Iterable[Version]) -> list[tuple[int, ...]]:
    return sorted({tuple(v.release[:2]) for v in versions})


def torch_candidates(ctx: Ctx) -> list[Candidate]:
    t = ctx.torch
    if t is None or ctx.os == "macos":
        return []
    cur = Version(t.version.public)
    releases = [r for r in ctx.m.torch if not r.version.is_prerelease or cur.is_prerelease]
    minors = _minors(r.version for r in releases)
    inst = installer(ctx.facts)
    os_name = ctx.os or "linux"
    ccs = [g.cc for g in ctx.gpus or [] if g.cc is not None]
    out: list[Candidate] = []
    for r in releases:
        if ctx.python_tag is not None and ctx.python_tag not in r.python:
            continue
        category, dist = _release_cost(cur, r.version, minors)
        default = pypi_default_tag(r, os_name)
        for v in r.variants:
            if not v.is_cuda or (r.version == cur and v.tag == t.tag and t.build != "cpu"):
                continue
            if not _driver_runs(ctx, v.cuda):
                continue
            if ccs and (v.archs is None or any(arch_support(v.archs, c)[0] == "none" for c in ccs)):
                continue
            cmd, wheel = torch_command(r, v, os_name, inst, t.version if r.version == cur else None)
            out.append(
                Candidate(
                    "torch",
                    (("torch", f"{r.raw}+{v.tag}"),),
                    category,
                    (
                        dist,
                        -r.version.micro,
                        0 if v.tag == default else 1,
                        -float(Version(v.cuda or "0").release[0]),
                        -float(Version(v.cuda or "0").release[1]),
                    ),
                    f"Install the {v.tag} build of torch {r.raw}{inst.suffix}",
                    cmd,
                    "shell",
                    wheel,
                    inst.note,
                )
            )
    return out


def tensorflow_candidates(ctx: Ctx) -> list[Candidate]:
    tf = ctx.tf
    if tf is None:
        return []
    cur = Version(tf.version.public)
    releases = [r for r in ctx.m.tensorflow if not r.version.is_prerelease or cur.is_prerelease]
    minors = _minors(r.version for r in releases)
    inst = installer(ctx.facts)
    gpu = bool(ctx.gpus) or ctx.driver is not None or ctx.require_gpu
    os_name = ctx.os or "linux"
    ccs = [g.cc for g in ctx.gpus or [] if g.cc is not None]
    out: list[Candidate] = []
    for r in releases:
        if ctx.python_tag is not None and ctx.python_tag not in r.python:
            continue
        if r.version == cur and tf.build != "cpu":
            continue
        if gpu and not _tf_gpu_possible(ctx, r, ccs):
            continue
        category, dist = _release_cost(cur, r.version, minors)
        # A native-Windows GPU build (≤ 2.10) loads the system's CUDA and cuDNN: the fix names them.
        needs = (
            f"; its GPU build needs CUDA {r.cuda} and cuDNN {r.cudnn} installed (TensorFlow's tested build)"
            if gpu and os_name == "windows" and r.windows_gpu and r.cuda and r.cudnn
            else ""
        )
        out.append(
            Candidate(
                "tensorflow",
                (("tensorflow", r.raw),),
                category,
                (dist, -r.version.micro),
                f"Install TensorFlow {r.raw}"
                + (" with its CUDA libraries" if gpu and r.and_cuda and os_name == "linux" else "")
                + inst.suffix
                + needs,
                tf_command(r, gpu, os_name, inst, cpu_installed=tf.build == "cpu"),
                "shell",
                None,
                inst.note,
            )
        )
    return out


def _tf_gpu_possible(ctx: Ctx, r: TfRelease, ccs: list[CC]) -> bool:
    if ctx.os == "windows" and r.windows_gpu is False:
        return False
    if not _driver_runs(ctx, r.cuda):
        return False
    return not (r.archs is not None and any(arch_support(r.archs, c)[0] == "none" for c in ccs))


def python_candidates(ctx: Ctx) -> list[Candidate]:
    if ctx.python is None or ctx.python_tag is None:
        return []
    rels: list[TorchRelease | TfRelease] = []
    if ctx.torch is not None and ctx.torch.release is not None:
        rels.append(ctx.torch.release)
    if ctx.tf is not None and ctx.tf.release is not None:
        rels.append(ctx.tf.release)
    if not rels:
        return []
    free = ctx.python_tag.endswith("t")
    tags = set.intersection(*(set(r.python) for r in rels))
    out: list[Candidate] = []
    for tag in sorted(tags):
        if tag == ctx.python_tag or tag.endswith("t") != free:
            continue
        v = Version(tag.rstrip("t"))
        dist = abs(v.release[1] - ctx.python.release[1]) + 100 * abs(v.release[0] - ctx.python.release[0])
        names = " and ".join(
            f"{'torch' if isinstance(r, TorchRelease) else 'TensorFlow'} {r.raw}" for r in rels
        )
        out.append(
            Candidate(
                "python",
                (("python", tag),),
                PYTHON,
                (float(dist), -float(v.release[1])),
                f"Use Python {tag} ({names} publishes wheels for it), e.g. in a new virtual environment",
                None,
                "manual",
            )
        )
    return out


def driver_candidates(ctx: Ctx) -> list[Candidate]:
    if ctx.driver is None or ctx.os == "macos":
        return []
    os_name = ctx.driver_os()
    values: dict[Version, str] = {}
    for rel in ctx.m.cuda_releases:
        d = rel.min_driver.get(os_name)
        if d is not None:
            values.setdefault(Version(d), d)
    for mc in ctx.m.minor_compat.values():
        d = mc.floor.get(os_name)
        if d is not None:
            values.setdefault(Version(d), d)
    out: list[Candidate] = []
    for i, (v, raw) in enumerate(sorted(values.items())):
        if v <= ctx.driver:
            continue
        out.append(
            Candidate(
                "driver",
                (("driver", raw),),
                DRIVER,
                (float(i),),
                f"Install NVIDIA driver ≥ {raw} ({ctx.os_label()})",
                None,
                "manual",
            )
        )
    return out


def _framework_cuda_major(ctx: Ctx) -> int | None:
    for fw in (ctx.torch, ctx.tf):
        if fw is not None and fw.cuda and fw.build != "cpu":
            return Version(fw.cuda).release[0]
    return None


def cuda_candidates(ctx: Ctx) -> list[Candidate]:
    """Toolkits: the oldest newer one that targets every GPU, runs on the driver and matches the framework's CUDA
    major comes first; older toolkits (a GPU support removed) nearest first."""
    if ctx.cuda is None:
        return []
    cur = ctx.cuda
    want_major = _framework_cuda_major(ctx)
    ccs = [g.cc for g in ctx.gpus or [] if g.cc is not None]
    seen: set[str] = set()
    rels = sorted(ctx.m.cuda_releases, key=lambda r: r.version)
    out: list[Candidate] = []
    for i, rel in enumerate(rels):
        mm = major_minor(rel.version)
        if mm in seen or mm == major_minor(cur):
            continue
        seen.add(mm)
        if (
            ctx.driver is not None
            and ctx.os != "macos"
            and driver_can_run(ctx.m, ctx.driver, rel.version, ctx.driver_os()) != "ok"
        ):
            continue
        if any(ctx.m.cuda_can_compile(rel.version, c) is False for c in ccs):
            continue
        newer = rel.version > cur
        mismatch = 0.0 if want_major is None or rel.version.release[0] == want_major else 1.0
        out.append(
            Candidate(
                "cuda",
                (("cuda", mm),),
                TOOLKIT if newer else OLDER,
                (mismatch, float(i) if newer else float(-i)),
                f"Use CUDA toolkit {mm} ({rel.name})",
                None,
                "manual",
            )
        )
    return out


def cudnn_candidates(ctx: Ctx) -> list[Candidate]:
    if ctx.cudnn is None:
        return []
    cur = ctx.cudnn
    rels = sorted(ctx.m.cudnn, key=lambda r: r.version)
    out: list[Candidate] = []
    for i, rel in enumerate(rels):
        if rel.version == cur:
            continue
        newer = rel.version > cur
        majors = ", ".join(sorted({f"CUDA {p.cuda_major}.x" for p in rel.packages}))
        out.append(
            Candidate(
                "cudnn",
                (("cudnn", rel.raw),),
                TOOLKIT if newer else OLDER,
                (float(i) if newer else float(-i),),
                f"Install cuDNN {rel.raw} (published for {majors})",
                None,
                "manual",
            )
        )
    return out


def and_cuda_candidates(ctx: Ctx) -> list[Candidate]:
    """The installed TensorFlow with its [and-cuda] extra (Linux): a holistic change, the CUDA and cuDNN its
    wheels pin replace the system's for it, so the candidate changes both (and the release, where its extra does
    not install from PyPI and a post release of the same build does: 2.15.0 -> 2.15.0.post1)."""
    tf = ctx.tf
    r = tf.release if tf is not None else None
    if tf is None or r is None or not r.and_cuda or ctx.os not in (None, "linux") or tf.build == "cpu":
        return []
    stack = r.and_cuda_stack()
    changes = dict(stack)
    text = f"Install TensorFlow {r.raw}'s pip CUDA libraries (CUDA {stack.get('cuda', '?')}"
    text += f", cuDNN {stack['cudnn']})" if "cudnn" in stack else ")"
    if r.and_cuda_release != r.raw:
        changes["tensorflow"] = r.and_cuda_release
        text += f" with {r.and_cuda_release}, the same build: {r.raw}'s extra does not install ({r.and_cuda_broken})"
    inst = installer(ctx.facts)
    return [
        Candidate(
            "tf_and_cuda",
            tuple(sorted(changes.items())),
            VARIANT,
            (0.0,),
            text + inst.suffix,
            tf_command(r, True, "linux", inst),
            "shell",
            None,
            inst.note,
        )
    ]


GENERATORS: dict[str, Callable[[Ctx], list[Candidate]]] = {
    "tf_and_cuda": and_cuda_candidates,
    "torch": torch_candidates,
    "tensorflow": tensorflow_candidates,
    "python": python_candidates,
    "cuda": cuda_candidates,
    "cudnn": cudnn_candidates,
    "driver": driver_candidates,
}
