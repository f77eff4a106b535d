"""The check context: facts resolved against the matrix once (framework rows, wheel variants, GPUs)."""

from __future__ import annotations

import functools
import re
from dataclasses import field
from typing import TYPE_CHECKING, Union

from packaging.version import Version

from compat._valueclass import valueclass
from compat.checks.first_driver import given_driver
from compat.facts import Facts
from compat.findings import Finding, Fix, Skip
from compat.matrix import Matrix, TfRelease, TorchRelease, TorchVariant
from compat.versions import CC, Arch, parse_arch, parse_cc, parse_python, python_wheel_tag

if TYPE_CHECKING:
    from compat.probes.probeset import ProbeSet

UNKNOWN_VERSION = "matrix.unknown-version"
UNKNOWN_GPU = "gpu.unknown"

Result = Union[Finding, Skip]


@valueclass
class GpuInfo:
    label: str
    """The GPU's name (the matrix's full name for a short one: "5090" is "GeForce RTX 5090"), or "a GPU with
    compute capability X.Y" for a GPU known only by that."""
    cc: CC | None
    named: bool = True

    def with_cc(self) -> str:
        """'GeForce RTX 5090 (compute capability 12.0)'; a GPU known only by its compute capability is not named twice."""
        return f"{self.label} (compute capability {self.cc})" if self.named else self.label

    def has_cc(self) -> str:
        """'GeForce RTX 5090 has compute capability 12.0', or 'the GPU has ...' for a GPU known only by that."""
        return f"{self.label if self.named else 'the GPU'} has compute capability {self.cc}"


@valueclass(frozen=False)
class Runtime:
    """A CUDA runtime some component was built with and the driver must run."""

    who: str  # "torch 2.1.0+cu121", "TensorFlow 2.16.1", "CUDA toolkit 12.4"
    cuda: Version
    cuda_raw: str
    how: str  # provenance sentence
    subject: str = "cuda"
    """"torch", "tensorflow" or "cuda" (the toolkit): what a fix changes."""


@valueclass(frozen=False)
class Torch:
    raw: str
    version: Version
    release: TorchRelease | None
    variant: TorchVariant | None
    tag: str | None
    cuda: str | None
    cudnn: str | None
    archs: tuple[Arch, ...] | None
    build: str | None  # "cuda" | "cpu" | "rocm" | "xpu" | None (unknown, e.g. NGC's +<git hash> label)

    @property
    def label(self) -> str:
        if self.version.local or not self.tag:
            return f"torch {self.raw}"
        return f"torch {self.raw} ({self.tag})"


@valueclass(frozen=False)
class Tf:
    raw: str
    version: Version
    release: TfRelease | None
    cuda: str | None
    cudnn: str | None
    archs: tuple[Arch, ...] | None
    build: str | None


@valueclass(frozen=False)
class Ctx:
    facts: Facts
    m: Matrix
    require_gpu: bool
    os: str | None
    driver: Version | None
    driver_raw: str | None
    gpus: list[GpuInfo] | None
    python: Version | None
    cuda: Version | None
    cudnn: Version | None
    torch: Torch | None
    tf: Tf | None
    notes: list[Finding] = field(default_factory=list)
    python_tag: str | None = None
    """The Python the wheel lists name: "3.13", or "3.13t" for free-threaded CPython (its own cp313t wheels)."""
    driver_branch: int | None = None
    """Set when only a driver branch was given (`--driver 535`): `driver` is then that branch's first release."""
    driver_label: str | None = None
    """How findings name the driver: `driver 535.104.05` or `driver branch R535 (compared as its first release
    535.54.03)`; see driver_text()."""

    def driver_text(self) -> str:
        """`driver 535.104.05`, or `driver branch R535 (compared as its first release 535.54.03)`."""
        return self.driver_label or f"driver {self.driver_raw or '?'}"

    def has_fact(self, name: str) -> bool:
        """Whether fact `name` is known: a scalar fact, or "gpus" (the GPU list), "cc" (a GPU compute
        capability), "framework" (torch or TensorFlow)."""
        if name == "gpus":
            return self.gpus is not None
        if name == "cc":
            return any(g.cc is not None for g in self.gpus or [])
        if name == "framework":
            return self.torch is not None or self.tf is not None
        return self.facts.get(name) is not None

    @functools.cached_property
    def probes(self) -> ProbeSet:
        """The doctor's probe results, typed (decoded once when Facts holds a plain mapping)."""
        from compat.probes.probeset import probe_set

        return probe_set(self.facts.probes)

    def has_probe(self, name: str) -> bool:
        """Whether the doctor's probe `name` left a result in the facts."""
        return name in self.facts.probes

    @property
    def gpu_present(self) -> bool | None:
        if self.gpus is None:
            return None
        return len(self.gpus) > 0

    def os_label(self) -> str:
        return {"linux": "Linux", "windows": "Windows", "macos": "macOS"}.get(self.os or "linux", "Linux")

    def driver_os(self) -> str:
        return self.os if self.os in ("linux", "windows") else "linux"


