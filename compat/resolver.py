"""The resolver: a pure function from (facts, matrix) to findings. No I/O, no probing, no printing."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Callable, Union

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from compat.facts import Facts
from compat.findings import Finding, Fix, Report, Skip, unique
from compat.matrix import CudaRelease, CudnnPackage, Matrix, TfRelease, TorchRelease, TorchVariant
from compat.versions import CC, Arch, major_minor, parse_arch, parse_cc, parse_python, python_wheel_tag

# Stable check ids. Never renumber or rename: users' scripts select on them.
DRIVER_CUDA = "driver.cuda"
TOOLKIT_ARCH = "toolkit.arch"
WHEEL_ARCH = "wheel.arch"
PYTHON_FRAMEWORK = "python.framework"
TF_CUDA = "tensorflow.cuda"
TF_CUDNN = "tensorflow.cudnn"
TF_WINDOWS = "tensorflow.windows-gpu"
TORCH_VARIANT = "torch.variant"
CUDNN_CUDA = "cudnn.cuda"
CUDNN_ARCH = "cudnn.arch"
CUDNN_DRIVER = "cudnn.driver"
CPU_BUILD = "framework.cpu-build"
UNKNOWN_VERSION = "matrix.unknown-version"
UNKNOWN_GPU = "gpu.unknown"
GPU_REQUIRED = "gpu.required"
DRIVER_GPU = "driver.gpu-support"
KNOWN_ISSUE = "known"

CHECK_IDS = (
    DRIVER_CUDA,
    TOOLKIT_ARCH,
    WHEEL_ARCH,
    PYTHON_FRAMEWORK,
    TF_CUDA,
    TF_CUDNN,
    TF_WINDOWS,
    TORCH_VARIANT,
    CUDNN_CUDA,
    CUDNN_ARCH,
    CUDNN_DRIVER,
    CPU_BUILD,
    UNKNOWN_VERSION,
    UNKNOWN_GPU,
    GPU_REQUIRED,
    DRIVER_GPU,
)

Result = Union[Finding, Skip]

# Tegra (Jetson) compute capabilities: cubins are not binary compatible across minor revisions on Tegra, nor
# between desktop and Tegra ("Binary compatibility is supported only for the desktop. It is not supported for
# Tegra."): https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility. 3.2 TK1, 5.3 TX1/Nano,
# 6.2 TX2, 7.2 Xavier, 8.7 Orin, 10.1 Thor (CUDA 12.x; 11.0 from CUDA 13): https://developer.nvidia.com/cuda-gpus
TEGRA_CCS = frozenset({CC(3, 2), CC(5, 3), CC(6, 2), CC(7, 2), CC(8, 7), CC(10, 1), CC(11, 0)})


@dataclass(frozen=True)
class GpuInfo:
    label: str
    cc: CC | None


@dataclass
class Runtime:
    """A CUDA runtime some component was built with and the driver must run."""

    who: str  # "torch 2.1.0+cu121", "TensorFlow 2.16.1", "CUDA toolkit 12.4"
    cuda: Version
    cuda_raw: str
    how: str  # provenance sentence


@dataclass
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


@dataclass
class Tf:
    raw: str
    version: Version
    release: TfRelease | None
    cuda: str | None
    cudnn: str | None
    archs: tuple[Arch, ...] | None
    build: str | None


@dataclass
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


def _unknown(m: Matrix, what: str, raw: str, newest: Version | None, file: str, fact: str) -> Finding:
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


def _tag_build(tag: str) -> str | None:
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
        t.build = _tag_build(tag)
    ctx.torch = t
    if rel is None and ctx.facts.get("torch_cuda") is None:
        ctx.notes.append(
            _unknown(ctx.m, "PyTorch", f.raw or "", ctx.m.newest_torch(), "pytorch.yaml", "torch")
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
            _unknown(
                ctx.m, "TensorFlow", f.raw or "", ctx.m.newest_tensorflow(), "tensorflow.yaml", "tensorflow"
            )
        )


def _build_gpus(ctx: Ctx) -> None:
    gpus = ctx.facts.gpus
    if gpus is None:
        ctx.gpus = None
        return
    out = []
    for g in gpus:
        cc = parse_cc(g.cc) if g.cc else None
        label = g.name or (f"a GPU with compute capability {cc}" if cc else "a GPU")
        if g.name and cc is None:
            row = ctx.m.gpu(g.name)
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
        out.append(GpuInfo(label, cc))
    # One entry per distinct (label, cc): eight identical GPUs are one check.
    seen: dict[tuple[str, CC | None], GpuInfo] = {}
    for gi in out:
        seen.setdefault((gi.label, gi.cc), gi)
    ctx.gpus = list(seen.values())


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
    _build_gpus(ctx)
    _build_torch(ctx)
    _build_tf(ctx)
    if (
        ctx.cuda is not None
        and m.cuda_release(ctx.cuda) is None
        and ctx.cuda.release[0] not in m.minor_compat
    ):
        ctx.notes.append(
            _unknown(m, "CUDA", facts.get("cuda").raw or "", m.newest_cuda(), "cuda.yaml", "cuda")
        )  # type: ignore[union-attr]
    if ctx.cudnn is not None and m.cudnn_release(ctx.cudnn) is None:
        ctx.notes.append(
            _unknown(m, "cuDNN", facts.get("cudnn").raw or "", m.newest_cudnn(), "cudnn.yaml", "cudnn")
        )  # type: ignore[union-attr]
    return ctx


# ------------------------------------------------------------------ helpers


def _fmt_driver(raw: str | None) -> str:
    return raw or "?"


def runtimes(ctx: Ctx) -> list[Runtime]:
    out: list[Runtime] = []
    if ctx.torch is not None and ctx.torch.cuda and ctx.torch.build != "cpu":
        how = (
            "reported by the installed build"
            if ctx.facts.get("torch_cuda") is not None
            else f"the {ctx.torch.tag} wheel bundles it"
        )
        out.append(Runtime(ctx.torch.label, Version(ctx.torch.cuda), ctx.torch.cuda, how))
    if ctx.tf is not None and ctx.tf.cuda and ctx.tf.build != "cpu":
        how = (
            "reported by the installed build"
            if ctx.facts.get("tf_cuda") is not None
            else "its tested build configuration"
        )
        out.append(Runtime(f"TensorFlow {ctx.tf.raw}", Version(ctx.tf.cuda), ctx.tf.cuda, how))
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


def driver_requirement(
    m: Matrix, cuda: Version, os_name: str
) -> tuple[str | None, str | None, CudaRelease | None]:
    """(minor-compat floor, the release's own minimum driver, the release row) for running `cuda`."""
    rel = m.cuda_release(cuda)
    floor_row = m.minor_compat.get(cuda.release[0])
    floor = floor_row.floor.get(os_name) if floor_row else None
    own = rel.min_driver.get(os_name) if rel else None
    if floor is None and own is not None and floor_row is None:
        floor = own  # before CUDA 11 there is no minor-version compatibility
    return floor, own, rel


def driver_can_run(m: Matrix, driver: Version, cuda: Version, os_name: str) -> str | None:
    """'ok', 'minor' (runs under minor-version compatibility), 'no', or None when unknown."""
    floor, own, _ = driver_requirement(m, cuda, os_name)
    if floor is None and own is None:
        return None
    if own is not None and driver >= Version(own):
        # A driver that meets the release's own minimum runs it, even below its major's minor-version floor
        # (CUDA 11.0 shipped with 450.51.05 < the 11.x floor 450.80.02: footnote to Table 2 of the release notes).
        return "ok"
    if floor is not None and driver < Version(floor):
        return "no"
    if own is not None and driver < Version(own):
        return "minor"
    return "ok"


def _variant_commands(ctx: Ctx, want: Callable[[TorchVariant], bool], limit: int = 2) -> list[Fix]:
    """Concrete `pip install` fixes: variants of this torch release (newest CUDA first), else newer releases."""
    if ctx.torch is None:
        return []
    fixes: list[Fix] = []
    rel = ctx.torch.release
    ver = ctx.torch.version.public

    def cmd(r: TorchRelease, var: TorchVariant) -> Fix:
        url = var.index_url or f"https://download.pytorch.org/whl/{var.tag}"
        return Fix(
            f"Install the {var.tag} build of torch {r.raw}", f"pip install torch=={r.raw} --index-url {url}"
        )

    if rel is not None:
        cands = [v for v in rel.variants if v.is_cuda and want(v)]
        cands.sort(key=lambda v: Version(v.cuda or "0"), reverse=True)
        fixes.extend(cmd(rel, v) for v in cands[:limit])
    if not fixes:
        for r in sorted(ctx.m.torch, key=lambda r: r.version, reverse=True):
            if ctx.python_tag is not None and ctx.python_tag not in r.python:
                continue
            cands = [v for v in r.variants if v.is_cuda and want(v)]
            if cands:
                best = max(cands, key=lambda v: Version(v.cuda or "0"))
                fixes.append(cmd(r, best))
                break
    del ver
    return fixes


def arch_support(archs: tuple[Arch, ...], cc: CC) -> tuple[str, Arch | None]:
    """How `cc` runs code built for `archs`: ('sass', a), ('ptx', a) or ('none', None).

    SASS (sm_XY) runs on the same major with an equal or higher minor; sm_XYa only on exactly XY; on Tegra
    (and between Tegra and desktop GPUs) SASS runs only on exactly XY.
    PTX (compute_XY) is JIT-compiled by the driver for any GPU of compute capability >= X.Y.
    https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility
    """
    for a in archs:
        if a.kind != "sm":
            continue
        if a.cc == cc:
            return "sass", a
        if (
            a.suffix != "a"
            and a.cc.major == cc.major
            and a.cc.minor <= cc.minor
            and a.cc not in TEGRA_CCS
            and cc not in TEGRA_CCS
        ):
            return "sass", a
    ptx = [a for a in archs if a.kind == "compute" and a.suffix == "" and a.cc <= cc]
    if ptx:
        return "ptx", max(ptx, key=lambda a: a.cc)
    return "none", None


def _archs_text(archs: tuple[Arch, ...]) -> str:
    return ", ".join(str(a) for a in archs) if archs else "none"


# ------------------------------------------------------------------ checks


def _runs_under(ctx: Ctx, driver: Version, os_name: str) -> Callable[[TorchVariant], bool]:
    """A variant filter: this driver runs the variant's CUDA, at least under minor-version compatibility."""

    def ok(v: TorchVariant) -> bool:
        return driver_can_run(ctx.m, driver, Version(v.cuda or "0"), os_name) in ("ok", "minor")

    return ok


def check_driver_cuda(ctx: Ctx) -> Iterator[Result]:
    """1. NVIDIA driver vs the CUDA runtime each framework or application was built with."""
    rts = runtimes(ctx)
    if ctx.os == "macos":
        if rts:
            yield Skip(DRIVER_CUDA, "macOS has no NVIDIA CUDA driver")
        return
    if not rts:
        fws = [
            (w, fw.build)
            for w, fw in (
                (ctx.torch.label if ctx.torch else "", ctx.torch),
                (f"TensorFlow {ctx.tf.raw}" if ctx.tf else "", ctx.tf),
            )
            if fw is not None
        ]
        unknown = [w for w, b in fws if b in (None, "cuda")]
        if unknown:
            reason = f"the CUDA runtime of {' and '.join(unknown)} is not in the matrix (give --cuda)"
        elif fws:
            reason = (
                f"{' and '.join(w for w, _ in fws)}: not a CUDA build, no CUDA runtime to check (give --cuda)"
            )
        else:
            reason = "no CUDA runtime known (give --torch, --tensorflow or --cuda)"
        yield Skip(DRIVER_CUDA, reason)
        return
    if ctx.driver is None:
        dc = ctx.facts.get("driver_cuda")
        if dc is not None and dc.value:
            yield from _driver_cuda_only(ctx, rts, Version(dc.value), dc.raw or dc.value)
            return
        reason = ctx.facts.reason("driver") or "no NVIDIA driver version (give --driver)"
        yield Skip(DRIVER_CUDA, reason)
        return
    os_name = ctx.driver_os()
    for rt in rts:
        floor, own, rel = driver_requirement(ctx.m, rt.cuda, os_name)
        facts = {"driver": ctx.driver_raw, "cuda": rt.cuda_raw, "os": os_name}
        if floor is None and own is None:
            yield Skip(
                DRIVER_CUDA,
                f"the matrix has no {ctx.os_label()} driver requirement for CUDA {rt.cuda_raw} "
                f"({rt.who}; matrix updated {ctx.m.updated_for('cuda.yaml')})",
            )
            continue
        state = driver_can_run(ctx.m, ctx.driver, rt.cuda, os_name)
        need = own or floor
        drv_fix = Fix(f"Install NVIDIA driver ≥ {need} ({ctx.os_label()})")
        if state == "no":
            fixes = [drv_fix]
            if rt.who.startswith("torch"):
                # A variant this driver runs, at least under minor-version compatibility.
                fixes += _variant_commands(ctx, _runs_under(ctx, ctx.driver, os_name))
            major = rt.cuda.release[0]
            floor_txt = (
                f"; CUDA {major}.x needs at least {floor} even under minor-version compatibility"
                if ctx.m.minor_compat.get(major) and floor and (own is None or Version(floor) < Version(own))
                else ""
            )
            others = [o.who for o in rts if o is not rt]
            if bool(ctx.facts.probes) and others and rt.who == f"CUDA {rt.cuda_raw}":
                # Issue 18: a local toolkit nothing else runs on (the frameworks bring their own CUDA runtime) only
                # breaks what is built with it; a what-if check (--cuda, no live probes) keeps the error.
                yield Finding(
                    DRIVER_CUDA,
                    "warning",
                    f"Driver {_fmt_driver(ctx.driver_raw)} cannot run programs built with the local CUDA {rt.cuda_raw} toolkit",
                    f"The CUDA {rt.cuda_raw} toolkit ({rt.how}) needs driver ≥ {need}{floor_txt}; this driver is "
                    f"{ctx.driver_raw}. Nothing found here runs on it ({', '.join(others)} bring their own CUDA "
                    "runtime), but CUDA extensions, nvcc-built programs and JIT kernels built with it will fail at "
                    "launch with 'CUDA driver version is insufficient for CUDA runtime version'.",
                    (
                        drv_fix,
                        Fix("Or build with a toolkit this driver runs (point CUDA_HOME and PATH at it)"),
                    ),
                    facts,
                    group="driver",
                )
                continue
            yield Finding(
                DRIVER_CUDA,
                "error",
                f"Driver {_fmt_driver(ctx.driver_raw)} is too old for CUDA {rt.cuda_raw} ({rt.who})",
                f"{rt.who} uses the CUDA {rt.cuda_raw} runtime ({rt.how}). NVIDIA driver {ctx.driver_raw} on "
                f"{ctx.os_label()} cannot run it: {rel.name if rel else 'CUDA ' + rt.cuda_raw} needs driver ≥ {need}"
                f"{floor_txt}. Expect 'CUDA driver version is insufficient for CUDA runtime version' or "
                "'The NVIDIA driver on your system is too old'.",
                tuple(fixes),
                facts,
                group="driver",
            )
        elif state == "minor":
            yield Finding(
                DRIVER_CUDA,
                "warning",
                f"Driver {ctx.driver_raw} runs CUDA {rt.cuda_raw} ({rt.who}) only under minor-version compatibility",
                f"{rel.name if rel else 'CUDA ' + rt.cuda_raw} ships with driver ≥ {own}; driver {ctx.driver_raw} is above "
                f"the CUDA {rt.cuda.release[0]}.x floor ({floor}), so it runs with limits: PTX compiled by this "
                "toolkit cannot be JIT-compiled (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) and some newer APIs "
                "return cudaErrorCallRequiresNewerDriver.",
                (drv_fix,),
                facts,
                group="driver",
            )


def _driver_cuda_only(ctx: Ctx, rts: list[Runtime], driver_cuda: Version, raw: str) -> Iterator[Result]:
    """Only the driver's own CUDA version is known (nvidia-smi's "CUDA Version", a log's "found version 11040")."""
    for rt in rts:
        facts = {"driver_cuda": raw, "cuda": rt.cuda_raw}
        if rt.cuda.release[0] > driver_cuda.release[0]:
            floor_row = ctx.m.minor_compat.get(rt.cuda.release[0])
            floor = floor_row.floor.get(ctx.driver_os()) if floor_row else None
            yield Finding(
                DRIVER_CUDA,
                "error",
                f"The driver supports CUDA {raw}, too old for CUDA {rt.cuda_raw} ({rt.who})",
                f"{rt.who} uses the CUDA {rt.cuda_raw} runtime ({rt.how}); the installed driver supports CUDA {raw} at "
                f"most, and a CUDA {rt.cuda.release[0]}.x runtime needs a CUDA {rt.cuda.release[0]} driver"
                + (f" (≥ {floor})" if floor else "")
                + ".",
                (
                    Fix(
                        f"Install an NVIDIA driver for CUDA {rt.cuda.release[0]}.x"
                        + (f" (≥ {floor})" if floor else "")
                    ),
                ),
                facts,
                group="driver",
            )
        elif rt.cuda.release[:2] > driver_cuda.release[:2]:
            yield Finding(
                DRIVER_CUDA,
                "warning",
                f"The driver supports CUDA {raw}; CUDA {rt.cuda_raw} ({rt.who}) needs "
                "minor-version compatibility",
                f"{rt.who} uses CUDA {rt.cuda_raw}, newer than the driver's CUDA {raw}. It runs only under "
                "minor-version compatibility (no PTX JIT of newer code, some APIs unavailable). The driver version "
                "itself is unknown, so compat cannot say more.",
                (
                    Fix(
                        "Give the driver version for a precise answer",
                        "compat check --driver $(nvidia-smi "
                        "--query-gpu=driver_version --format=csv,noheader | head -1)",
                    ),
                ),
                facts,
                group="driver",
            )


def check_driver_gpu(ctx: Ctx) -> Iterator[Result]:
    """A driver branch newer than the last one that supports the GPU's architecture (Kepler after R470, …)."""
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    if ctx.driver is None or not ccs or ctx.os == "macos":
        return
    branch = ctx.driver.release[0]
    for g in ccs:
        assert g.cc is not None
        row = ctx.m.cc_row(g.cc)
        if row is None or row.last_driver is None or branch <= row.last_driver:
            continue
        newest = [
            r
            for r in ctx.m.cuda_releases
            if any(d is not None and Version(d).release[0] <= row.last_driver for d in r.min_driver.values())
        ]
        cuda_max = max(newest, key=lambda r: r.version).raw if newest else None
        yield Finding(
            DRIVER_GPU,
            "error",
            f"Driver {ctx.driver_raw} does not support {g.label} ({g.cc.sm})",
            f"NVIDIA's last driver branch for compute capability {g.cc} is R{row.last_driver}; driver "
            f"{ctx.driver_raw} (R{branch}) does not drive {g.label}, so nvidia-smi and every framework see no GPU "
            f"(source: {row.last_driver_source}).",
            (
                Fix(
                    f"Install the R{row.last_driver} driver branch"
                    + (f" (it runs CUDA up to {cuda_max})" if cuda_max else "")
                ),
                Fix("Or move to a GPU that current drivers support"),
            ),
            {"driver": ctx.driver_raw, "cc": str(g.cc)},
            group="driver",
        )


def check_toolkit_arch(ctx: Ctx) -> Iterator[Result]:
    """2. GPU compute capability vs what the CUDA toolkit's nvcc can compile for."""
    if ctx.cuda is None:
        yield Skip(TOOLKIT_ARCH, "no CUDA toolkit version (give --cuda)")
        return
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    if not ccs:
        yield Skip(TOOLKIT_ARCH, "no GPU compute capability known (give --gpu or --cc)")
        return
    for g in ccs:
        assert g.cc is not None
        ok = ctx.m.cuda_can_compile(ctx.cuda, g.cc)
        if ok is None:
            yield Skip(TOOLKIT_ARCH, f"compute capability {g.cc} is not in the matrix")
            continue
        if ok:
            continue
        row = ctx.m.cc_row(g.cc)
        assert row is not None
        if row.removed is not None and ctx.cuda >= row.removed:
            why = f"support for {g.cc.sm} was removed in CUDA {row.removed}"
            good = [
                r
                for r in ctx.m.cuda_releases
                if r.version < row.removed and (row.added is None or r.version >= row.added)
            ]
        else:
            why = f"{g.cc.sm} needs CUDA ≥ {row.added}"
            good = [r for r in ctx.m.cuda_releases if row.added is not None and r.version >= row.added]
        target = max(good, key=lambda r: r.version) if good else None
        fixes = (Fix(f"Use CUDA toolkit {target.raw} (the newest that targets {g.cc.sm})"),) if target else ()
        yield Finding(
            TOOLKIT_ARCH,
            "error",
            f"CUDA {ctx.cuda} cannot compile for {g.label} ({g.cc.sm})",
            f"nvcc from CUDA {ctx.cuda} cannot generate code for compute capability {g.cc}: {why}. Building CUDA "
            "extensions (pip install of packages with CUDA code, TORCH_CUDA_ARCH_LIST) fails with "
            f"\"nvcc fatal : Unsupported gpu architecture 'compute_{g.cc.major}{g.cc.minor}'\".",
            fixes,
            {"cuda": str(ctx.cuda), "cc": str(g.cc)},
            group="cuda",
        )


def _wheel_arch_one(
    ctx: Ctx,
    who: str,
    cuda: str | None,
    archs: tuple[Arch, ...],
    g: GpuInfo,
    fix_pool: Callable[[CC], list[Fix]],
) -> Iterator[Result]:
    assert g.cc is not None
    how, arch = arch_support(archs, g.cc)
    facts = {
        "cc": str(g.cc),
        "archs": [str(a) for a in archs],
        ("torch" if who.startswith("torch") else "tensorflow"): who.split(" ", 1)[1].split(" ")[0],
    }
    if how == "sass":
        return
    if how == "ptx":
        assert arch is not None
        if ctx.driver is not None and cuda is not None:
            state = driver_can_run(ctx.m, ctx.driver, Version(cuda), ctx.driver_os())
            # "no": driver.cuda already reports this driver as too old for the runtime (one cause, one error);
            # with the driver it asks for, the PTX JIT below works.
            if state == "minor":
                yield Finding(
                    WHEEL_ARCH,
                    "error",
                    f"{who} has no kernels for {g.label} ({g.cc.sm}) and the driver cannot JIT its PTX",
                    f"{who} ships SASS for {_archs_text(archs)}; {g.label} (compute capability {g.cc}) can only run "
                    f"its {arch} PTX, which the driver must JIT-compile. PTX from CUDA {cuda} needs a driver at "
                    f"least as new as that toolkit's; driver {ctx.driver_raw} is older, so kernels fail with "
                    "'the provided PTX was compiled with an unsupported toolchain'.",
                    tuple(fix_pool(g.cc)),
                    facts,
                    group="frameworks",
                )
                return
        yield Finding(
            WHEEL_ARCH,
            "warning",
            f"{who} runs on {g.label} ({g.cc.sm}) only through PTX JIT compilation",
            f"{who} ships SASS for {_archs_text(archs)}; none runs on compute capability {g.cc}, so the driver "
            f"JIT-compiles its {arch} PTX at start-up (slow first run, cached in ~/.nv/ComputeCache; kernels may be "
            "slower than native ones).",
            tuple(fix_pool(g.cc)),
            facts,
            group="frameworks",
        )
        return
    lowest = min((a.cc for a in archs if a.kind == "sm"), default=None)
    too_old = lowest is not None and g.cc < lowest
    msg = (
        f"{who} was compiled for {_archs_text(archs)}. {g.label} has compute capability {g.cc}: "
        + (
            "older than every architecture in this build"
            if too_old
            else "no SASS in the build runs on it and there is no PTX that could be JIT-compiled for it"
        )
        + ". Every CUDA kernel fails with 'CUDA error: no kernel image is available for execution on the device'"
        + (
            f" (PyTorch warns: '{g.label} with CUDA capability {g.cc.sm} is not compatible with the current "
            "PyTorch installation')"
            if who.startswith("torch")
            else ""
        )
        + "."
    )
    yield Finding(
        WHEEL_ARCH,
        "error",
        f"{who} has no kernels for {g.label} ({g.cc.sm})",
        msg,
        tuple(fix_pool(g.cc)),
        facts,
        group="frameworks",
    )


def check_wheel_arch(ctx: Ctx) -> Iterator[Result]:
    """3. GPU compute capability vs the architectures compiled into a framework build."""
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]
    frameworks = []
    if ctx.torch is not None and ctx.torch.build not in ("cpu", "rocm", "xpu"):
        frameworks.append("torch")
    if ctx.tf is not None and ctx.tf.build != "cpu":
        frameworks.append("tf")
    if not frameworks:
        yield Skip(WHEEL_ARCH, "no CUDA framework build known (give --torch or --tensorflow)")
        return
    if not ccs:
        yield Skip(WHEEL_ARCH, "no GPU compute capability known (give --gpu or --cc)")
        return
    if "torch" in frameworks:
        t = ctx.torch
        assert t is not None
        if t.archs is None:
            yield Skip(WHEEL_ARCH, f"the compiled architectures of {t.label} are not in the matrix")
        else:
            archs = t.archs

            def torch_fixes(cc: CC) -> list[Fix]:
                return _variant_commands(
                    ctx,
                    lambda v: (
                        v.archs is not None
                        and arch_support(v.archs, cc)[0] == "sass"
                        and (
                            ctx.driver is None
                            or driver_can_run(ctx.m, ctx.driver, Version(v.cuda or "0"), ctx.driver_os())
                            == "ok"
                        )
                    ),
                )

            for g in ccs:
                yield from _wheel_arch_one(ctx, t.label, t.cuda, archs, g, torch_fixes)
    if "tf" in frameworks:
        tf = ctx.tf
        assert tf is not None
        if tf.archs is None:
            yield Skip(
                WHEEL_ARCH,
                f"the compiled architectures of TensorFlow {tf.raw} are not published in the matrix",
            )
        else:
            for g in ccs:
                yield from _wheel_arch_one(ctx, f"TensorFlow {tf.raw}", tf.cuda, tf.archs, g, lambda cc: [])


