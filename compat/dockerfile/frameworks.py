"""torch and TensorFlow installs: which release, build and CUDA a pip/conda line gives a stage."""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat.checks.rules import driver_requirement
from compat.dockerfile.actions import Install, where
from compat.dockerfile.model import (
    INDEX_TAG,
    PRERELEASE,
    UNPINNED,
    UNRESOLVED,
    Stage,
    TfState,
    TorchState,
)
from compat.findings import Finding, Fix
from compat.installcmd import PIP, pin_command, torch_command
from compat.matrix import Matrix, TorchRelease


def _spec_of(inst: Install) -> SpecifierSet | None:
    try:
        spec = SpecifierSet(inst.specifier) if inst.specifier else SpecifierSet()
        for one in spec:  # packaging reads a specifier's version only when comparing
            one.contains("0", prereleases=True)
    except (InvalidSpecifier, ValueError):  # ValueError: a release number of over 4300 digits
        return None
    return spec


def install_torch(st: Stage, inst: Install, line: int, m: Matrix) -> None:
    if inst.unresolved:
        st.findings.append(unresolved_finding(inst, line, "torch"))
        st.torch = TorchState(inst, None, line)
        return
    if inst.channel is not None:
        st.findings.append(_prerelease(inst, line))
        ctag = inst.index_tag or ""
        cuda = f"{ctag[2:-1]}.{ctag[-1]}" if re.fullmatch(r"cu\d{3}", ctag) else None
        build = "cuda" if cuda else ("cpu" if ctag == "cpu" else None)
        st.torch = TorchState(inst, None, line, build, cuda)
        return
    py = st.python.value if st.python else None
    tag: str | None = inst.index_tag
    if tag is not None and not tag.startswith(("cu", "cpu", "rocm")):
        tag = None  # xpu and other builds the matrix does not list: not judged
    if inst.tool == "conda":
        tag = (
            "cpu"
            if inst.conda_cpu
            else ("cu" + inst.conda_cuda.replace(".", "") if inst.conda_cuda else None)
        )
    version = inst.version
    if version is None:
        spec = _spec_of(inst)
        rel = _newest_torch(m, spec, py, tag if inst.index_kind == "index" else None)
        if rel is None:
            st.findings.append(
                Finding(
                    UNPINNED,
                    "info",
                    f"{inst.spec} matches no PyTorch release in the matrix",
                    f"The requirement {inst.spec!r} ({where(inst, line)}) matches no release compat knows "
                    f"(matrix updated {m.updated_for('pytorch.yaml')}{', for Python ' + py if py else ''}); "
                    "PyTorch checks are skipped for this stage.",
                    (),
                    {"requirement": inst.spec},
                    group="dockerfile",
                    line=line,
                )
            )
            st.torch = TorchState(inst, None, line)
            return
        version = rel.raw
        st.findings.append(_unpinned_note(m, inst, rel, tag, py, line, st.stack.cuda))
    v = Version(version)
    rel = m.torch_release(v)
    if rel is not None and v.public != rel.raw:
        version = rel.raw + (f"+{v.local}" if v.local else "")  # `torch==1.10` is release 1.10.0
        v = Version(version)
    raw = version
    if v.local is None and tag is not None:
        if rel is not None and rel.variant(tag) is None:
            tags = ", ".join(x.tag for x in rel.variants) or "none known"
            if inst.index_kind == "index":
                st.findings.append(
                    Finding(
                        INDEX_TAG,
                        "error",
                        f"torch {version} has no {tag} build: pip install fails",
                        f"{where(inst, line)} installs torch {version} from {inst.index_url}, the only index pip "
                        f"reads. PyTorch publishes torch {version} as {tags}; there is no {tag} wheel, so pip stops "
                        f"with 'No matching distribution found for torch=={version}'.",
                        _torch_tag_fixes(m, rel, tag),
                        {"torch": version, "index": tag},
                        group="dockerfile",
                        line=line,
                    )
                )
                st.torch = TorchState(inst, None, line)
                return
            default = rel.pypi_default or "unknown"
            st.findings.append(
                Finding(
                    INDEX_TAG,
                    "warning",
                    f"torch {version} has no {tag} build: the {tag} index is ignored",
                    f"{where(inst, line)} adds {inst.index_url} beside PyPI, but PyTorch publishes torch {version} "
                    f"only as {tags}. pip silently installs PyPI's torch {version} ({default}) instead of a {tag} "
                    "build.",
                    _torch_tag_fixes(m, rel, tag),
                    {"torch": version, "index": tag},
                    group="dockerfile",
                    line=line,
                )
            )
        else:
            raw = f"{version}+{tag}"
    if inst.tool == "conda" and tag is None and rel is not None:
        raw = version
    build = None
    local = Version(raw).local
    if local:
        build = (
            "cpu"
            if local.startswith("cpu")
            else "rocm"
            if local.startswith("rocm")
            else ("cuda" if local.startswith("cu") else None)
        )
    elif rel is not None:
        pypi = rel.pypi_default
        build = "cuda" if pypi and pypi.startswith("cu") else ("cpu" if pypi == "cpu" else None)
    cuda = None
    if rel is not None:
        var = rel.variant(local or (rel.pypi_default or ""))
        cuda = var.cuda if var is not None else None
    if inst.tool == "conda" and inst.conda_cuda:
        cuda = inst.conda_cuda
    st.torch = TorchState(inst, raw, line, build, cuda)