# ------------------------------------------------------------------ context


def _v(facts: Facts, name: str) -> Version | None:
    f = facts.get(name)
    return Version(f.value) if f is not None and f.value is not None else None


def unknown_finding(m: Matrix, what: str, raw: str, newest: Version | None, file: str, fact: str) -> Finding:
    if newest is not None and Version(Version(raw).public) > newest:
        msg = (
            f"{what} {raw} is newer than anything in the matrix (newest known: {newest}; "
            f"matrix updated {m.updated_for(file)}). Checks that need it are skipped."
        )
        title = f"{what} {raw} is newer than the matrix"
    else:
        msg = (
            f"{what} {raw} is not a release the matrix knows (matrix updated {m.updated_for(file)}). "
            "Checks that need it are skipped."
        )
        title = f"{what} {raw} is unknown to the matrix"
    return Finding(
        UNKNOWN_VERSION,
        "info",
        title,
        msg,
        (Fix("Update compat to get newer matrix data", "pip install --upgrade compat"),),
        {fact: raw},
    )


_CU_TAG = re.compile(r"^cu(\d+)(\d)$")


def tag_build(tag: str) -> str | None:
    """The build kind a wheel's local label names; None for labels that are not PyTorch wheel tags."""
    if _CU_TAG.match(tag):
        return "cuda"
    if tag == "cpu":
        return "cpu"
    if tag.startswith("rocm"):
        return "rocm"
    if tag == "xpu":
        return "xpu"
    return None


def _build_torch(ctx: Ctx) -> None:
    f = ctx.facts.get("torch")
    if f is None or f.value is None:
        return
    v = Version(f.value)
    rel = ctx.m.torch_release(v)
    build_fact = ctx.facts.get("torch_build")
    # The variant is the label's first segment: `+cpu.cxx11.abi` is the cpu variant built with the new C++ ABI.
    tag = v.local.split(".")[0] if v.local else None
    if tag is None and rel is not None:
        tag = {"windows": rel.pypi_default_windows, "macos": "cpu"}.get(ctx.os or "linux", rel.pypi_default)
    variant = rel.variant(tag) if rel is not None and tag else None
    t = Torch(f.raw or "", v, rel, variant, tag, None, None, None, build_fact.raw if build_fact else None)
    if variant is not None:
        t.cuda, t.cudnn, t.archs = variant.cuda, variant.cudnn, variant.archs
    elif rel is None and tag is not None and (cu := _CU_TAG.match(tag)):
        # A release the matrix does not know (nightly, newer): its +cuXY label still names the CUDA runtime.
        t.cuda = f"{int(cu.group(1))}.{cu.group(2)}"
    # Facts measured from the real build win over the matrix.
    for name, attr in (("torch_cuda", "cuda"), ("torch_cudnn", "cudnn")):
        pf = ctx.facts.get(name)
        if pf is not None:
            setattr(t, attr, pf.raw)
    af = ctx.facts.get("torch_archs")
    if af is not None and af.value:
        t.archs = tuple(parse_arch(a) for a in af.value.split())
    if t.build is None and tag:
        t.build = tag_build(tag)
    ctx.torch = t
    if rel is None and ctx.facts.get("torch_cuda") is None:
        ctx.notes.append(
            unknown_finding(ctx.m, "PyTorch", f.raw or "", ctx.m.newest_torch(), "pytorch.yaml", "torch")
        )


def _build_tf(ctx: Ctx) -> None:
    f = ctx.facts.get("tensorflow")
    if f is None or f.value is None:
        return
    v = Version(f.value)
    rel = ctx.m.tf_release(v)
    t = Tf(
        f.raw or "",
        v,
        rel,
        rel.cuda if rel else None,
        rel.cudnn if rel else None,
        rel.archs if rel else None,
        None,
    )
    for name, attr in (("tf_cuda", "cuda"), ("tf_cudnn", "cudnn")):
        pf = ctx.facts.get(name)
        if pf is not None:
            setattr(t, attr, pf.raw)
    af = ctx.facts.get("tf_archs")
    if af is not None and af.value:
        t.archs = tuple(parse_arch(a) for a in af.value.split())
    bf = ctx.facts.get("tf_build")
    t.build = bf.raw if bf else None
    ctx.tf = t
    if rel is None and ctx.facts.get("tf_cuda") is None:
        ctx.notes.append(
            unknown_finding(
                ctx.m, "TensorFlow", f.raw or "", ctx.m.newest_tensorflow(), "tensorflow.yaml", "tensorflow"
            )
        )


