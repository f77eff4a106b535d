"""JAX in a Dockerfile, the checks: what only a Dockerfile can get wrong about the JAX a stage installs (an extra
the release lacks, a CPU-only jax in a CUDA image, a `-local` build on a base without the CUDA it needs, pip CUDA
wheels beside the base image's CUDA), each fix re-checked by re-resolving the stage. compat.dockerfile.jaxinstall
reads the installs and derives the stage's JAX."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from compat.dockerfile.actions import Install, where
from compat.dockerfile.jaxinstall import (
    CUDA_EXTRA,
    JAX_CPU,
    JAX_DOC,
    JAXLIB_LABEL,
    fix_line,
    table_of,
)
from compat.dockerfile.model import (
    JAX_EXTRA,
    JAX_LOCAL,
    PIP_CUDA_COST,
    SECOND_CUDA,
    JaxView,
    Stage,
)
from compat.facts import Facts
from compat.findings import Finding, Fix
from compat.installcmd import JAX_CUDA_RELEASES, dockerfile_installer, jax_requirement_command
from compat.jaxmatrix import JaxCudaBuild, JaxRelease, JaxTable
from compat.matrix import Matrix
from compat.solver.solve import Recheck, apply_changes, closes_all


def _missing_extra(
    st: Stage, m: Matrix, recheck: Recheck, view: JaxView, rel: JaxRelease, extra: str, inst: Install
) -> Finding:
    line = view.line
    cuda = CUDA_EXTRA.match(extra)
    have = ", ".join(e for e in rel.extras if CUDA_EXTRA.match(e)) or "none"
    fixes: list[Fix] = []
    if cuda is not None:
        want = int(cuda.group(1)) if cuda.group(1) else rel.cuda_extra
        majors = [want] if want is not None else []
        majors += [b.major for b in sorted(rel.cuda, key=lambda b: -b.major) if b.major != want]
        for mj in majors:
            b = rel.build_for(mj)
            if b is None or (b.kind == "plugin" and b.plugin_version is None):
                continue
            if verified(recheck, f"{rel.version}+cuda{mj}"):
                fixes.append(
                    Fix(f"Use the extra jax {rel.version} has for CUDA {mj}", fix_line(rel, mj, inst.tool))
                )
                break
        else:
            table = table_of(m)
            best = _best(st, m, recheck, table, None, want) if table is not None else None
            if best is not None:
                fixes.append(
                    Fix(
                        f"Install jax {best[0].version} with its CUDA {best[1]} build",
                        fix_line(best[0], best[1], inst.tool),
                    )
                )
    cpu = cuda is not None and view.major is None
    return Finding(
        JAX_EXTRA,
        "error" if cpu else "warning",
        f"jax {rel.version} has no extra '{extra}'" + (": JAX will run on the CPU" if cpu else ""),
        f"{where(inst, line)} asks for jax[{extra}], but jax {rel.version} declares no such extra (its CUDA "
        f'extras: {have}). pip installs jax anyway with only the warning "jax {rel.version} does not provide the '
        f"extra '{extra}'\""
        + (
            ", so no CUDA plugin or CUDA jaxlib is installed and JAX runs every computation on the CPU."
            if cpu
            else "."
        ),
        tuple(fixes),
        {"jax": rel.version, "extra": extra},
        group="dockerfile",
        line=line,
    )


def stage_checks(st: Stage, m: Matrix, recheck: Recheck) -> Iterator[Finding]:
    """The Dockerfile's own JAX checks for a derived view (CPU-only jax in a CUDA image, a `-local` build on a
    base without the CUDA it needs, pip CUDA wheels beside the base image's CUDA)."""
    v = st.jax_view
    table = table_of(m)
    if v is None or table is None:
        return
    rel = table.release(v.release) if v.known else None
    if rel is not None and st.jax is not None and st.jax.jax is not None:
        for e in v.missing:
            yield _missing_extra(st, m, recheck, v, rel, e, st.jax.jax)
    if v.major is None:
        if st.cuda is not None and not v.cpu_explained:
            yield _cpu_build(st, m, recheck, v, rel)
        return
    if v.pip_cuda is False:
        yield from _local_checks(st, m, recheck, v, rel)
    elif v.pip_cuda and st.cuda is not None:
        same = st.cuda.value.split(".")[0] == str(v.major)
        if same and st.stack.flavour == "base":
            return  # a -base image carries only cudart: nothing of note is duplicated
        smaller = re.sub(r"-(?:cudnn\d*-)?(?:runtime|devel)-", "-base-", st.base)
        yield Finding(
            SECOND_CUDA,
            "info",
            f"a second CUDA stack: jax {v.raw} brings CUDA {v.major} pip wheels on a CUDA "
            f"{'.'.join(st.cuda.value.split('.')[:2])} base",
            f"{v.how} (line {v.line}) installs JAX's CUDA {v.major} libraries as pip wheels ({PIP_CUDA_COST}); JAX "
            f"loads those, so the base image's CUDA {st.cuda.value} libraries are unused by it"
            + ("" if same else f", and the driver must support CUDA {v.major}, not only the base's CUDA")
            + ". JAX's installation page: make sure that LD_LIBRARY_PATH is not set, since LD_LIBRARY_PATH can "
            f"override the NVIDIA CUDA libraries ({JAX_DOC}).",
            (
                Fix(
                    "A smaller base is enough for pip CUDA wheels",
                    f"FROM {smaller}" if same and smaller != st.base else "FROM python:3.12-slim",
                ),
            ),
            {"base_cuda": st.cuda.value, "jax": v.raw, "stage": st.label},
            group="dockerfile",
            line=v.line,
        )