def check_python(ctx: Ctx) -> Iterator[Result]:
    """4. Framework release vs Python version."""
    pairs: list[tuple[str, str, tuple[str, ...], str, list[Version]]] = []
    py = ctx.python_tag
    if ctx.torch is not None and ctx.torch.release is not None:
        pairs.append(
            (
                "PyTorch",
                ctx.torch.raw,
                ctx.torch.release.python,
                "torch",
                [r.version for r in ctx.m.torch if py and py in r.python],
            )
        )
    if ctx.tf is not None and ctx.tf.release is not None:
        pairs.append(
            (
                "TensorFlow",
                ctx.tf.raw,
                ctx.tf.release.python,
                "tensorflow",
                [r.version for r in ctx.m.tensorflow if py and py in r.python],
            )
        )
    if not pairs:
        yield Skip(PYTHON_FRAMEWORK, "no known framework release given (--torch, --tensorflow)")
        return
    if py is None:
        yield Skip(PYTHON_FRAMEWORK, ctx.facts.reason("python") or "no Python version (give --python)")
        return
    for name, raw, supported, pkg, ok_versions in pairs:
        if py in supported:
            continue
        fixes = []
        if ok_versions:
            best = max(ok_versions)
            fixes.append(
                Fix(
                    f"Use {name} {best}, the newest release with Python {py} wheels",
                    f"pip install {pkg}=={best}",
                )
            )
        fixes.append(Fix(f"Use a Python {name} {raw} has wheels for: {', '.join(supported)}"))
        yield Finding(
            PYTHON_FRAMEWORK,
            "error",
            f"{name} {raw} has no wheels for Python {py}",
            f"{name} {raw} publishes wheels for Python {', '.join(supported)}; pip on Python {py} fails with "
            f"'No matching distribution found for {pkg}=={Version(raw).public}'.",
            tuple(fixes),
            {"python": py, pkg: raw},
            group="frameworks",
        )


