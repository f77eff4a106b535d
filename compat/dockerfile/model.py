"""The Dockerfile check's ids, options and the per-stage state the analysis fills in."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path

from compat._valueclass import valueclass
from compat.dockerfile.actions import Install
from compat.dockerfile.images import BaseStack
from compat.findings import Finding

# Stable ids of the Dockerfile checks (never renumbered).
BASE_UNKNOWN = "dockerfile.base-unknown"
ARG_UNSET = "dockerfile.arg-unset"
SYNTAX = "dockerfile.syntax"
SECOND_CUDA = "dockerfile.second-cuda"
NVCC_TORCH = "dockerfile.nvcc-torch"
CUDNN = "dockerfile.cudnn"
CPU_WHEEL = "dockerfile.cpu-wheel"
INDEX_TAG = "dockerfile.index-tag"
REQUIRE_CUDA = "dockerfile.require-cuda"
ARCH_LIST = "dockerfile.arch-list"
UNPINNED = "dockerfile.unpinned"
UNRESOLVED = "dockerfile.unresolved"
REQUIREMENTS = "dockerfile.requirements"
NO_NVCC = "dockerfile.no-nvcc"
PRERELEASE = "dockerfile.prerelease"
COMPANION = "dockerfile.companion"
GET_PIP = "dockerfile.get-pip"
COMPAT_LIBS = "dockerfile.compat-libs"
NO_CUDNN = "dockerfile.no-cudnn"
DELETED_TAG = "dockerfile.deleted-tag"
CPU_BASE = "dockerfile.cpu-base"
JAX_EXTRA = "dockerfile.jax-extra"
JAX_LOCAL = "dockerfile.jax-local"
JAX_INDEX = "dockerfile.jax-index"
APT_KEY = "dockerfile.apt-key"
BUILD_ISOLATION = "dockerfile.build-isolation"
GLUED_COMMAND = "dockerfile.glued-command"
CHECK_IDS = (
    BASE_UNKNOWN,
    ARG_UNSET,
    SYNTAX,
    SECOND_CUDA,
    NVCC_TORCH,
    CUDNN,
    CPU_WHEEL,
    INDEX_TAG,
    REQUIRE_CUDA,
    ARCH_LIST,
    UNPINNED,
    UNRESOLVED,
    REQUIREMENTS,
    NO_NVCC,
    PRERELEASE,
    COMPANION,
    GET_PIP,
    COMPAT_LIBS,
    NO_CUDNN,
    DELETED_TAG,
    CPU_BASE,
    JAX_EXTRA,
    JAX_LOCAL,
    JAX_INDEX,
    APT_KEY,
    BUILD_ISOLATION,
    GLUED_COMMAND,
)

PIP_CUDA_COST = "the pip nvidia-* wheels add about 2-3 GB"
PREDEFINED_ARGS = {
    "TARGETPLATFORM": "linux/amd64",
    "TARGETOS": "linux",
    "TARGETARCH": "amd64",
    "TARGETVARIANT": "",
    "BUILDPLATFORM": "linux/amd64",
    "BUILDOS": "linux",
    "BUILDARCH": "amd64",
    "BUILDVARIANT": "",
}
# torch.utils.cpp_extension named architectures (TORCH_CUDA_ARCH_LIST accepts these names).
NAMED_ARCHES = {
    "kepler+tesla": "3.7",
    "kepler": "3.5+PTX",
    "maxwell+tegra": "5.3",
    "maxwell": "5.0;5.2+PTX",
    "pascal": "6.0;6.1+PTX",
    "volta+tegra": "7.2",
    "volta": "7.0+PTX",
    "turing": "7.5+PTX",
    "ampere+tegra": "8.7",
    "ampere": "8.0;8.6+PTX",
    "ada": "8.9+PTX",
    "hopper": "9.0+PTX",
}
ENV_DIRS = (
    "conda",
    "site-packages",
    "dist-packages",
    "venv",
    "/usr/local/lib/python",
    "/root/.local",
    "/usr/local",
    "/opt/python",
)


@valueclass(frozen=False)
class Where:
    """A fact's value and the Dockerfile line it comes from."""

    value: str
    line: int
    how: str = ""


@valueclass(frozen=False)
class TorchState:
    install: Install | None
    raw: str | None
    """What the resolver gets as "torch" ("2.1.0+cu121"); None when the version is unknown."""
    line: int
    build: str | None = None
    cuda: str | None = None
    from_base: bool = False


