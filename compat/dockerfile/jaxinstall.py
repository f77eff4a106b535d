"""JAX in a Dockerfile: which jax release, CUDA build and CUDA source a stage's pip installs give it, and the
checks only a Dockerfile can fail (an extra the release lacks, a `-local` build on a base without the CUDA it
needs, pip CUDA wheels beside the base image's CUDA, a CPU-only jax in a CUDA image).

The release rows come from matrix/jax.yaml (compat.jaxmatrix). What each install form gives follows JAX's
installation page (https://github.com/jax-ml/jax/blob/jax-v0.11.0/docs/installation.md) and the extras each
release's wheel metadata declares (the row's `extras` and `cuda[].extras`):

- `jax[cudaNN]` (0.4.30 on) installs jax-cudaNN-plugin with its `with-cuda` extra: CUDA and cuDNN as pip
  wheels. For 0.4.22-0.4.29 `jax[cuda12]` installed a plugin without CUDA pins (the system's CUDA);
- `jax[cudaNN-local]` / `jax[cudaNN_local]` and `jax[cudaNN_cudnnMM]` use the CUDA and cuDNN of the system
  ("If you prefer to use a preinstalled copy of NVIDIA CUDA, you must first install NVIDIA CUDA and cuDNN");
- `jax[cudaNN_pip]` (up to 0.4.x) installs a monolithic `jaxlib==X+cudaNN.cudnnMM` plus the CUDA pip wheels;
- `jaxlib==X+cudaNN.cudnnMM -f .../jax_cuda_releases.html` alone is a monolithic build on the system's CUDA;
- `jax-cudaNN-plugin[with-cuda]` / `jax-cudaNN-pjrt` named explicitly: the plugin (pip CUDA with `with-cuda`);
- plain `pip install jax` is CPU only.

pip installs the newest jax even when the extra asked for does not exist in it, with only a warning
("jax X does not provide the extra 'cuda12-pip'"), and such a jax then has no CUDA build.
"""

from __future__ import annotations

import re
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat.dockerfile.actions import Install, where
from compat.dockerfile.frameworks import unresolved_finding
from compat.dockerfile.model import (
    JAX_INDEX,
    UNPINNED,
    JaxState,
    JaxView,
    Stage,
)
from compat.findings import Finding, Fix
from compat.installcmd import JAX_CUDA_RELEASES, dockerfile_installer, jax_command, jax_requirement_command
from compat.jaxmatrix import JaxCudaBuild, JaxRelease, JaxTable, JaxTableError, jax_table
from compat.matrix import Matrix
from compat.versions import public_version

JAX_CPU = "jax.cpu-build"
JAX_DOC = "https://github.com/jax-ml/jax/blob/jax-v0.11.0/docs/installation.md"
CUDA_EXTRA = re.compile(r"^cuda(\d{2})?(?:-(pip|local|cudnn\d{2,3}))?$")
_PLUGIN = re.compile(r"^jax-cuda(\d{2})-(plugin|pjrt)$")
# Where JAX publishes its CUDA jaxlib builds: the find-links page of Google Cloud Storage, and the PEP 503 index
# that mirrors it ("JAX publishes nightlies, release candidates(RCs), and releases to several non-pypi indexes").
_JAX_INDEXES = re.compile(r"storage\.googleapis\.com/jax-releases/|ml-oss-artifacts-published/jax")
JAXLIB_LABEL = re.compile(r"^cuda(\d{2,3})(?:[._-]?cudnn(\d{2,3}))?$")


def norm_extra(e: str) -> str:
    """An extra as pip (PEP 685) compares it: cuda12_pip -> cuda12-pip."""
    return re.sub(r"[-_.]+", "-", e).lower()


def note_install(st: Stage, act: Install, line: int) -> None:
    """Note a pip install of jax, jaxlib or a JAX CUDA plugin (judged once the stage is complete)."""
    js = st.jax or JaxState()
    if act.package == "jax":
        js = replace(js, jax=act, jax_line=line, extras=js.extras | {norm_extra(e) for e in act.extras})
    elif act.package == "jaxlib":
        js = replace(js, jaxlib=act, jaxlib_line=line)
    else:
        kept = tuple((p, n) for p, n in js.plugins if p.package != act.package)
        js = replace(js, plugins=(*kept, (act, line)))
    st.jax = js