def check_torch_variant(ctx: Ctx) -> Iterator[Result]:
    """6. A PyTorch version → the wheel variant it means, its CUDA runtime and bundled cuDNN."""
    t = ctx.torch
    if t is None:
        yield Skip(TORCH_VARIANT, "no PyTorch version given (--torch)")
        return
    if t.release is None:
        if ctx.facts.get("torch_cuda") is None:
            yield Skip(TORCH_VARIANT, f"torch {t.raw} is not in the matrix")
        return
    if ctx.os == "macos" and t.tag and t.tag.startswith("cu"):
        yield Finding(
            TORCH_VARIANT,
            "error",
            f"torch {t.raw}: there are no CUDA wheels for macOS",
            f"PyTorch publishes only CPU/MPS wheels for macOS; a '+{t.tag}' build cannot be installed there.",
            (Fix("Install the macOS wheel (CPU and Apple MPS)", f"pip install torch=={t.release.raw}"),),
            {"torch": t.raw, "os": "macos"},
            group="frameworks",
        )
        return
    if t.variant is None:
        tags = ", ".join(v.tag for v in t.release.variants) or "none known"
        if t.version.local and t.tag and _tag_build(t.tag) not in ("cuda", "cpu"):
            # The matrix lists CUDA and CPU wheels only; ROCm/XPU wheels and local builds are not "missing".
            what = (
                "PyTorch's ROCm and XPU wheels are not in the matrix"
                if _tag_build(t.tag)
                else f"'+{t.version.local}' is not a PyTorch wheel label (a local or vendor build)"
            )
            yield Skip(TORCH_VARIANT, f"torch {t.raw}: {what}")
        elif t.version.local:
            yield Finding(
                TORCH_VARIANT,
                "error",
                f"torch {t.release.raw} has no {t.tag} build",
                f"PyTorch publishes torch {t.release.raw} as: {tags}. There is no '+{t.tag}' wheel, so "
                f"'pip install torch=={t.raw}' fails (or an index URL for {t.tag} is silently ignored).",
                tuple(_variant_commands(ctx, lambda v: True)),
                {"torch": t.raw},
                group="frameworks",
            )
        return
    if t.version.local is None and t.build != "cpu":
        where = {"windows": "Windows", "macos": "macOS"}.get(ctx.os or "linux", "Linux x86_64")
        yield Finding(
            TORCH_VARIANT,
            "info",
            f"torch {t.raw} from PyPI is the {t.tag} build",
            f"'pip install torch=={t.raw}' on {where} installs the {t.tag} build: CUDA {t.cuda or 'none'}, "
            f"cuDNN {t.cudnn or 'unknown'}, compiled for {_archs_text(t.archs) if t.archs is not None else 'unknown architectures'}.",
            (),
            {"torch": t.raw, "variant": t.tag},
            group="frameworks",
        )


