"""JAX checks (`jax.*` ids): the release against Python, OS, driver, GPU and cuDNN, from matrix/jax.yaml.

Pure: facts and the matrix in, findings out. JAX does not check the NVIDIA driver itself and falls back to the
CPU with only a warning when its CUDA plugin cannot start, so these checks say before the run what JAX would
not: the driver floor of the build's CUDA major (JAX's installation page, and NVIDIA's minor-version floor
from cuda.yaml), the compute-capability floor per CUDA major, missing builds, and a CPU-only install on a
machine that has a GPU.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

from packaging.version import InvalidVersion, Version

from compat._valueclass import valueclass
from compat.checks.registry import check
from compat.findings import Finding, Fix, Skip
from compat.installcmd import jax_command
from compat.versions import CC

if TYPE_CHECKING:  # the JAX table is read only when a jax fact is given (3 ms of imports off `compat check`)
    from compat.jaxmatrix import JaxCudaBuild, JaxRelease, JaxSpec, JaxTable

JAX_UNKNOWN = "jax.unknown-version"
JAX_PYTHON = "jax.python"
JAX_BUILD = "jax.cuda-build"
JAX_DRIVER = "jax.driver"
JAX_ARCH = "jax.arch"
JAX_WINDOWS = "jax.windows-gpu"
JAX_CPU = "jax.cpu-build"
JAX_JAXLIB = "jax.jaxlib"
JAX_CUDNN = "jax.cudnn"

JAX_IDS = (
    JAX_UNKNOWN,
    JAX_PYTHON,
    JAX_BUILD,
    JAX_DRIVER,
    JAX_ARCH,
    JAX_WINDOWS,
    JAX_CPU,
    JAX_JAXLIB,
    JAX_CUDNN,
)

Result = Union[Finding, Skip]


@valueclass
class JaxFacts:
    """The facts the JAX checks read (each None when not known)."""

    jax: JaxSpec
    python: Optional[str] = None
    """X.Y"""
    os: Optional[str] = None
    """linux | windows | macos"""
    driver: Optional[str] = None
    """Raw driver version, e.g. 535.104.05."""
    cc: Optional[CC] = None
    gpu: Optional[str] = None
    gpu_present: Optional[bool] = None
    require_gpu: bool = False
    jaxlib: Optional[str] = None
    """The installed jaxlib (probe), when known."""
    cudnn: Optional[str] = None
    """The cuDNN JAX loads (probe) when known."""


def install_fix(text: str, release: JaxRelease, major: int | None) -> Fix:
    """A shell fix that installs `release` (with its CUDA `major` build) and says so in `changes`."""
    label = release.version + (f"+cuda{major}" if major is not None else "")
    return Fix(text, jax_command(release, major), changes=(("jax", label),))


def driver_floor(table: JaxTable, matrix: Any, major: int) -> tuple[str | None, str]:
    """The lowest Linux driver for JAX's CUDA `major` and where it comes from."""
    floors: list[tuple[Version, str, str]] = []
    row = table.majors.get(major)
    if row is not None:
        floors.append((Version(row.driver_min_linux), row.driver_min_linux, "JAX's installation page"))
    mc = getattr(matrix, "minor_compat", {}).get(major) if matrix is not None else None
    linux = getattr(mc, "linux", None) if mc is not None else None
    if linux:
        floors.append(
            (Version(linux), linux, f"NVIDIA's minimum for CUDA {major}.x minor-version compatibility")
        )
    if not floors:
        return None, "unknown"
    best = max(floors, key=lambda f: f[0])
    return best[1], best[2]


def _driver_ok(driver: str, floor: str) -> bool:
    try:
        have = Version(driver)
        need = Version(floor)
    except InvalidVersion:
        return True
    if len(need.release) == 1:  # a branch ("580"): any driver of that branch or newer
        return have.release[0] >= need.release[0]
    return have >= need


def _usable_majors(f: JaxFacts, release: JaxRelease, table: JaxTable, matrix: Any) -> list[int]:
    """CUDA majors of `release` that run on these facts' Python, driver and GPU, newest first."""
    out: list[int] = []
    if f.python and release.python_ok(f.python) is False:
        return out
    for major in sorted({b.major for b in release.cuda}, reverse=True):
        floor, _ = driver_floor(table, matrix, major)
        if f.driver and floor and not _driver_ok(f.driver, floor):
            continue
        row = table.majors.get(major)
        if f.cc is not None and row is not None and (f.cc.major, f.cc.minor) < _cc(row.cc_min):
            continue
        out.append(major)
    return out