def _torch_tag_fixes(m: Matrix, rel: TorchRelease, tag: str) -> tuple[Fix, ...]:
    fixes: list[Fix] = []
    cuda_vars = sorted(
        (v for v in rel.variants if v.is_cuda), key=lambda v: Version(v.cuda or "0"), reverse=True
    )
    if cuda_vars:
        v = cuda_vars[0]
        fixes.append(
            Fix(
                f"Use an index torch {rel.raw} is published on ({v.tag})",
                torch_command(rel, v, "linux", PIP)[0],
            )
        )
    newer = [r for r in m.torch if r.variant(tag) is not None]
    if newer:
        r = (
            min(newer, key=lambda r: r.version)
            if Version(rel.raw) < min(x.version for x in newer)
            else max(newer, key=lambda r: r.version)
        )
        var = r.variant(tag)
        assert var is not None
        fixes.append(
            Fix(
                f"Or pin a torch release that has a {tag} build",
                torch_command(r, var, "linux", PIP)[0],
            )
        )
    return tuple(fixes)


def _newest_torch(
    m: Matrix, spec: SpecifierSet | None, py: str | None, tag: str | None
) -> TorchRelease | None:
    cands = []
    for r in m.torch:
        if spec is not None and not spec.contains(r.version, prereleases=False):
            continue
        if r.version.is_prerelease:
            continue
        if py is not None and r.python and py not in r.python:
            continue
        if tag is not None and r.variant(tag) is None:
            continue
        cands.append(r)
    return max(cands, key=lambda r: r.version) if cands else None


def _driver_need(m: Matrix, cuda: str | None) -> str:
    if not cuda:
        return ""
    floor, own, _ = driver_requirement(m, Version(cuda), "linux")
    need = own or floor
    return f", which needs NVIDIA driver ≥ {need}" if need else ""


def _unpinned_note(
    m: Matrix,
    inst: Install,
    rel: TorchRelease,
    tag: str | None,
    py: str | None,
    line: int,
    base_cuda: str | None = None,
) -> Finding:
    var = rel.variant(tag) if tag else None
    if var is None and rel.pypi_default:
        var = rel.variant(rel.pypi_default)
    what = (
        f"{var.tag} build, CUDA {var.cuda}"
        if var is not None and var.cuda
        else (var.tag if var else "default build")
    )
    torch_cuda = var.cuda if var is not None else None
    conflict = _base_conflict(m, torch_cuda, base_cuda, py)
    if conflict is not None and torch_cuda and base_cuda:
        return _conflict_finding(m, inst, rel, what, py, line, base_cuda, torch_cuda, conflict)
    return Finding(
        UNPINNED,
        "info",
        f"{inst.spec} resolves today to torch {rel.raw}",
        f"{where(inst, line)} does not pin torch: built today it installs torch {rel.raw} ({what}"
        f"{_driver_need(m, var.cuda if var else None)}){' for Python ' + py if py else ''}. A rebuild next "
        "month may get a different CUDA runtime.",
        (Fix("Pin the version the image was tested with", pin_command("torch", rel.raw)),),
        {"requirement": inst.spec, "torch": rel.raw},
        group="dockerfile",
        line=line,
    )


def _base_conflict(
    m: Matrix, torch_cuda: str | None, base_cuda: str | None, py: str | None
) -> tuple[TorchRelease, str, str] | None:
    """When today's torch is built for a newer CUDA major than the base image's CUDA: the newest torch with a
    build for the base's major, as (release, variant tag, index URL); None when there is no conflict or no such
    torch is known (the info note is given then)."""
    if not torch_cuda or not base_cuda:
        return None
    try:
        tmaj, bmaj = Version(torch_cuda).release[0], Version(base_cuda).release[0]
    except InvalidVersion:
        return None
    if tmaj <= bmaj:
        return None
    for r in sorted(m.torch, key=lambda r: r.version, reverse=True):
        if r.version.is_prerelease or (py and r.python and py not in r.python):
            continue
        for v in r.variants:
            if v.cuda and v.index_url and Version(v.cuda).release[0] == bmaj:
                return r, v.tag, v.index_url
    return None


