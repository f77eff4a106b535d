"""What an install command does, as data: its actions, the framework distributions, pip's options (for pip.py, installs.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Union

from packaging.utils import canonicalize_name
from packaging.version import Version

from compat._valueclass import valueclass

FRAMEWORKS = {
    "torch": "torch",
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "tf-nightly": "tensorflow",
    "tf-nightly-gpu": "tensorflow",
    "tf-nightly-cpu": "tensorflow",
    # JAX: jax itself, jaxlib (CPU, or the old monolithic `+cudaNN.cudnnMM` builds) and the CUDA plugins.
    "jax": "jax",
    "jaxlib": "jax",
    "jax-cuda12-plugin": "jax",
    "jax-cuda12-pjrt": "jax",
    "jax-cuda13-plugin": "jax",
    "jax-cuda13-pjrt": "jax",
}
# Packages whose install compiles CUDA code against torch (nvcc must match torch.version.cuda's major).
EXTENSION_PACKAGES = frozenset(
    {
        "apex",
        "flash-attn",
        "flash_attn",
        "xformers",
        "deepspeed",
        "mmcv",
        "mmcv-full",
        "detectron2",
        "pytorch3d",
        "nvdiffrast",
        "tinycudann",
        "tiny-cuda-nn",
        "causal-conv1d",
        "mamba-ssm",
        "megablocks",
        "torch-scatter",
        "torch-sparse",
        "torch-cluster",
        "gsplat",
        "diff-gaussian-rasterization",
        "vllm",
        "auto-gptq",
        "exllamav2",
        "grouped_gemm",
        "transformer-engine",
        "transformer_engine",
    }
)
PIP_VALUE_OPTS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-e",
        "--editable",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "--upgrade-strategy",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--only-binary",
        "--no-binary",
        "--progress-bar",
        "--trusted-host",
        "--cache-dir",
        "--log",
        "--timeout",
        "--retries",
        "--proxy",
        "--cert",
        "--client-cert",
        "--exists-action",
        "--global-option",
        "--config-settings",
        "-C",
        "--install-option",
        "--report",
        "--root-user-action",
        "--python",
        "-p",
        "--index-strategy",
        "--torch-backend",
        "--extra",
        "--group",
        "--keyring-provider",
        "--resolution",
        "--prerelease",
        "--build-option",
    }
)
INDEX_TAG_RE = re.compile(
    r"/(?:whl/)?(?:nightly/|test/)?(cu\d{2,3}|cpu(?:-cxx11-abi)?|rocm\d+(?:\.\d+)*|xpu)(?:/|$|/torch_stable\.html)"
)
WHEEL_FRAMEWORKS = frozenset({"torch", "tensorflow", "tensorflow-gpu", "tensorflow-cpu"})
"""Distributions whose wheel file (or URL) `pip install` is read as that framework's install."""


@valueclass(frozen=False)
class Install:
    """One framework requirement a command installs."""

    framework: str
    """"torch", "tensorflow" or "jax"."""
    package: str
    """As written, normalised (torch, tensorflow-cpu, tensorflow-gpu, pytorch, tf-nightly)."""
    spec: str
    """The requirement as written ("torch==2.1.0+cu121", "tensorflow[and-cuda]>=2.15")."""
    version: str | None = None
    """Exact pin (with a local label where written); None when unpinned or a range."""
    specifier: str = ""
    """Range or wildcard ("==2.6.0.*", ">=2.0.0") when not an exact pin."""
    extras: frozenset[str] = frozenset()
    index_tag: str | None = None
    """cu121 / cpu / rocm6.0 from the index or find-links URL."""
    index_kind: str | None = None
    """"index" (--index-url: the only index), "extra" (--extra-index-url / -f: beside PyPI)."""
    index_url: str | None = None
    tool: str = "pip"
    python: str | None = None
    """Interpreter named in the command (python3.11 -m pip, pip3.11)."""
    conda_cuda: str | None = None
    """pytorch-cuda=12.1 / cudatoolkit=11.3 beside a conda install."""
    conda_cpu: bool = False
    channels: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    """Variables the spec uses that the Dockerfile leaves unset."""
    origin: str = ""
    """"requirements.txt:3" when read from a file."""
    channel: str | None = None
    """"nightly" or "test" when the index is PyTorch's pre-release channel (not a release install)."""
    links: tuple[str, ...] = ()
    """Every index and find-links URL the install reads beside PyPI (JAX's jax_cuda_releases.html)."""


@valueclass(frozen=False)
class Uninstall:
    frameworks: tuple[str, ...]


@valueclass(frozen=False)
class SetPython:
    version: str | None
    """None: apt's python3 of the stage's OS; "": an interpreter whose version is unknown (Miniconda-latest)."""
    how: str


@valueclass(frozen=False)
class SetCudnn:
    major: int
    version: str | None
    how: str


@valueclass(frozen=False)
class SetCuda:
    version: str
    how: str


@valueclass(frozen=False)
class ExtensionBuild:
    what: str


@valueclass(frozen=False)
class Note:
    """Something odd about an install (a requirements file that cannot be read)."""

    id: str
    title: str
    message: str
    severity: str = "info"


Action = Union[Install, Uninstall, SetPython, SetCudnn, SetCuda, ExtensionBuild, Note]


@valueclass(frozen=False)
class InstallContext:
    """What an install command needs from its stage."""

    workdir: str
    resolve_path: Callable[[str], tuple[Path | None, str]]
    """Image path → (file in the build context or None, why not)."""
    env: dict[str, str] = field(default_factory=dict)


def readable(version: str) -> bool:
    """Whether packaging reads `version` (past 4300 digits it raises ValueError, not InvalidVersion)."""
    try:
        Version(version)
    except ValueError:
        return False
    return True


def abs_path(path: str, cwd: str) -> str:
    """`path` in the image, made absolute against the working directory `cwd`."""
    joined = path if path.startswith("/") else f"{(cwd or '/').rstrip('/')}/{path}"
    return "/" + os.path.normpath(joined).lstrip("/")


def uninstall_of(args: list[str]) -> list[Action]:
    """The uninstall of the frameworks among `args` (names as pip/conda take them), else nothing."""
    fws = tuple(sorted({FRAMEWORKS[norm_name(a)] for a in args if norm_name(a) in FRAMEWORKS}))
    return [Uninstall(fws)] if fws else []


def norm_name(name: str) -> str:
    """A distribution name as pip compares it (PEP 503)."""
    return canonicalize_name(name)


def where(inst: Install, line: int) -> str:
    """Where an install is written: "line 12", or "line 12 (requirements.txt:3)" when read from a file."""
    return f"line {line}" + (f" ({inst.origin})" if inst.origin else "")