def brings_cuda(m: Matrix, label: str) -> bool:
    """Whether the install a fix writes for `label` ("0.4.30+cuda12") brings CUDA and cuDNN as pip wheels (the
    plugin's with-cuda extra, or a monolithic jaxlib with the cudaNN_pip extra), so the image's are not used."""
    table = table_of(m)
    try:
        v = Version(label)
    except InvalidVersion:
        return False
    lm = JAXLIB_LABEL.match(v.local or "")
    rel = table.release(v) if table is not None else None
    if lm is None or rel is None:
        return False
    major = int(lm.group(1)[:2])
    b = rel.build_for(major)
    if b is None:
        return False
    return bool(b.cuda_min) if b.kind == "plugin" else (rel.extra_for(major) or "").endswith("-pip")


def jax_recheck(facts: Facts, m: Matrix) -> Recheck:
    """The solver's re-check of the stage with other jax installs (changes: (("jax", label),))."""
    return Recheck(facts, m, derive=lambda f, changes: candidate_facts(f, m, dict(changes)["jax"]))


def candidate_facts(facts: Facts, m: Matrix, label: str) -> Facts:
    """The stage's facts with jax = `label`, as the Dockerfile fix installs it: without the image's cuDNN when
    that install brings its own."""
    from dataclasses import replace as _replace

    out = apply_changes(facts, {"jax": label})
    if brings_cuda(m, label):
        out = _replace(out, values={k: f for k, f in out.values.items() if k != "cudnn"})
    return out


def verified(recheck: Recheck, label: str) -> bool:
    """The solver's re-check (`jax_recheck`, one per stage): the stage with jax = `label` closes every jax.*
    error of the stage and adds no error (the solver's closure rule), so no jax.* error is left."""
    before = recheck.findings()
    targets = [f for f in before if f.severity == "error" and f.id.startswith("jax.")]
    return closes_all(before, recheck.findings((("jax", label),)), targets)


def _best(
    st: Stage, m: Matrix, recheck: Recheck, table: JaxTable, prefer: JaxRelease | None, want_major: int | None
) -> tuple[JaxRelease, int] | None:
    """A release and CUDA major that pass the re-check on this stage: `prefer`'s own first (the base's CUDA
    major first), else the newest release that does."""
    rels = ([prefer] if prefer is not None else []) + [r for r in table.releases if r is not prefer]
    tried = 0
    for r in rels:
        if r.parsed.is_prerelease:
            continue
        py = st.python.value if st.python else None
        if py is not None and r.python_ok(py) is False:
            continue
        majors = sorted({b.major for b in r.cuda}, key=lambda mj: (mj != want_major, -mj))
        for mj in majors:
            b = r.build_for(mj)
            if b is None or (b.kind == "plugin" and b.plugin_version is None):
                continue
            tried += 1
            if verified(recheck, f"{r.version}+cuda{mj}"):
                return r, mj
            if tried >= 12:
                return None
    return None