def _conflict_finding(
    m: Matrix,
    inst: Install,
    rel: TorchRelease,
    what: str,
    py: str | None,
    line: int,
    base_cuda: str,
    torch_cuda: str,
    pick: tuple[TorchRelease, str, str],
) -> Finding:
    """The unpinned install whose result today needs a newer driver than the base image's CUDA (a warning)."""
    tfloor, town, _ = driver_requirement(m, Version(torch_cuda), "linux")
    bfloor, bown, _ = driver_requirement(m, Version(base_cuda), "linux")
    need, runs = tfloor or town, bown or bfloor
    good, good_tag, index = pick
    return Finding(
        UNPINNED,
        "warning",
        f"{inst.spec} resolves today to torch {rel.raw} for CUDA {torch_cuda}, newer than the CUDA {base_cuda} base",
        f"{where(inst, line)} does not pin torch: built today pip installs torch {rel.raw} ({what}"
        f"{', for Python ' + py if py else ''}), which needs an NVIDIA driver for CUDA "
        f"{Version(torch_cuda).release[0]} (≥ {need or 'unknown'}), while the base image's CUDA {base_cuda} runs on "
        f"drivers from {runs or 'unknown'}: on a host set up for this base, the container starts and torch then "
        "reports 'The NVIDIA driver on your system is too old' (torch.cuda.is_available() is False).",
        (
            Fix(
                f"Pin torch {good.raw}, the newest release built for CUDA {Version(base_cuda).release[0]}.x "
                f"({good_tag})",
                pin_command("torch", good.raw, index=index),
            ),
            Fix(f"Or move the base to CUDA {Version(torch_cuda).release[0]} and pin torch=={rel.raw}"),
        ),
        {"requirement": inst.spec, "torch": rel.raw, "torch_cuda": torch_cuda, "base_cuda": base_cuda},
        group="dockerfile",
        line=line,
    )


def _prerelease(inst: Install, line: int) -> Finding:
    return Finding(
        PRERELEASE,
        "info",
        f"torch from PyTorch's {inst.channel} channel: not a release install",
        f"{where(inst, line)} installs {inst.spec} from {inst.index_url}, PyTorch's {inst.channel} "
        "(pre-release) index: what it gets changes from day to day, so release checks (variants, Python, "
        "driver) are skipped; only the CUDA build the index names is used.",
        (Fix("Pin a torch release for a reproducible image (`compat suggest` names one that runs here)"),),
        {"requirement": inst.spec, "index": inst.index_url or ""},
        group="dockerfile",
        line=line,
    )


def unresolved_finding(inst: Install, line: int, what: str) -> Finding:
    """The note for an install whose version comes from a variable the Dockerfile leaves unset."""
    names = ", ".join(f"${{{n}}}" for n in inst.unresolved)
    first = inst.unresolved[0] if inst.unresolved else "VAR"
    return Finding(
        UNRESOLVED,
        "info",
        f"the {what} version comes from {names}, which is not set",
        f"{where(inst, line)} installs {inst.spec or what} with a version from {names}, which this Dockerfile "
        "does not set; checks of that version are skipped.",
        (Fix("Pass the value this image is built with", f"compat dockerfile PATH --build-arg {first}=..."),),
        {"requirement": inst.spec},
        group="dockerfile",
        line=line,
    )


def install_tf(st: Stage, inst: Install, line: int, m: Matrix) -> None:
    if inst.unresolved:
        st.findings.append(unresolved_finding(inst, line, "TensorFlow"))
        st.tf = TfState(inst, None, line)
        return
    py = st.python.value if st.python else None
    version = inst.version
    if version is None:
        spec = _spec_of(inst)
        cands = [
            r
            for r in m.tensorflow
            if (spec is None or spec.contains(r.version, prereleases=False))
            and not r.version.is_prerelease
            and (py is None or not r.python or py in r.python)
        ]
        if not cands:
            st.findings.append(
                Finding(
                    UNPINNED,
                    "info",
                    f"{inst.spec} matches no TensorFlow release in the matrix",
                    f"The requirement {inst.spec!r} ({where(inst, line)}) matches no release compat knows "
                    f"(matrix updated {m.updated_for('tensorflow.yaml')}{', for Python ' + py if py else ''}).",
                    (),
                    {"requirement": inst.spec},
                    group="dockerfile",
                    line=line,
                )
            )
            st.tf = TfState(inst, None, line)
            return
        rel = max(cands, key=lambda r: r.version)
        version = rel.raw
        st.findings.append(
            Finding(
                UNPINNED,
                "info",
                f"{inst.spec} resolves today to TensorFlow {rel.raw}",
                f"{where(inst, line)} does not pin TensorFlow: built today it installs TensorFlow {rel.raw} "
                f"(built with CUDA {rel.cuda or '?'}, cuDNN {rel.cudnn or '?'}{_driver_need(m, rel.cuda)})"
                f"{' for Python ' + py if py else ''}.",
                (Fix("Pin the version the image was tested with", pin_command("tensorflow", rel.raw)),),
                {"requirement": inst.spec, "tensorflow": rel.raw},
                group="dockerfile",
                line=line,
            )
        )
    cpu = inst.package in ("tensorflow-cpu", "tf-nightly-cpu")
    st.tf = TfState(inst, version, line, cpu=cpu, and_cuda="and-cuda" in inst.extras)