@valueclass(frozen=False)
class TfState:
    install: Install | None
    raw: str | None
    line: int
    cpu: bool = False
    and_cuda: bool = False
    from_base: bool = False


@valueclass
class JaxState:
    """What the stage's pip installs of jax, jaxlib and the JAX CUDA plugins were (the latest of each).

    Replaced, never changed in place: a child stage (FROM parent) shares its parent's object."""

    jax: Install | None = None
    jax_line: int = 0
    extras: frozenset[str] = frozenset()
    """Every extra asked of jax in this stage (normalised: cuda12_pip -> cuda12-pip)."""
    jaxlib: Install | None = None
    jaxlib_line: int = 0
    plugins: tuple[tuple[Install, int], ...] = ()
    """jax-cudaNN-plugin / jax-cudaNN-pjrt installs with their lines."""


@valueclass(frozen=False)
class JaxView:
    """The JAX a stage ends up with, derived from its JaxState and the matrix (compat.dockerfile.jaxinstall)."""

    release: str
    """The jax release (pinned, or what an unpinned requirement resolves to today)."""
    raw: str
    """The resolver's `jax` fact: "0.4.30+cuda12", or "0.4.30" for a CPU-only install."""
    line: int
    known: bool
    """Whether matrix/jax.yaml lists the release."""
    major: int | None = None
    """CUDA major of the install's CUDA build; None: CPU only."""
    kind: str | None = None
    """"plugin" or "monolithic" (jaxlib==X+cudaNN.cudnnMM)."""
    pip_cuda: bool | None = None
    """True: CUDA and cuDNN come as pip wheels; False: from the system (the image); None: unknown."""
    how: str = ""
    """What installs the CUDA build ("the cuda12 extra", "jaxlib==0.4.26+cuda12.cudnn89")."""
    jaxlib: str | None = None
    """The exact jaxlib pin (public part), when pinned."""
    tool: str = "pip"
    missing: tuple[str, ...] = ()
    """Extras asked of jax that the release does not declare (dockerfile.jax-extra)."""
    cpu_explained: bool = False
    """A CUDA extra was asked for but does not exist in the release (reported as dockerfile.jax-extra)."""


@valueclass(frozen=False)
class Event:
    """Something a RUN or ENV line does that a rule in rules.py judges later (companion installs, get-pip.py,
    forward-compatibility libraries, packages that need cuDNN)."""

    kind: str
    """companion | flash-attn-wheel | get-pip-url | get-pip-run | compat-libs | needs-cudnn | apt-update |
    apt-key-fix | build-isolation"""
    line: int
    what: str
    """The package, URL or path concerned."""
    version: str | None = None
    """Companion: its exact pin; get-pip-run: the interpreter's version."""
    torch: str | None = None
    """The stage's torch (resolver form) when the event happened."""
    same_command_torch: bool = False
    no_deps: bool = False
    branch: str | None = None
    platform: str | None = None
    """flash-attn-wheel: the wheel's platform tag ("linux_x86_64", "win_amd64"); None when not read."""

    @property
    def in_branch(self) -> str:
        """ " (in BRANCH)" for an event in one branch of a shell condition, else "" (for a finding's message)."""
        return f" (in {self.branch})" if self.branch else ""


@valueclass(frozen=False)
class Stage:
    index: int
    name: str | None
    base: str
    line: int
    stack: BaseStack
    parent: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    copies: list[tuple[str, str, bool, int]] = field(default_factory=list)
    """(context source, image destination, destination is a directory, line) of COPY/ADD from the context."""
    python: Where | None = None
    os: str | None = None
    cuda: Where | None = None
    cudnn: Where | None = None
    cudnn_major: int | None = None
    torch: TorchState | None = None
    tf: TfState | None = None
    jax: JaxState | None = None
    jax_view: JaxView | None = None
    arch_list: Where | None = None
    extension_builds: list[tuple[int, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name or str(self.index)

    def clone_for_child(self, index: int, name: str | None, base: str, line: int) -> Stage:
        s = replace(
            self,
            index=index,
            name=name,
            base=base,
            line=line,
            parent=self.label,
            env=dict(self.env),
            args={},
            copies=list(self.copies),
            findings=[],
            extension_builds=list(self.extension_builds),
            events=list(self.events),
        )
        return s


@valueclass(frozen=False)
class Options:
    target_driver: str | None = None
    target_gpu: str | None = None
    target_cc: str | None = None
    build_args: Mapping[str, str] = field(default_factory=dict)
    context: Path | None = None
    today: _dt.date | None = None
    """The day the driver-branch support table is read for (None: today)."""