def _cpu_build(st: Stage, m: Matrix, recheck: Recheck, v: JaxView, rel: JaxRelease | None) -> Finding:
    assert st.cuda is not None
    table = table_of(m)
    base_major = int(st.cuda.value.split(".")[0])
    best = _best(st, m, recheck, table, rel, base_major) if table is not None else None
    fixes = (
        (
            Fix(
                f"Install jax {best[0].version} with its CUDA {best[1]} build",
                fix_line(best[0], best[1], v.tool),
            ),
        )
        if best
        else ()
    )
    return Finding(
        JAX_CPU,
        "error",
        f"CPU-only jax {v.release} in a CUDA image: JAX will run on the CPU",
        f"Line {v.line} installs jax without a CUDA build (no cuda extra, CUDA jaxlib or CUDA plugin) on the CUDA "
        f"{st.cuda.value} base image {st.base}. Plain `pip install jax` gives the CPU-only jaxlib: JAX runs every "
        "computation on the CPU and only warns 'An NVIDIA GPU may be present on this machine, but a CUDA-enabled "
        "jaxlib is not installed. Falling back to cpu.'",
        fixes,
        {"jax": v.raw, "image": st.base, "stage": st.label},
        group="dockerfile",
        line=v.line,
    )


def _local_checks(
    st: Stage, m: Matrix, recheck: Recheck, v: JaxView, rel: JaxRelease | None
) -> Iterator[Finding]:
    """A build that uses the system's CUDA and cuDNN (`-local`, `_cudnnNN`, a monolithic jaxlib pin)."""
    assert v.major is not None
    b = rel.build_for(v.major) if rel is not None else None
    if rel is not None:
        same = [x for x in rel.cuda if x.major == v.major and x.kind == v.kind]
        b = same[0] if same else b
    pip_fix: list[Fix] = []
    if rel is not None:
        pb = rel.build_for(v.major)
        if (
            pb is not None
            and pb.kind == "plugin"
            and pb.cuda_min
            and verified(recheck, f"{rel.version}+cuda{v.major}")
        ):
            pip_fix.append(
                Fix(
                    f"Let pip bring the CUDA {v.major} libraries JAX pins (no system CUDA needed)",
                    fix_line(rel, v.major, v.tool),
                )
            )
        elif any(f"cuda{v.major}-pip" == e for e in rel.extras) and verified(
            recheck, f"{rel.version}+cuda{v.major}"
        ):
            pip_fix.append(
                Fix(
                    f"Let pip bring the CUDA {v.major} libraries JAX pins (no system CUDA needed)",
                    jax_requirement_command(
                        f"jax[cuda{v.major}_pip]=={rel.version}",
                        JAX_CUDA_RELEASES,
                        dockerfile_installer(v.tool),
                    ),
                )
            )
    what = f"{v.how} (line {v.line}) uses the CUDA and cuDNN of the image"
    doc = f"JAX's installation page: 'If you prefer to use a preinstalled copy of NVIDIA CUDA, you must first install NVIDIA CUDA and cuDNN' ({JAX_DOC})"
    facts_ = {"jax": v.raw, "image": st.base, "stage": st.label}
    if st.cuda is None:
        if st.stack.known and st.stack.kind in ("python", "os"):
            yield Finding(
                JAX_LOCAL,
                "error",
                f"jax {v.raw} needs a system CUDA {v.major}, and the base {st.base} has none",
                f"{what}; the base image {st.base} carries no CUDA libraries, so JAX's CUDA backend cannot start and "
                f"JAX falls back to the CPU with only a warning. {doc}.",
                (*pip_fix, Fix(f"Or build FROM an nvidia/cuda CUDA {v.major} -cudnn-devel image")),
                facts_,
                group="dockerfile",
                line=v.line,
            )
        return
    base = Version(st.cuda.value)
    if base.release[0] != v.major:
        yield Finding(
            JAX_LOCAL,
            "error",
            f"jax {v.raw} is built for CUDA {v.major}; the image has CUDA {st.cuda.value}",
            f"{what}, which are CUDA {st.cuda.value}: a CUDA {v.major} build cannot load CUDA {base.release[0]} "
            f"libraries, so JAX's CUDA backend fails and JAX falls back to the CPU. {doc}.",
            (
                *pip_fix,
                Fix(f"Or use a CUDA {v.major} base image (nvidia/cuda:{v.major}.x-cudnn-devel-ubuntu22.04)"),
            ),
            {**facts_, "base_cuda": st.cuda.value},
            group="dockerfile",
            line=v.line,
        )
        return
    if b is not None and b.cuda_min:
        need = Version(b.cuda_min)
        if base.release[:2] < need.release[:2]:
            yield Finding(
                JAX_LOCAL,
                "error",
                f"jax {v.raw} needs CUDA ≥ {need.release[0]}.{need.release[1]}; the image has CUDA {st.cuda.value}",
                f"{what}. jax {rel.version if rel else v.release}'s CUDA {v.major} build pins CUDA ≥ {b.cuda_min} "
                "(its with-cuda extra), and 'JAX checks the versions of your libraries, and will report an error if "
                f"they are not sufficiently new' ({JAX_DOC}).",
                (*pip_fix, Fix(f"Or use a base image with CUDA ≥ {need.release[0]}.{need.release[1]}")),
                {**facts_, "base_cuda": st.cuda.value},
                group="dockerfile",
                line=v.line,
            )
            return
    if st.stack.flavour == "base":
        yield Finding(
            JAX_LOCAL,
            "error",
            f"jax {v.raw} needs the CUDA libraries, and {st.base} carries only the CUDA runtime",
            f"{what}; an nvidia/cuda -base image has only cudart, not cuBLAS, cuFFT, cuSPARSE or cuDNN, so JAX's CUDA "
            f"backend cannot start and JAX falls back to the CPU. {doc}.",
            (*pip_fix, Fix(f"Or use the -cudnn-devel image of CUDA {st.cuda.value}")),
            facts_,
            group="dockerfile",
            line=v.line,
        )
        return
    need_cudnn = _cudnn_major(b, v)
    if st.cudnn_major == 0 and st.cudnn is None:
        yield Finding(
            JAX_LOCAL,
            "error",
            f"jax {v.raw} needs cuDNN{' ' + str(need_cudnn) if need_cudnn else ''}, and the image has none",
            f"{what}; {st.base} has no cuDNN (no -cudnn in the tag), so JAX's CUDA backend fails to start "
            f"('Unable to load cuDNN') and JAX falls back to the CPU. {doc}.",
            (
                *pip_fix,
                Fix(
                    f"Or use the -cudnn{'' if (need_cudnn or 9) >= 9 else need_cudnn} variant of the base image"
                ),
            ),
            facts_,
            group="dockerfile",
            line=v.line,
        )
        return
    if need_cudnn and st.cudnn_major and st.cudnn is None and st.cudnn_major != need_cudnn:
        yield Finding(
            JAX_LOCAL,
            "error",
            f"jax {v.raw} needs cuDNN {need_cudnn}; the image has cuDNN {st.cudnn_major}",
            f"{what}; jax {v.release}'s CUDA {v.major} build needs cuDNN {b.cudnn if b and b.cudnn else need_cudnn} "
            f"and the image carries cuDNN {st.cudnn_major}, so JAX's CUDA backend fails ('Outdated cuDNN "
            f"installation' / 'Unable to load cuDNN') and JAX falls back to the CPU.",
            tuple(pip_fix),
            facts_,
            group="dockerfile",
            line=v.line,
        )
        return
    if st.stack.known and st.stack.kind == "cuda" and not st.stack.nvcc and st.stack.flavour == "runtime":
        yield Finding(
            JAX_LOCAL,
            "warning",
            f"jax {v.raw} on a -runtime image: no ptxas and no libdevice for XLA",
            f"{what}. JAX's installation page: 'JAX uses LD_LIBRARY_PATH to find CUDA libraries and PATH to find "
            "binaries (ptxas, nvlink)' and 'JAX requires libdevice10.bc, which typically comes from the cuda-nvvm "
            f"package' ({JAX_DOC}); a -runtime image has neither (they come with the -devel image or the "
            "cuda-nvcc / cuda-nvvm packages), so XLA fails with 'libdevice not found at ./libdevice.10.bc' on "
            "the first kernel that needs it (https://github.com/jax-ml/jax/issues/6323: libdevice.10.bc comes "
            "from the cuda-nvcc package).",
            (*pip_fix, Fix(f"Or use the -devel image of CUDA {st.cuda.value}")),
            facts_,
            group="dockerfile",
            line=v.line,
        )


def _cudnn_major(b: JaxCudaBuild | None, v: JaxView) -> int | None:
    if b is not None and b.cudnn_spec is not None:
        lows = [s.version for s in b.cudnn_spec if s.operator in (">=", ">", "==", "~=")]
        if lows:
            try:
                return Version(lows[0]).release[0]
            except InvalidVersion:
                return None
    return None
