"""Row types of the version matrix: one frozen dataclass per kind of row in matrix/*.yaml."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat._valueclass import valueclass
from compat.versions import CC, Arch

CORE_FILES = ("cuda.yaml", "gpus.yaml", "cudnn.yaml", "pytorch.yaml", "tensorflow.yaml", "known_issues.yaml")
OSES = ("linux", "windows")
ENV_MATRIX_DIR = "COMPAT_MATRIX_DIR"
_EXACT = re.compile(r"\d+(?:\.\d+)+")


# ------------------------------------------------------------------ rows


@valueclass
class CudaRelease:
    version: Version
    raw: str
    name: str
    min_driver: Mapping[str, str | None]
    """OS -> minimum driver (raw string as NVIDIA prints it); None where unknown or NVIDIA lists N/A."""
    source: str
    na: Mapping[str, str] = field(default_factory=dict)
    """Fields NVIDIA lists as "N/A" (e.g. ``min_driver.windows``) -> the note saying so; see SCHEMA.md."""


@valueclass
class MinorCompat:
    major: int
    floor: Mapping[str, str | None]
    source: str
    na: Mapping[str, str] = field(default_factory=dict)
    """OS -> note, where NVIDIA lists no floor for that OS ("N/A")."""


@valueclass
class CCRow:
    cc: CC
    added: Version | None
    deprecated: Version | None
    removed: Version | None
    source: str
    last_driver: int | None = None
    """The last driver branch (e.g. 470) that supports GPUs of this compute capability; None: still supported."""
    last_driver_source: str | None = None
    na: Mapping[str, str] = field(default_factory=dict)


@valueclass
class GpuRow:
    name: str
    aliases: tuple[str, ...]
    cc: CC
    architecture: str
    segment: str
    source: str


@valueclass
class CudnnPackage:
    cuda_major: int
    cuda_min: Version | None
    cuda_max: Version | None
    min_driver: Mapping[str, str | None]
    cc_min: CC | None
    cc_max: CC | None
    na: Mapping[str, str] = field(default_factory=dict)
    """Fields the support matrix lists as "N/A" -> the note saying so."""


@valueclass
class CudnnRelease:
    version: Version
    raw: str
    packages: tuple[CudnnPackage, ...]
    source: str


@valueclass
class TorchVariant:
    tag: str
    cuda: str | None
    cudnn: str | None
    archs: tuple[Arch, ...] | None
    """None: not known; () for CPU builds."""
    index_url: str | None
    na: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_cuda(self) -> bool:
        return self.tag.startswith("cu")


@valueclass
class TorchRelease:
    version: Version
    raw: str
    python: tuple[str, ...]
    pypi_default: str | None
    pypi_default_windows: str
    pypi_requires: Mapping[str, str]
    variants: tuple[TorchVariant, ...]
    source: str

    def variant(self, tag: str) -> TorchVariant | None:
        for v in self.variants:
            if v.tag == tag:
                return v
        return None


@valueclass
class TorchAbi:
    """One row of pytorch.yaml's `cxx11_abi` table: the C++ ABI (_GLIBCXX_USE_CXX11_ABI) of the Linux x86_64
    wheels (PyPI and PyTorch's own index) of the torch releases in `torch`, for the variant tags in
    `variants` (None: every variant). The first row that matches a (release, tag) wins."""

    torch: SpecifierSet
    variants: tuple[str, ...] | None
    cxx11: bool
    source: str


@valueclass
class TfRelease:
    version: Version
    raw: str
    python: tuple[str, ...]
    cuda: str | None
    cudnn: str | None
    and_cuda: Mapping[str, str]
    windows_gpu: bool | None
    archs: tuple[Arch, ...] | None
    source: str
    compiler: str | None = None
    """Compiler of the tested build configuration (e.g. "Clang 17.0.6"), as the table prints it."""
    build_tool: str | None = None
    """Build tool of the tested build configuration (e.g. "Bazel 6.5.0")."""
    na: Mapping[str, str] = field(default_factory=dict)
    and_cuda_broken: str | None = None
    """Why `tensorflow[and-cuda]==<this release>` fails to install from PyPI (None: it installs)."""
    and_cuda_use: str | None = None
    """The release to install with [and-cuda] instead (the same build, e.g. 2.15.0.post1 for 2.15.0)."""

    @property
    def and_cuda_release(self) -> str:
        """The release a `tensorflow[and-cuda]==X` command pins for this one: a post release where the plain
        pin's extra does not install."""
        return self.and_cuda_use or self.raw

    def and_cuda_stack(self) -> dict[str, str]:
        """The CUDA and cuDNN [and-cuda] brings as wheels ({"cuda": "12.3", "cudnn": "8.9.7"}) in `compat check`
        flag vocabulary: the extra's exact pins, else the tested build configuration; empty without the extra."""
        if not self.and_cuda:
            return {}
        out: dict[str, str] = {}
        for name, ver in self.and_cuda.items():
            rel = Version(ver).release if _EXACT.fullmatch(ver) else ()
            if name.startswith("nvidia-cuda-runtime-cu") and len(rel) >= 2:
                out["cuda"] = f"{rel[0]}.{rel[1]}"
            elif name.startswith("nvidia-cudnn-cu") and len(rel) >= 3:
                out["cudnn"] = f"{rel[0]}.{rel[1]}.{rel[2]}"
        if "cuda" not in out and self.cuda:
            out["cuda"] = self.cuda
        if "cudnn" not in out and self.cudnn:
            out["cudnn"] = self.cudnn
        return out


@valueclass
class KnownIssue:
    id: str
    title: str
    when: Mapping[str, SpecifierSet]
    severity: str
    message: str
    fix_text: str | None
    fix_command: str | None
    source: str
    requires: tuple[str, ...] = ()
    """Boolean facts that must be true (e.g. tf_and_cuda: TensorFlow installed with [and-cuda])."""


KNOWN_ISSUE_FLAGS = ("tf_and_cuda",)


NA = "N/A"
"""How a row says "the source lists no value" (also ``{na: "what the source says"}``); null means unknown."""