def check_cpu_build(ctx: Ctx) -> Iterator[Result]:
    """8. A CPU-only framework build where a GPU is present or required."""
    builds = []
    kind = {"cpu": "CPU-only", "rocm": "ROCm (AMD GPU)", "xpu": "XPU (Intel GPU)"}
    if ctx.torch is not None and ctx.torch.build in kind:
        how = (
            f"the '+{ctx.torch.version.local}' label"
            if ctx.torch.version.local
            else f"PyPI's default torch wheel for {ctx.os_label()} is CPU-only"
            if ctx.os in ("windows", "macos")
            else "its build reports no CUDA"
        )
        builds.append(("PyTorch", ctx.torch.label, how, kind[ctx.torch.build]))
    if ctx.tf is not None and ctx.tf.build == "cpu":
        builds.append(("TensorFlow", f"TensorFlow {ctx.tf.raw}", "its build reports no CUDA", "CPU-only"))
    if not builds:
        if ctx.torch is None and ctx.tf is None:
            yield Skip(CPU_BUILD, "no framework given (--torch, --tensorflow)")
        return
    want = ctx.require_gpu or ctx.gpu_present
    if not want:
        if ctx.gpu_present is None:
            yield Skip(CPU_BUILD, "unknown whether this machine has a GPU (give --gpu or --cc)")
        return
    for name, label, how, what in builds:
        fixes: list[Fix] = []
        if name == "PyTorch" and ctx.torch is not None and ctx.os != "macos":
            fixes = _variant_commands(
                ctx,
                lambda v: (
                    ctx.driver is None
                    or driver_can_run(ctx.m, ctx.driver, Version(v.cuda or "0"), ctx.driver_os()) == "ok"
                ),
            )
        if name == "TensorFlow":
            fixes = [
                Fix(
                    "Install the CUDA build of TensorFlow",
                    f"pip install 'tensorflow[and-cuda]=={ctx.tf.raw}'",
                )
            ]  # type: ignore[union-attr]
        yield Finding(
            CPU_BUILD,
            "error" if (ctx.require_gpu or ctx.gpu_present) else "warning",
            f"{label} is a {what} build but a GPU is {'required' if ctx.require_gpu else 'present'}",
            f"{label} cannot use the NVIDIA GPU ({how}): torch.cuda.is_available() / "
            "tf.config.list_physical_devices('GPU') report nothing and training silently runs on the CPU.",
            tuple(fixes),
            {"framework": label},
            group="frameworks",
        )