def full_name(given: str, known: str) -> str:
    """The name to print for a GPU the matrix knows: the given one when it holds the matrix's ("NVIDIA GeForce RTX
    4090", "Tesla K80"), else the matrix's ("5090" and "RTX 5090" are "GeForce RTX 5090", "a100" is "A100")."""
    g, k = given.strip(), known.strip()
    if g.lower() != k.lower() and re.search(rf"(?<![\w-]){re.escape(k.lower())}(?![\w])", g.lower()):
        return g
    return k


def _build_gpus(ctx: Ctx) -> None:
    gpus = ctx.facts.gpus
    if gpus is None:
        ctx.gpus = None
        return
    out = []
    for g in gpus:
        cc = parse_cc(g.cc) if g.cc else None
        label = g.name or (f"a GPU with compute capability {cc}" if cc else "a GPU")
        row = ctx.m.gpu(g.name) if g.name else None
        if row is not None:
            label = full_name(g.name or "", row.name)
        if g.name and cc is None:
            if row is not None:
                cc = row.cc
            else:
                ctx.notes.append(
                    Finding(
                        UNKNOWN_GPU,
                        "info",
                        f"GPU {g.name!r} is not in the matrix",
                        f"The compute capability of {g.name!r} is unknown (matrix updated {ctx.m.updated_for('gpus.yaml')}); "
                        "architecture checks are skipped. Give it with --cc X.Y.",
                        (
                            Fix(
                                "Name the compute capability explicitly",
                                f"compat check --cc X.Y --gpu {g.name!r}",
                            ),
                        ),
                        {"gpu": g.name},
                        group="driver",
                    )
                )
        out.append(GpuInfo(label, cc, named=bool(g.name)))
    # One entry per distinct (label, cc): eight identical GPUs are one check.
    seen: dict[tuple[str, CC | None], GpuInfo] = {}
    for gi in out:
        seen.setdefault((gi.label, gi.cc), gi)
    ctx.gpus = list(seen.values())


def _raw(facts: Facts, name: str) -> str:
    f = facts.get(name)
    return (f.raw if f is not None else None) or ""


def build_context(facts: Facts, m: Matrix, require_gpu: bool = False) -> Ctx:
    os_f = facts.get("os")
    drv = facts.get("driver")
    py = facts.get("python")
    ctx = Ctx(
        facts=facts,
        m=m,
        require_gpu=require_gpu,
        os=os_f.value if os_f else None,
        driver=_v(facts, "driver"),
        driver_raw=drv.raw if drv else None,
        gpus=None,
        python=parse_python(py.raw) if py and py.raw else None,
        cuda=_v(facts, "cuda"),
        cudnn=_v(facts, "cudnn"),
        torch=None,
        tf=None,
        python_tag=python_wheel_tag(py.raw) if py and py.raw else None,
    )
    if drv is not None and drv.raw is not None:
        given = given_driver(m, drv.raw, drv.value, ctx.driver_os())
        ctx.driver, ctx.driver_raw, ctx.driver_branch = given.version, given.raw, given.branch
        ctx.driver_label = given.text()
    _build_gpus(ctx)
    _build_torch(ctx)
    _build_tf(ctx)
    if (
        ctx.cuda is not None
        and m.cuda_release(ctx.cuda) is None
        and ctx.cuda.release[0] not in m.minor_compat
    ):
        ctx.notes.append(
            unknown_finding(m, "CUDA", _raw(facts, "cuda"), m.newest_cuda(), "cuda.yaml", "cuda")
        )
    if ctx.cudnn is not None and m.cudnn_release(ctx.cudnn) is None:
        ctx.notes.append(
            unknown_finding(m, "cuDNN", _raw(facts, "cudnn"), m.newest_cudnn(), "cudnn.yaml", "cudnn")
        )
    return ctx


def runtimes(ctx: Ctx) -> list[Runtime]:
    out: list[Runtime] = []
    if ctx.torch is not None and ctx.torch.cuda and ctx.torch.build != "cpu":
        how = (
            "reported by the installed build"
            if ctx.facts.get("torch_cuda") is not None
            else f"the {ctx.torch.tag} wheel bundles it"
        )
        out.append(Runtime(ctx.torch.label, Version(ctx.torch.cuda), ctx.torch.cuda, how, "torch"))
    if ctx.tf is not None and ctx.tf.cuda and ctx.tf.build != "cpu":
        how = (
            "reported by the installed build"
            if ctx.facts.get("tf_cuda") is not None
            else "its tested build configuration"
        )
        out.append(Runtime(f"TensorFlow {ctx.tf.raw}", Version(ctx.tf.cuda), ctx.tf.cuda, how, "tensorflow"))
    if ctx.cuda is not None:
        f = ctx.facts.get("cuda")
        out.append(
            Runtime(
                f"CUDA {f.raw if f else ctx.cuda}",
                ctx.cuda,
                (f.raw if f else None) or str(ctx.cuda),
                f"given by {f.source}" if f else "",
            )
        )
    return out
