"""Install commands: the one place that writes `pip install torch==… --index-url …` (fixes, suggestions, Dockerfile lines).

Commands really change the install: switching the local variant of an installed version reinstalls it with the
exact `==X+tag` pin (pip answers "Requirement already satisfied" to a plain `torch==X` over `X+cpu`), and
`tensorflow-cpu` is removed before `tensorflow[and-cuda]` (both own the `tensorflow` import package). The
installer is respected: pip, uv, or a conda environment (pip inside it: PyTorch publishes no conda packages
after 2.5, https://github.com/pytorch/pytorch/issues/138506). A command has a form: "shell" (a command to
run) or "dockerfile" (the same command as a Dockerfile's `RUN` line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from compat._valueclass import valueclass
from compat.facts import Facts
from compat.matrix import Matrix, TfRelease, TorchRelease, TorchVariant

if TYPE_CHECKING:  # the JAX table is read only when a jax fact is given: no import of it here at run time
    from compat.jaxmatrix import JaxCudaBuild, JaxRelease

INSTALLERS = ("pip", "uv", "conda")
PYTORCH_INDEX = "https://download.pytorch.org/whl/"
JAX_CUDA_RELEASES = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"
"""JAX's find-links page of CUDA jaxlib builds (the monolithic `jaxlib==X+cudaNN.cudnnMM`), never on PyPI."""


@valueclass
class Installer:
    """Which tool installs into the environment, and whether compat detected it or assumed it."""

    name: str
    """"pip", "uv" or "conda"."""
    detected: bool
    """False: not known from the facts, pip assumed."""
    form: str = "shell"
    """"shell": a command to run; "dockerfile": the same command as a Dockerfile's RUN line."""

    @property
    def note(self) -> str:
        return f"installer: {self.name}" + ("" if self.detected else " (assumed; not known from the facts)")

    @property
    def suffix(self) -> str:
        """What a fix's text says about the installer: which one was detected, or that pip was assumed."""
        return f" (with {self.name}, as installed)" if self.detected else " (pip assumed)"

    def install(self, *args: str) -> str:
        if self.name == "uv":
            return " ".join(("uv", "pip", "install", *args))
        if self.name == "conda":
            return " ".join(("python", "-m", "pip", "install", *args))
        return " ".join(("pip", "install", *args))

    def uninstall(self, *names: str) -> str:
        if self.name == "uv":
            return " ".join(("uv", "pip", "uninstall", *names))
        if self.name == "conda":
            return " ".join(("python", "-m", "pip", "uninstall", "-y", *names))
        return " ".join(("pip", "uninstall", "-y", *names))

    def reinstall_flag(self, package: str) -> tuple[str, ...]:
        return ("--reinstall-package", package) if self.name == "uv" else ("--force-reinstall",)

    def line(self, command: str) -> str:
        """`command` in this installer's form (a Dockerfile's `RUN` line, or as it is)."""
        return f"RUN {command}" if self.form == "dockerfile" else command


PIP = Installer("pip", False)
"""The installer of a fix when nothing says which one installs: pip, as a command to run."""


def dockerfile_installer(tool: str) -> Installer:
    """The installer of a Dockerfile stage's install (`tool`: "uv" for `uv pip`, else pip), writing RUN lines."""
    return Installer("uv" if tool == "uv" else "pip", True, "dockerfile")


def restate(command: str, inst: Installer) -> str | None:
    """A `pip install …` command written here, restated for `inst` (its tool and form): a resolver fix becomes a
    Dockerfile stage's `RUN uv pip install …` without a second builder. None for any other command."""
    head = "pip install "
    if not command.startswith(head):
        return None
    return inst.line(inst.install(command[len(head) :]))


def installer(facts: Facts) -> Installer:
    """The installer named by the `installer` fact (compat.installed reads it from INSTALLER files), else pip."""
    f = facts.get("installer")
    if f is not None and f.value in INSTALLERS:
        return Installer(f.value, True)
    return Installer("pip", False)


def pypi_default_tag(r: TorchRelease, os_name: str) -> str | None:
    """The variant plain `pip install torch==X` gets from PyPI on `os_name`."""
    if os_name == "windows":
        return r.pypi_default_windows
    if os_name == "macos":
        return "cpu"
    return r.pypi_default


def index_url(v: TorchVariant) -> str:
    return v.index_url or PYTORCH_INDEX + v.tag


def torch_command(
    r: TorchRelease, v: TorchVariant, os_name: str, inst: Installer, installed: Version | None = None
) -> tuple[str, str]:
    """(command, wheel) to get variant `v` of release `r`; wheel is "pypi-default" (what plain
    `pip install torch==X` gets) or "official-variant" (PyTorch's own index)."""
    default = v.tag == pypi_default_tag(r, os_name)
    same = installed is not None and Version(installed.public) == r.version
    if same:
        # The same version with another local label: pip would keep the installed one.
        args = (*inst.reinstall_flag("torch"), f"torch=={r.raw}+{v.tag}", "--index-url", index_url(v))
        return inst.line(inst.install(*args)), "pypi-default" if default else "official-variant"
    if default:
        return inst.line(inst.install(f"torch=={r.raw}")), "pypi-default"
    return inst.line(inst.install(f"torch=={r.raw}", "--index-url", index_url(v))), "official-variant"