def table_of(m: Matrix) -> JaxTable | None:
    try:
        return jax_table(m)
    except JaxTableError:
        return None


def _jaxlib_label(v: str | None) -> tuple[int, str | None] | None:
    """CUDA major and cuDNN label of a monolithic jaxlib pin (0.4.26+cuda12.cudnn89 -> 12, "89")."""
    if not v:
        return None
    try:
        local = Version(v).local
    except InvalidVersion:
        return None
    m = JAXLIB_LABEL.match(local or "")
    if m is None:
        return None
    return int(m.group(1)[:2]), m.group(2)


def _jaxlib_fits(r: JaxRelease, jl: Version) -> bool:
    if r.jaxlib:
        try:
            return jl in SpecifierSet(r.jaxlib)
        except InvalidSpecifier:
            return True
    low = public_version(r.minimum_jaxlib)
    return (low is None or jl >= low) and jl <= r.parsed


def fix_line(r: JaxRelease, major: int | None, tool: str) -> str:
    """The Dockerfile line that installs release `r` with its CUDA `major` build (monolithic builds read JAX's index)."""
    return jax_command(r, major, dockerfile_installer(tool))


def derive(st: Stage, m: Matrix) -> tuple[JaxView | None, list[Finding]]:
    """The stage's JAX (release, CUDA build, CUDA source) and the notes met deriving it."""
    js = st.jax
    notes: list[Finding] = []
    if js is None or js.jax is None:
        return None, notes  # jaxlib or a plugin without jax: nothing imports it
    inst, line = js.jax, js.jax_line
    if inst.unresolved:
        notes.append(unresolved_finding(inst, line, "JAX"))
        return None, notes
    table = table_of(m)
    py = st.python.value if st.python else None
    jl_inst = js.jaxlib
    jl_pin = public_version(jl_inst.version) if jl_inst is not None else None
    rel: JaxRelease | None = None
    if inst.version is not None:
        pv = public_version(inst.version)
        if pv is None:
            return None, notes
        version = str(pv)
        rel = table.release(pv) if table is not None else None
    else:
        if table is None:
            return None, notes
        try:
            spec = SpecifierSet(inst.specifier) if inst.specifier else SpecifierSet()
        except InvalidSpecifier:
            return None, notes
        cands = [
            r
            for r in table.releases
            if spec.contains(r.parsed, prereleases=False)
            and not r.parsed.is_prerelease
            and (py is None or r.python_ok(py) is not False)
            and (jl_pin is None or _jaxlib_fits(r, jl_pin))
        ]
        if not cands:
            notes.append(
                Finding(
                    UNPINNED,
                    "info",
                    f"{inst.spec} matches no JAX release in the matrix",
                    f"The requirement {inst.spec!r} ({where(inst, line)}) matches no release compat knows (matrix "
                    f"updated {table.updated}{', for Python ' + py if py else ''}"
                    f"{', with jaxlib ' + str(jl_pin) if jl_pin else ''}); JAX checks are skipped for this stage.",
                    (),
                    {"requirement": inst.spec},
                    group="dockerfile",
                    line=line,
                )
            )
            return None, notes
        rel = max(cands, key=lambda r: r.parsed)
        version = rel.version
        extras, index = _extras_of(js.extras, rel)
        notes.append(
            Finding(
                UNPINNED,
                "info",
                f"{inst.spec} resolves today to jax {rel.version}",
                f"{where(inst, line)} does not pin jax: built today it installs jax {rel.version} (released "
                f"{rel.released or '?'}){' for Python ' + py if py else ''}. A rebuild later may get another release "
                "with other CUDA, cuDNN and driver needs.",
                (
                    Fix(
                        "Pin the version the image was tested with",
                        jax_requirement_command(
                            f"jax{extras}=={rel.version}", index, dockerfile_installer(inst.tool)
                        ),
                    ),
                ),
                {"requirement": inst.spec, "jax": rel.version},
                group="dockerfile",
                line=line,
            )
        )
    view = JaxView(version, version, line, rel is not None, tool=inst.tool)
    view.jaxlib = str(jl_pin) if jl_pin is not None else None
    # The CUDA build: an extra of jax, a monolithic jaxlib pin, or a plugin named explicitly.
    cuda_extras = [e for e in sorted(js.extras) if CUDA_EXTRA.match(e)]
    missing = [e for e in sorted(js.extras) if rel is not None and e not in rel.extras]
    for e in cuda_extras:
        if e in missing:
            continue
        em = CUDA_EXTRA.match(e)
        assert em is not None
        major = int(em.group(1)) if em.group(1) else (rel.cuda_extra if rel is not None else None)
        if major is None:
            continue
        b = _build_with_extra(rel, major, e) if rel is not None else None
        view.major, view.how = major, f"the {e} extra"
        if b is not None:
            view.kind = b.kind
            view.pip_cuda = _pip_cuda(b, e)
        else:
            view.pip_cuda = False if (em.group(2) or "").startswith(("local", "cudnn")) else None
        break
    label = _jaxlib_label(jl_inst.version if jl_inst is not None else None)
    if view.major is None and label is not None and jl_inst is not None:
        view.major, view.kind = label[0], "monolithic"
        view.how = f"jaxlib=={jl_inst.version}"
        view.pip_cuda = any(e.endswith("-pip") for e in js.extras) or False
    if view.major is None:
        for p, _n in js.plugins:
            pm = _PLUGIN.match(p.package)
            if pm is None:
                continue
            view.major, view.kind = int(pm.group(1)), "plugin"
            view.how = p.spec
            view.pip_cuda = "with-cuda" in {norm_extra(e) for e in p.extras} or (
                any(norm_extra(e) == "with-cuda" for q, _ in js.plugins for e in q.extras)
            )
            break
    if view.major is not None:
        view.raw = f"{version}+cuda{view.major}"
    elif (cuda_extras and not missing) or js.plugins or label is not None:
        view.cpu_explained = True  # a CUDA build was asked for and its major is unknown here: no CPU claim
    # Findings about the install itself.
    view.missing = tuple(missing)  # reported by stage_checks, whose fixes the solver re-checks
    if any(CUDA_EXTRA.match(e) for e in missing) and view.major is None:
        view.cpu_explained = True
    if label is not None and jl_inst is not None and not any(_JAX_INDEXES.search(u) for u in jl_inst.links):
        notes.append(
            Finding(
                JAX_INDEX,
                "error",
                f"jaxlib=={jl_inst.version} is only on JAX's own index, which this install does not read",
                f"{where(jl_inst, js.jaxlib_line)} pins a CUDA build of jaxlib ({jl_inst.version}); JAX publishes "
                f"those only on {JAX_CUDA_RELEASES}, never on "
                f"PyPI, so pip stops with 'No matching distribution found for jaxlib=={jl_inst.version}'.",
                (
                    Fix(
                        "Read JAX's index for the CUDA jaxlib builds",
                        jax_requirement_command(
                            f"jaxlib=={jl_inst.version}",
                            JAX_CUDA_RELEASES,
                            dockerfile_installer(jl_inst.tool),
                        ),
                    ),
                ),
                {"jaxlib": jl_inst.version},
                group="dockerfile",
                line=js.jaxlib_line,
            )
        )
    return view, notes


def _extras_of(extras: frozenset[str], rel: JaxRelease) -> tuple[str, str | None]:
    """`[cuda12]`: the extras asked for that the release has, as a requirement writes them, and JAX's index for
    a monolithic build's extra (None: none to read)."""
    have = sorted(e for e in extras if e in rel.extras)
    mono = [b for b in rel.cuda if b.kind == "monolithic" and b.index and any(e in b.extras for e in have)]
    return f"[{','.join(have)}]" if have else "", (mono[0].index if mono else None)


def _build_with_extra(rel: JaxRelease, major: int, extra: str) -> JaxCudaBuild | None:
    exact = [b for b in rel.cuda if b.major == major and extra in b.extras]
    if exact:
        return exact[0]
    return rel.build_for(major)


def _pip_cuda(b: JaxCudaBuild, extra: str) -> bool | None:
    if extra.endswith("-local") or "-cudnn" in extra:
        return False
    if extra.endswith("-pip"):
        return True
    if b.kind == "plugin":
        return b.cuda_min is not None  # 0.4.22-0.4.29 plugins pin no CUDA wheels: the system's CUDA
    return None  # plain `cuda` of a monolithic release: not known here whether it pulled pip wheels