def _cc(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _best_release(f: JaxFacts, table: JaxTable, matrix: Any) -> tuple[JaxRelease, int] | None:
    """The newest release with wheels for the Python and a CUDA build that runs on the driver and GPU."""
    for r in table.releases:
        if f.python and r.python_ok(f.python) is False:
            continue
        majors = [m for m in _usable_majors(f, r, table, matrix) if _build_known(r.build_for(m))]
        if majors:
            return r, majors[0]
    return None


def _build_known(b: JaxCudaBuild | None) -> bool:
    return b is not None and (b.kind == "monolithic" or b.plugin_version is not None)


def _fix_release(f: JaxFacts, table: JaxTable, matrix: Any) -> tuple[Fix, ...]:
    best = _best_release(f, table, matrix)
    if best is None:
        if f.python and not any(r.python_ok(f.python) is not False for r in table.releases):
            return (
                Fix(f"No JAX release in the matrix has wheels for Python {f.python}; use a newer Python."),
            )
        return (Fix("No JAX release in the matrix runs on these facts; upgrade the NVIDIA driver first."),)
    r, major = best
    return (install_fix(f"Install jax {r.version} with its CUDA {major} build:", r, major),)


def check_jax(f: JaxFacts, table: JaxTable, matrix: Any = None) -> Iterator[Result]:
    """Every `jax.*` finding for these facts."""
    spec = f.jax
    release = table.release(spec.version)
    if release is None:
        newest = table.newest
        newer = newest is not None and spec.version > newest.parsed
        yield Finding(
            JAX_UNKNOWN,
            "info" if newer else "warning",
            f"jax {spec.version.public} is not in the matrix",
            (
                f"compat's JAX table (updated {table.updated}) does not list jax {spec.version.public}"
                + (f"; its newest release is {newest.version}." if newest else ".")
                + " Its Python, CUDA and driver needs are unknown here, so they are not checked."
            ),
            facts={"jax": spec.raw},
            group="frameworks",
        )
        return
    facts = {"jax": spec.raw}
    # Python wheels
    if f.python:
        ok = release.python_ok(f.python)
        if ok is False:
            have = ", ".join(release.python) or release.requires_python
            yield Finding(
                JAX_PYTHON,
                "error",
                f"jax {release.version} has no wheels for Python {f.python}",
                f"jaxlib {release.version} is published for Python {have} (Linux x86_64 wheels); pip cannot install "
                f"it on Python {f.python}.",
                _fix_release(f, table, matrix),
                {**facts, "python": f.python},
                group="frameworks",
            )
        elif ok is None:
            yield Skip(JAX_PYTHON, f"the Python versions of jax {release.version} are unknown")
    # jaxlib range (probe)
    if f.jaxlib and release.jaxlib:
        from packaging.specifiers import SpecifierSet

        try:
            inside = Version(f.jaxlib).public in SpecifierSet(release.jaxlib)
        except InvalidVersion:
            inside = True
        if not inside:
            yield Finding(
                JAX_JAXLIB,
                "error",
                f"jaxlib {f.jaxlib} does not fit jax {release.version} (needs jaxlib {release.jaxlib})",
                "jax refuses to import with a jaxlib outside the range its release declares (the jaxlib ≤ jax "
                "rule and the minimum jaxlib).",
                (install_fix("Reinstall the matching pair:", release, spec.cuda_major),),
                {**facts, "jaxlib": f.jaxlib},
                group="frameworks",
            )
    wants_gpu = f.require_gpu or bool(f.gpu_present)
    if spec.cuda_major is None:
        if wants_gpu:
            majors = _usable_majors(f, release, table, matrix)
            fixes = (
                [
                    install_fix(
                        f"Install jax {release.version} with its CUDA {majors[0]} build:", release, majors[0]
                    )
                ]
                if majors and _build_known(release.build_for(majors[0]))
                else _fix_release(f, table, matrix)
            )
            yield Finding(
                JAX_CPU,
                "error",
                f"jax {release.version} is installed without a CUDA build: JAX will run on the CPU",
                "Plain `pip install jax` installs the CPU-only jaxlib. On a machine with an NVIDIA GPU, JAX then runs "
                "every computation on the CPU (it only warns 'An NVIDIA GPU may be present on this machine, but a "
                "CUDA-enabled jaxlib is not installed').",
                tuple(fixes),
                {**facts, **({"gpu": f.gpu} if f.gpu else {})},
                group="frameworks",
            )
        return
    major = spec.cuda_major
    build = release.build_for(major)
    if build is None:
        majors = sorted({b.major for b in release.cuda}, reverse=True)
        other = [m for m in _usable_majors(f, release, table, matrix) if _build_known(release.build_for(m))]
        fixes = (
            [install_fix(f"Use its CUDA {other[0]} build:", release, other[0])]
            if other
            else _fix_release(f, table, matrix)
        )
        yield Finding(
            JAX_BUILD,
            "error",
            f"jax {release.version} has no CUDA {major} build",
            f"jax {release.version} ships CUDA builds for CUDA {', '.join(map(str, majors)) or 'none'}; "
            f'`pip install "jax[cuda{major}]=={release.version}"` has nothing to install.',
            tuple(fixes),
            facts,
            group="frameworks",
        )
        return
    if build.kind == "plugin" and build.plugin_version is None:
        yield Finding(
            JAX_BUILD,
            "warning",
            f"no {build.package} release for jax {release.version} was found",
            f"jax {release.version}'s CUDA {major} extra pins {build.package}{build.pin}, and the package index "
            "read for compat's matrix held no release inside that pin: the install may fail to resolve.",
            _fix_release(f, table, matrix),
            facts,
            group="frameworks",
        )
    if f.os == "windows":
        yield Finding(
            JAX_WINDOWS,
            "error",
            "JAX has no NVIDIA GPU support on native Windows",
            "JAX's installation page lists NVIDIA GPU on Windows x86_64 as 'no' (WSL2: experimental). The CUDA "
            "plugin wheels are published for Linux only.",
            (Fix("Run JAX under WSL2 (experimental per JAX's page) or on Linux."),),
            {**facts, "os": "windows"},
            group="frameworks",
        )
        return
    problems_driver = False
    if not f.driver:
        yield Skip(JAX_DRIVER, f"no driver version known for JAX's CUDA {major} build (give --driver)")
    if f.cc is None:
        yield Skip(JAX_ARCH, "no GPU compute capability known (give --gpu or --cc)")
    if f.driver:
        floor, where = driver_floor(table, matrix, major)
        if floor and not _driver_ok(f.driver, floor):
            problems_driver = True
            other = [
                m
                for m in _usable_majors(f, release, table, matrix)
                if m != major and _build_known(release.build_for(m))
            ]
            fixes = [Fix(f"Install NVIDIA driver ≥ {floor} (CUDA {major}.x).", changes=(("driver", floor),))]
            if other:
                fixes.insert(
                    0,
                    install_fix(f"Or keep this driver and use the CUDA {other[0]} build:", release, other[0]),
                )
            yield Finding(
                JAX_DRIVER,
                "error",
                f"driver {f.driver} is too old for JAX's CUDA {major} build (needs ≥ {floor})",
                f"jax {release.version}+cuda{major} needs NVIDIA driver ≥ {floor} ({where}); this driver is "
                f"{f.driver}. JAX does not check the driver itself: its CUDA backend fails to initialise and JAX "
                "falls back to the CPU with a warning.",
                tuple(fixes),
                {**facts, "driver": f.driver},
                group="frameworks",
            )
    row = table.majors.get(major)
    if f.cc is not None and row is not None and (f.cc.major, f.cc.minor) < _cc(row.cc_min):
        other = [
            m
            for m in _usable_majors(f, release, table, matrix)
            if m != major and _build_known(release.build_for(m))
        ]
        fixes = (
            [
                install_fix(
                    f"Use the CUDA {other[0]} build, which supports compute capability {f.cc}:",
                    release,
                    other[0],
                )
            ]
            if other
            else [Fix(f"No JAX CUDA build in the matrix supports compute capability {f.cc} on this driver.")]
        )
        name = f"{f.gpu} (cc {f.cc})" if f.gpu else f"compute capability {f.cc}"
        yield Finding(
            JAX_ARCH,
            "error",
            f"JAX's CUDA {major} build does not support {name}",
            f"On CUDA {major}, JAX supports GPUs of compute capability {row.cc_min} or newer (JAX's installation "
            f"page; {row.source}).",
            tuple(fixes),
            {**facts, "cc": str(f.cc), **({"gpu": f.gpu} if f.gpu else {})},
            group="frameworks",
        )
    if f.cudnn and build.cudnn_spec is not None and not problems_driver:
        try:
            inside = Version(f.cudnn) in build.cudnn_spec
        except InvalidVersion:
            inside = True
        if not inside:
            yield Finding(
                JAX_CUDNN,
                "error",
                f"cuDNN {f.cudnn} does not fit jax {release.version}+cuda{major} (needs cuDNN {build.cudnn})",
                "JAX's CUDA plugin checks the cuDNN it loads at start-up and refuses one older than the version it "
                "was built against ('Unable to load cuDNN' / 'Outdated cuDNN installation').",
                (install_fix("Install the cuDNN wheels JAX pins (its with-cuda extra):", release, major),),
                {**facts, "cudnn": f.cudnn},
                group="frameworks",
            )


def jax_findings(f: JaxFacts, table: JaxTable, matrix: Any = None) -> tuple[list[Finding], list[Skip]]:
    findings: list[Finding] = []
    skips: list[Skip] = []
    for r in check_jax(f, table, matrix):
        (skips if isinstance(r, Skip) else findings).append(r)  # type: ignore[arg-type]
    return findings, skips


def newest_for(
    table: JaxTable, matrix: Any, *, python: str | None, driver: str | None, cc: CC | None
) -> tuple[JaxRelease, int] | None:
    """`compat suggest`'s JAX answer: the newest release and CUDA major that run on these facts."""
    from compat.jaxmatrix import JaxSpec

    f = JaxFacts(jax=JaxSpec("0", Version("0"), None), python=python, driver=driver, cc=cc)
    return _best_release(f, table, matrix)


__all__: Sequence[str] = (
    "JAX_IDS",
    "JaxFacts",
    "check_jax",
    "driver_floor",
    "install_fix",
    "jax_findings",
    "newest_for",
)


# -- the registry entry: `compat check --jax V`, COMPAT_OVERRIDE_JAX, the doctor's probed jax


def _facts_of(ctx: Any) -> JaxFacts | None:
    f = ctx.facts.get("jax")
    if f is None or not f.raw:
        return None
    from compat.jaxmatrix import parse_jax

    spec = parse_jax(f.raw)
    ccs = sorted(g.cc for g in (ctx.gpus or []) if g.cc is not None)
    named = [g.label for g in (ctx.gpus or []) if g.cc is not None and ccs and g.cc == ccs[0]]
    py = ctx.python
    jl = ctx.facts.get("jaxlib")
    cudnn = ctx.facts.get("cudnn")  # the cuDNN that will be loaded, when stated (--cudnn, a probe)
    return JaxFacts(
        jax=spec,
        python=f"{py.release[0]}.{py.release[1]}" if py is not None and len(py.release) >= 2 else None,
        os=ctx.os,
        driver=ctx.driver_raw,
        cc=ccs[0] if ccs else None,
        gpu=named[0] if named else None,
        gpu_present=ctx.gpu_present,
        require_gpu=ctx.require_gpu,
        jaxlib=jl.raw if jl is not None and jl.raw else None,
        cudnn=cudnn.raw if cudnn is not None and cudnn.raw else None,
    )


@check("jax", ids=JAX_IDS, entry_points=("check", "doctor", "dockerfile", "guard"))
def check_jax_release(ctx: Any) -> Iterator[Result]:
    """JAX (`--jax V`): the release's Python wheels, CUDA build, driver and GPU floors (matrix/jax.yaml)."""
    facts = _facts_of(ctx)
    if facts is None:
        return  # JAX not in the stack: nothing to say (no skip line in every report)
    from compat.jaxmatrix import JaxTableError, jax_table

    try:
        table = jax_table(ctx.m)
    except JaxTableError as exc:
        yield Skip(JAX_UNKNOWN, f"the matrix's JAX table cannot be used: {exc}")
        return
    yield from check_jax(facts, table, ctx.m)