def tf_command(r: TfRelease, gpu: bool, os_name: str, inst: Installer, cpu_installed: bool = False) -> str:
    """The TensorFlow install; `tensorflow-cpu` is removed first when it is what is installed."""
    if gpu and os_name == "linux" and r.and_cuda:
        # A release whose extra does not install from PyPI (2.15.0) gets its post release (matrix: and_cuda_broken).
        cmd = inst.install(f"'tensorflow[and-cuda]=={r.and_cuda_release}'")
    else:
        cmd = inst.install(f"tensorflow=={r.raw}")
    if cpu_installed:
        return inst.line(inst.uninstall("tensorflow-cpu") + " && " + cmd)
    return inst.line(cmd)


def torch_for_cuda(
    m: Matrix, cuda: str, version: str | None = None, os_name: str = "linux", inst: Installer | None = None
) -> tuple[str, str] | None:
    """(command, tag) that installs torch for a system CUDA `cuda` (a base image's): the variant of the same CUDA
    major whose CUDA is the newest not above it, of release `version` when the matrix has it, else of the newest
    release that has one. None when no official variant fits (CUDA 12.2 has no cu122 index: cu121 is used)."""
    inst = inst or PIP
    want = Version(cuda)
    rels = sorted((r for r in m.torch if not r.version.is_prerelease), key=lambda r: r.version, reverse=True)
    try:
        pinned = Version(Version(version).public) if version else None
    except InvalidVersion:  # a specifier or a label the matrix cannot read: any release
        pinned = None
    if pinned is not None:
        rels = [r for r in rels if r.version == pinned] or rels
    for r in rels:
        fits = [
            v
            for v in r.variants
            if v.is_cuda
            and v.cuda
            and Version(v.cuda).release[0] == want.release[0]
            and Version(v.cuda).release[:2] <= want.release[:2]
        ]
        if fits:
            v = max(fits, key=lambda v: Version(v.cuda or "0"))
            return torch_command(r, v, os_name, inst)[0], v.tag
    return None


def tf_and_cuda(version: str | None, inst: Installer | None = None, m: Matrix | None = None) -> str:
    """`pip install 'tensorflow[and-cuda]==X'` (the CUDA libraries TensorFlow pins), through the installer; X's
    row in the matrix `m` says when another release must be pinned because X's extra does not install (2.15.0)."""
    try:
        rel = m.tf_release(Version(version)) if m is not None and version else None
    except InvalidVersion:
        rel = None
    if rel is not None and rel.raw == version:
        version = rel.and_cuda_release
    return requirement_command(
        f"tensorflow[and-cuda]=={version}" if version else "tensorflow[and-cuda]", inst=inst
    )


def pin_command(
    package: str,
    version: str,
    *,
    index: str | None = None,
    no_deps: bool = False,
    reinstall: bool = False,
    inst: Installer | None = None,
) -> str:
    """`pip install [--force-reinstall] [--no-deps] NAME==V [--index-url URL]`: one distribution at one version
    (V may be a wildcard `2.1.*` or a placeholder the reader fills in)."""
    inst = inst or PIP
    args = (
        *(inst.reinstall_flag(package) if reinstall else ()),
        *(("--no-deps",) if no_deps else ()),
        f"{package}=={version}",
        *(("--index-url", index) if index else ()),
    )
    return inst.line(inst.install(*args))


def requirement_command(requirement: str, *, upgrade: bool = False, inst: Installer | None = None) -> str:
    """`pip install [-U] 'REQUIREMENT'`: a requirement with extras or a specifier, quoted for the shell."""
    inst = inst or PIP
    return inst.line(inst.install(*(("-U",) if upgrade else ()), f"'{requirement}'"))


def venv_command(venv: str, requirement: str) -> str:
    """A new virtual environment `venv` holding `requirement` (a framework kept apart from the others)."""
    quoted = f"'{requirement}'"
    return f"python -m venv {venv} && {venv}/bin/{PIP.install(quoted)}"


def no_isolation_command(requirement: str, inst: Installer | None = None) -> str:
    """`pip install --no-build-isolation REQ`: a source build that sees the environment's torch."""
    inst = inst or PIP
    return inst.line(inst.install("--no-build-isolation", requirement))


# -- JAX: `pip install -U "jax[cudaNN]==V"`, with JAX's own index for the monolithic CUDA jaxlib builds


def jax_spec(release: JaxRelease, major: int | None) -> tuple[str, JaxCudaBuild | None]:
    """The pip requirement that installs `release` with the CUDA build of `major` (None: CPU only), and that
    build (a monolithic one is found only on JAX's own index of jaxlib+cuda builds)."""
    if major is None:
        return f"jax=={release.version}", None
    build = release.build_for(major)
    extra = release.extra_for(major) or f"cuda{major}"
    if build is not None and build.kind == "monolithic":
        # The extra as JAX's page spelled it then (cuda12_pip).
        return f"jax[{extra.replace('-', '_')}]=={release.version}", build
    return f"jax[{extra}]=={release.version}", build


def jax_requirement_command(requirement: str, index: str | None = None, inst: Installer | None = None) -> str:
    """`pip install -U "REQUIREMENT" [-f INDEX]`: a JAX requirement, reading JAX's find-links page `index`."""
    inst = inst or PIP
    return inst.line(inst.install("-U", f'"{requirement}"', *(("-f", index) if index else ())))


def jax_command(release: JaxRelease, major: int | None, inst: Installer | None = None) -> str:
    """The command that installs `release` with the CUDA build of `major` (None: CPU only); a monolithic
    build reads JAX's index (its matrix row names it)."""
    spec, build = jax_spec(release, major)
    index = build.index if build is not None and build.kind == "monolithic" else None
    return jax_requirement_command(spec, index, inst)