def _tf_windows(ctx: Ctx) -> Iterator[Result]:
    tf = ctx.tf
    assert tf is not None
    if ctx.os is None:
        yield Skip(TF_WINDOWS, "operating system unknown (give --os)")
        return
    if ctx.os != "windows":
        return
    if tf.release is None:
        # "TensorFlow 2.10 was the last TensorFlow release that supported GPU on native-Windows":
        # https://www.tensorflow.org/install/pip#windows-native. A release newer than the matrix has none either.
        if Version(tf.version.public) < Version("2.11"):
            yield Skip(TF_WINDOWS, f"TensorFlow {tf.raw} is not in the matrix")
            return
    elif tf.release.windows_gpu is None or tf.release.windows_gpu:
        return
    sev = "error" if (ctx.require_gpu or ctx.gpu_present) else "info"
    yield Finding(
        TF_WINDOWS,
        sev,
        f"TensorFlow {tf.raw} has no GPU support on native Windows",
        "TensorFlow 2.10 was the last release that supported the GPU on native Windows; "
        f"TensorFlow {tf.raw} there runs on the CPU only.",
        (
            Fix(
                "Run TensorFlow in WSL2, where the Linux GPU build works",
                "pip install 'tensorflow[and-cuda]'",
            ),
            Fix("Or stay on the last native-Windows GPU release", "pip install 'tensorflow<2.11'"),
        ),
        {"tensorflow": tf.raw, "os": "windows"},
        group="frameworks",
    )


def check_tensorflow(ctx: Ctx) -> Iterator[Result]:
    """5. TensorFlow vs CUDA and cuDNN (its tested build configuration), and native-Windows GPU."""
    tf = ctx.tf
    if tf is None:
        yield Skip(TF_CUDA, "no TensorFlow version given (--tensorflow)")
        yield Skip(TF_CUDNN, "no TensorFlow version given (--tensorflow)")
        return
    yield from _tf_windows(ctx)
    if tf.build == "cpu":  # a CPU-only build loads no CUDA library: the system CUDA/cuDNN do not matter to it
        yield Skip(TF_CUDA, f"TensorFlow {tf.raw} is a CPU-only build")
        yield Skip(TF_CUDNN, f"TensorFlow {tf.raw} is a CPU-only build")
        return
    if tf.cuda is None:
        yield Skip(TF_CUDA, f"the CUDA version TensorFlow {tf.raw} was built with is not in the matrix")
    elif ctx.cuda is None:
        yield Skip(TF_CUDA, "no system CUDA version (give --cuda)")
    else:
        built = Version(tf.cuda)
        fix = Fix(
            f"Use CUDA {tf.cuda}, or install the pip CUDA libraries TensorFlow pins",
            f"pip install 'tensorflow[and-cuda]=={tf.raw}'" if tf.release and tf.release.and_cuda else None,
        )
        if built.release[0] != ctx.cuda.release[0]:
            yield Finding(
                TF_CUDA,
                "error",
                f"TensorFlow {tf.raw} needs CUDA {built.release[0]}.x, found CUDA {ctx.cuda}",
                f"TensorFlow {tf.raw} was built and tested with CUDA {tf.cuda}; it loads the CUDA {built.release[0]} "
                f"libraries by soname, so CUDA {ctx.cuda} is not found ('Could not load dynamic library "
                f"libcudart.so.{built.release[0]}…') and TensorFlow falls back to the CPU.",
                (fix,),
                {"tensorflow": tf.raw, "cuda": str(ctx.cuda)},
                group="frameworks",
            )
        elif ctx.cuda.release[:2] < built.release[:2]:
            yield Finding(
                TF_CUDA,
                "warning",
                f"CUDA {ctx.cuda} is older than the CUDA {tf.cuda} TensorFlow {tf.raw} was built with",
                f"TensorFlow {tf.raw}'s tested configuration is CUDA {tf.cuda}; an older minor release may lack "
                "symbols or kernels it uses (PTX JIT errors, missing cuBLAS functions).",
                (fix,),
                {"tensorflow": tf.raw, "cuda": str(ctx.cuda)},
                group="frameworks",
            )
    if tf.cudnn is None:
        yield Skip(TF_CUDNN, f"the cuDNN version TensorFlow {tf.raw} was built with is not in the matrix")
    elif ctx.cudnn is None:
        yield Skip(TF_CUDNN, "no system cuDNN version (give --cudnn)")
    else:
        built = Version(tf.cudnn)
        run = ctx.cudnn
        if built.release[0] != run.release[0] or run.release[:2] < built.release[:2]:
            yield Finding(
                TF_CUDNN,
                "error",
                f"cuDNN {run} cannot serve TensorFlow {tf.raw} (built with cuDNN {tf.cudnn})",
                f"TensorFlow {tf.raw} was built with cuDNN {tf.cudnn}. The runtime cuDNN must have the same major "
                "version and an equal or newer minor: 'Loaded runtime CuDNN library: "
                f"{run} but source was compiled with: {tf.cudnn}. CuDNN library needs to have matching major "
                "version and equal or higher minor version.'",
                (
                    Fix(
                        f"Install cuDNN {built.release[0]}.x ≥ {major_minor(built)}",
                        f"pip install 'tensorflow[and-cuda]=={tf.raw}'"
                        if tf.release and tf.release.and_cuda
                        else None,
                    ),
                ),
                {"tensorflow": tf.raw, "cudnn": str(run)},
                group="frameworks",
            )


def _best_package(
    pkgs: list[CudnnPackage], cuda: Version, fits: Callable[[CudnnPackage], bool] | None = None
) -> CudnnPackage:
    """The package whose CUDA range holds `cuda` (one that `fits` this machine, else the most specific one), else
    the nearest below it. cuDNN 9.10.2 lists two CUDA 12.x rows that both hold 12.8: CUDA 12.8-12.9 with driver
    >= 570.26 up to SM 12.0, and CUDA 12.0-12.9 with driver >= 525.60.13 up to SM 9.0; a machine that meets either
    row is supported (https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html)."""
    mm = cuda.release[:2]

    def lo(p: CudnnPackage) -> tuple[int, ...]:
        return tuple(p.cuda_min.release[:2]) if p.cuda_min else (0,)

    def hi(p: CudnnPackage) -> tuple[int, ...]:
        return tuple(p.cuda_max.release[:2]) if p.cuda_max else (999,)

    inside = [p for p in pkgs if lo(p) <= mm <= hi(p)]
    if inside:
        good = [p for p in inside if fits(p)] if fits is not None else []
        return max(good or inside, key=lo)
    below = [p for p in pkgs if lo(p) <= mm]
    return max(below, key=hi) if below else min(pkgs, key=lo)


def check_cudnn(ctx: Ctx) -> Iterator[Result]:
    """7. cuDNN release vs CUDA version, driver and GPU architecture."""
    if ctx.cudnn is None:
        yield Skip(CUDNN_CUDA, "no cuDNN version given (--cudnn)")
        return
    rel = ctx.m.cudnn_release(ctx.cudnn)
    if rel is None:
        for check_id in (CUDNN_CUDA, CUDNN_ARCH, CUDNN_DRIVER):
            yield Skip(check_id, f"cuDNN {ctx.cudnn} is not in the matrix")
        return
    pkgs = list(rel.packages)
    pkg = None
    ccs = [g for g in (ctx.gpus or []) if g.cc is not None]

    def fits(p: CudnnPackage) -> bool:
        need = p.min_driver.get(ctx.driver_os())
        return all(
            (p.cc_min is None or c >= p.cc_min) and (p.cc_max is None or c <= p.cc_max)
            for c in (g.cc for g in ccs)
            if c is not None
        ) and (ctx.driver is None or need is None or ctx.driver >= Version(need))

    if ctx.cuda is None:
        yield Skip(CUDNN_CUDA, "no CUDA version given (--cuda)")
        if len(pkgs) == 1:
            pkg = pkgs[0]
        else:
            flavours = ", ".join(sorted({f"CUDA {p.cuda_major}.x" for p in pkgs}))
            for check_id in (CUDNN_ARCH, CUDNN_DRIVER):
                yield Skip(
                    check_id,
                    f"cuDNN {rel.raw} has several packages ({flavours}); which one is unknown (give --cuda)",
                )
    else:
        major = ctx.cuda.release[0]
        match = [p for p in pkgs if p.cuda_major == major]
        if not match:
            for check_id in (CUDNN_ARCH, CUDNN_DRIVER):
                yield Skip(check_id, f"cuDNN {rel.raw} has no build for CUDA {major}.x (see {CUDNN_CUDA})")
            majors = ", ".join(f"CUDA {p.cuda_major}.x" for p in pkgs)
            yield Finding(
                CUDNN_CUDA,
                "error",
                f"cuDNN {rel.raw} has no build for CUDA {major}.x",
                f"cuDNN {rel.raw} is published for {majors}; with CUDA {ctx.cuda} it fails to load "
                "(missing libcudart/libcublasLt of the expected major).",
                (Fix(f"Install a cuDNN built for CUDA {major}.x"),),
                {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                group="cuda",
            )
        else:
            pkg = _best_package(match, ctx.cuda, fits)
            if pkg.cuda_min is not None and ctx.cuda < pkg.cuda_min:
                yield Finding(
                    CUDNN_CUDA,
                    "error",
                    f"cuDNN {rel.raw} needs CUDA ≥ {pkg.cuda_min}, found {ctx.cuda}",
                    f"The cuDNN support matrix lists cuDNN {rel.raw} for CUDA {pkg.cuda_min}–{pkg.cuda_max or '?'}.",
                    (Fix(f"Upgrade CUDA to ≥ {pkg.cuda_min} or use an older cuDNN"),),
                    {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                    group="cuda",
                )
            elif pkg.cuda_max is not None and ctx.cuda.release[:2] > pkg.cuda_max.release[:2]:
                yield Finding(
                    CUDNN_CUDA,
                    "warning",
                    f"cuDNN {rel.raw} is not listed for CUDA {ctx.cuda}",
                    f"The cuDNN support matrix lists cuDNN {rel.raw} for CUDA {pkg.cuda_min or '?'}–{pkg.cuda_max}; "
                    f"CUDA {ctx.cuda} is newer. It usually works under CUDA's minor-version compatibility but is "
                    "untested by NVIDIA.",
                    (Fix(f"Use a cuDNN release that lists CUDA {major_minor(ctx.cuda)}"),),
                    {"cudnn": rel.raw, "cuda": str(ctx.cuda)},
                    group="cuda",
                )
    if pkg is None:
        return
    if not ccs:
        yield Skip(CUDNN_ARCH, "no GPU compute capability known (give --gpu or --cc)")
    elif pkg.cc_min is None and pkg.cc_max is None:
        yield Skip(
            CUDNN_ARCH,
            f"the matrix has no compute capability range for cuDNN {rel.raw} "
            f"(CUDA {pkg.cuda_major}.x; matrix updated {ctx.m.updated_for('cudnn.yaml')})",
        )
    for g in ccs:
        assert g.cc is not None
        if pkg.cc_min is not None and g.cc < pkg.cc_min:
            yield Finding(
                CUDNN_ARCH,
                "error",
                f"cuDNN {rel.raw} does not support {g.label} ({g.cc.sm})",
                f"cuDNN {rel.raw} for CUDA {pkg.cuda_major}.x supports compute capability {pkg.cc_min} and newer; "
                f"{g.label} is {g.cc}. Convolutions fail with CUDNN_STATUS_ARCH_MISMATCH.",
                (Fix("Use an older cuDNN that still supports this GPU"),),
                {"cudnn": rel.raw, "cc": str(g.cc)},
                group="cuda",
            )
        elif pkg.cc_max is not None and g.cc > pkg.cc_max:
            yield Finding(
                CUDNN_ARCH,
                "warning",
                f"cuDNN {rel.raw} predates {g.label} ({g.cc.sm})",
                f"cuDNN {rel.raw} for CUDA {pkg.cuda_major}.x lists compute capability up to {pkg.cc_max}; "
                f"{g.label} is {g.cc}. Expect CUDNN_STATUS_ARCH_MISMATCH or slow fallback kernels.",
                (Fix("Upgrade cuDNN to a release that lists this GPU"),),
                {"cudnn": rel.raw, "cc": str(g.cc)},
                group="cuda",
            )
    if ctx.driver is None:
        yield Skip(CUDNN_DRIVER, ctx.facts.reason("driver") or "no NVIDIA driver version (give --driver)")
    elif ctx.os == "macos":
        yield Skip(CUDNN_DRIVER, "macOS has no NVIDIA CUDA driver")
    else:
        need = pkg.min_driver.get(ctx.driver_os())
        if need is None:
            yield Skip(
                CUDNN_DRIVER,
                f"the matrix has no {ctx.os_label()} driver requirement for cuDNN {rel.raw} "
                f"(CUDA {pkg.cuda_major}.x; matrix updated {ctx.m.updated_for('cudnn.yaml')})",
            )
        elif ctx.driver < Version(need):
            yield Finding(
                CUDNN_DRIVER,
                "error",
                f"cuDNN {rel.raw} needs driver ≥ {need}, found {ctx.driver_raw}",
                f"The cuDNN support matrix lists driver ≥ {need} on {ctx.os_label()} for cuDNN {rel.raw} "
                f"(CUDA {pkg.cuda_major}.x).",
                (Fix(f"Install NVIDIA driver ≥ {need}"),),
                {"cudnn": rel.raw, "driver": ctx.driver_raw},
                group="driver",
            )


def check_required_gpu(ctx: Ctx) -> Iterator[Result]:
    if not ctx.require_gpu:
        return
    if ctx.gpus is None:
        if not ctx.facts.probes:  # with probe data the doctor's own checks say why no GPU could be listed
            yield Skip(GPU_REQUIRED, "unknown whether this machine has a GPU (give --gpu or --cc)")
    elif not ctx.gpus:
        reason = ctx.facts.gpus_source or "no GPU found"
        yield Finding(
            GPU_REQUIRED,
            "error",
            "No NVIDIA GPU, but one is required",
            f"A GPU was required (--require-gpu) and none is visible ({reason}).",
            (Fix("Run `compat doctor` on the machine to see why no GPU is visible", "compat doctor"),),
            group="driver",
        )


def _same_facts(when: Mapping[str, SpecifierSet], facts: Mapping[str, object]) -> bool:
    """Whether a finding rests on facts that satisfy every condition of a known issue (the same GPU, the same
    versions): an error about one GPU must not hide a known issue of another GPU in the same machine."""
    for k, spec in when.items():
        raw = facts.get(k)
        if not isinstance(raw, str):
            return False
        try:
            v = Version(Version(raw).public)
        except InvalidVersion:
            return False
        if v not in spec:
            return False
    return True


def check_known_issues(ctx: Ctx, prior: list[Finding] | None = None) -> Iterator[Result]:
    prior = prior or []
    values: dict[str, Version] = {}
    if ctx.torch is not None:
        values["torch"] = Version(ctx.torch.version.public)
    if ctx.tf is not None:
        values["tensorflow"] = Version(ctx.tf.version.public)
    for name in ("cuda", "cudnn", "driver"):
        v = getattr(ctx, name)
        if v is not None:
            values[name] = v
    if ctx.python is not None:
        values["python"] = ctx.python
    ccs = [g.cc for g in (ctx.gpus or []) if g.cc is not None]
    for issue in ctx.m.known_issues:
        if any(k not in values and k != "cc" and k != "os" for k in issue.when):
            continue
        if any(
            (ctx.facts.get(flag) is None or ctx.facts.get(flag).value != "true") for flag in issue.requires
        ):  # type: ignore[union-attr]
            continue
        if "os" in issue.when:
            continue  # os is not a version; such rows are matched by the dockerfile/doctor layers
        if "cc" in issue.when and not any(Version(str(c)) in issue.when["cc"] for c in ccs):
            continue
        if all(values[k] in spec for k, spec in issue.when.items() if k != "cc"):
            if any(
                f.severity == "error" and _same_facts(issue.when, f.facts) for f in ctx.notes + list(prior)
            ):
                continue  # a core check already named this root cause: one cause, one error
            fixes = (Fix(issue.fix_text or "See the evidence", issue.fix_command),) if issue.fix_text else ()
            yield Finding(
                f"{KNOWN_ISSUE}.{issue.id}",
                issue.severity,
                issue.title,
                f"{issue.message} (evidence: {issue.source})",
                fixes,
                {k: str(values[k]) for k in issue.when if k in values},
                group="frameworks",
            )


CHECKS: tuple[Callable[[Ctx], Iterator[Result]], ...] = (
    check_required_gpu,
    check_driver_gpu,
    check_torch_variant,
    check_driver_cuda,
    check_wheel_arch,
    check_toolkit_arch,
    check_python,
    check_tensorflow,
    check_cudnn,
    check_cpu_build,
    check_known_issues,
)


def resolve(
    facts: Facts,
    matrix: Matrix,
    *,
    require_gpu: bool = False,
    extra_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = (),
) -> Report:
    """Evaluate every check on `facts`; findings, skips (with reasons) and the facts used."""
    ctx = build_context(facts, matrix, require_gpu)
    findings: list[Finding] = list(ctx.notes)
    skipped: list[Skip] = []
    for check in CHECKS + extra_checks:
        results = check_known_issues(ctx, findings) if check is check_known_issues else check(ctx)
        for r in results:
            (skipped if isinstance(r, Skip) else findings).append(r)  # type: ignore[arg-type]
    skipped = unique(skipped, lambda s: (s.id, s.reason))
    findings = unique(findings, lambda f: (f.id, f.title))
    return Report(findings, skipped, facts.to_json(), matrix.updated_date)
