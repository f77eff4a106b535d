"""A stage's facts for the resolver and the checks only a Dockerfile can fail."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from packaging.version import Version

from compat.checks.context import full_name
from compat.checks.first_driver import given_driver
from compat.checks.rules import arch_support, driver_can_run, driver_requirement
from compat.dockerfile.model import (
    ARCH_LIST,
    CPU_BASE,
    CPU_WHEEL,
    CUDNN,
    NAMED_ARCHES,
    NO_NVCC,
    NVCC_TORCH,
    PIP_CUDA_COST,
    REQUIRE_CUDA,
    SECOND_CUDA,
    Options,
    Stage,
)
from compat.dockerfile.parser import (
    UNSET,
)
from compat.errors import InputError
from compat.facts import Fact, Facts, Gpu, make_fact
from compat.findings import Finding, Fix, Skip
from compat.installcmd import tf_and_cuda, torch_for_cuda
from compat.matrix import Matrix
from compat.versions import CC, Arch, major_minor, parse_cc


def stage_facts(st: Stage, opts: Options, m: Matrix | None = None) -> tuple[Facts, dict[str, int]]:
    """The stage's facts for the resolver, and the Dockerfile line of each."""
    vals: dict[str, Fact] = {}
    lines: dict[str, int] = {}

    def put(name: str, raw: str | None, line: int) -> None:
        if raw is None:
            return
        try:
            vals[name] = make_fact(name, raw, f"Dockerfile:{line}")
        except InputError:
            return
        lines[name] = line

    put("os", "linux", st.line)
    if st.python:
        put("python", st.python.value, st.python.line)
    if st.cuda:
        put("cuda", st.cuda.value, st.cuda.line)
    if st.cudnn and st.cudnn.value:
        put("cudnn", st.cudnn.value, st.cudnn.line)
    if st.torch is not None and st.torch.raw:
        put("torch", st.torch.raw, st.torch.line)
        if st.torch.from_base and st.torch.cuda:
            put("torch_cuda", ".".join(st.torch.cuda.split(".")[:2]), st.torch.line)
        if st.torch.build:
            put("torch_build", st.torch.build, st.torch.line)
        if st.torch.install is not None and st.torch.install.tool == "conda" and st.torch.cuda:
            put("torch_cuda", st.torch.cuda, st.torch.line)
    if st.tf is not None and st.tf.raw:
        put("tensorflow", st.tf.raw, st.tf.line)
        if st.tf.cpu:
            put("tf_build", "cpu", st.tf.line)
        put("tf_and_cuda", "true" if st.tf.and_cuda else "false", st.tf.line)
    jv = st.jax_view
    if jv is not None:
        put("jax", jv.raw, jv.line)
        if jv.jaxlib:
            put("jaxlib", jv.jaxlib, jv.line)
    if opts.target_driver:
        vals["driver"] = make_fact("driver", opts.target_driver, "--target-driver")
    facts = Facts(values=vals)
    if opts.target_gpu or opts.target_cc:
        cc = str(parse_cc(opts.target_cc)) if opts.target_cc else None
        src = "--target-gpu" if opts.target_gpu else "--target-cc"
        details: dict[str, str] = {}
        row = m.gpu(opts.target_gpu) if m is not None and opts.target_gpu and cc is None else None
        if row is not None:  # the facts line shows the compute capability the matrix gives for --target-gpu
            cc, details = str(row.cc), {"cc_source": "matrix"}
        facts = facts.with_gpus((Gpu(opts.target_gpu, cc, src, 0, details),), src)
    return facts, lines


# ------------------------------------------------------------------ Dockerfile checks


def _f(
    id_: str,
    sev: str,
    title: str,
    msg: str,
    line: int,
    fixes: tuple[Fix, ...] = (),
    facts: Mapping[str, Any] | None = None,
) -> Finding:
    return Finding(id_, sev, title, msg, fixes, dict(facts or {}), group="dockerfile", line=line)


def check_stage(st: Stage, m: Matrix, opts: Options) -> Iterator[Finding | Skip]:
    yield from _check_cuda_stacks(st, m)
    yield from _check_cudnn(st, m)
    yield from _check_cpu_wheel(st, m)
    yield from _check_cpu_base(st, m)
    yield from _check_arch_list(st, m, opts)
    yield from _check_require_cuda(st, m, opts)
    yield from _check_no_nvcc(st)
    from compat.dockerfile.rules import check_rules

    yield from check_rules(st, m, opts)


def _check_no_nvcc(st: Stage) -> Iterator[Finding | Skip]:
    if (
        not st.extension_builds
        or st.stack.kind not in ("cuda", "pytorch")
        or (st.cuda is None and st.stack.kind == "cuda")
    ):
        return
    if st.stack.nvcc or st.stack.flavour == "devel":
        return
    line, what = st.extension_builds[0]
    yield _f(
        NO_NVCC,
        "warning",
        f"line {line} builds CUDA code, but the {st.stack.flavour or 'base'} image has no nvcc",
        f"{what} compiles CUDA extensions (unless a prebuilt wheel matches exactly); {st.base} is a "
        f"{st.stack.flavour} image without the CUDA compiler, so the build fails with 'nvcc: not found' / "
        "'CUDA_HOME environment variable is not set'.",
        line=line,
        fixes=(Fix("Build in a -devel stage and copy the result into the runtime stage"),),
        facts={"image": st.base, "stage": st.label},
    )


def _system_cuda_kind(st: Stage) -> str:
    if st.cuda is None:
        return "none"
    return st.stack.flavour or ("devel" if st.stack.nvcc else "runtime")


def _check_cuda_stacks(st: Stage, m: Matrix) -> Iterator[Finding | Skip]:
    t = st.torch
    if t is None or t.from_base or t.build != "cuda" or not t.cuda:
        return
    if st.cuda is None:
        return
    base = Version(st.cuda.value)
    tcu = Version(t.cuda)
    flavour = _system_cuda_kind(st)
    label = t.raw or "torch"
    if flavour == "devel" or st.stack.nvcc:
        if base.release[0] != tcu.release[0]:
            builds = st.extension_builds
            sev = "error" if builds else "warning"
            what = (
                f"line {builds[0][0]} builds CUDA extensions ({builds[0][1]})"
                if builds
                else "any CUDA extension built in this image"
            )
            yield _f(
                NVCC_TORCH,
                sev,
                f"nvcc {major_minor(base)} cannot build extensions for torch {label} (CUDA {t.cuda})",
                f"The base image's nvcc is CUDA {st.cuda.value}; torch {label} was built with CUDA {t.cuda}. "
                f"torch.utils.cpp_extension refuses a different CUDA major: {what} fails with 'The detected "
                f"CUDA version ({major_minor(base)}) mismatches the version that was used to compile PyTorch "
                f"({t.cuda}). Please make sure to use the same CUDA versions.'",
                line=t.line,
                fixes=(
                    Fix(
                        f"Use a devel base image with CUDA {t.cuda}",
                        f"FROM nvidia/cuda:{_full_cuda(m, t.cuda)}-devel-ubuntu22.04",
                    ),
                    Fix(
                        f"Or install the torch build for CUDA {major_minor(base)}",
                        (torch_for_cuda(m, str(base)) or (None, ""))[0],
                    ),
                ),
                facts={"base_cuda": st.cuda.value, "torch_cuda": t.cuda, "stage": st.label},
            )
            return
        if base.release[:2] != tcu.release[:2]:
            yield _f(
                SECOND_CUDA,
                "info",
                f"nvcc {major_minor(base)} and torch's CUDA {t.cuda} differ in minor version",
                f"torch {label} brings its own CUDA {t.cuda} runtime (the pip nvidia-* wheels); the base image's "
                f"toolkit is CUDA {st.cuda.value}. Extensions still build (same major), with a warning.",
                line=t.line,
                facts={"base_cuda": st.cuda.value, "torch_cuda": t.cuda, "stage": st.label},
            )
        return
    if base.release[:2] != tcu.release[:2]:
        yield _f(
            SECOND_CUDA,
            "warning",
            f"a second CUDA stack: torch {label} brings CUDA {t.cuda} on a CUDA {major_minor(base)} base",
            f"torch {label} loads its own CUDA {t.cuda} libraries ({PIP_CUDA_COST}), so the base image's CUDA "
            f"{st.cuda.value} libraries are dead weight, and the container toolkit checks the driver against "
            f"CUDA {major_minor(base)} (NVIDIA_REQUIRE_CUDA) while torch needs the driver for CUDA {t.cuda}.",
            line=t.line,
            fixes=(
                Fix(
                    f"Use a base image with CUDA {t.cuda}, or a plain OS/python image",
                    f"FROM nvidia/cuda:{_full_cuda(m, t.cuda)}-base-ubuntu22.04",
                ),
            ),
            facts={"base_cuda": st.cuda.value, "torch_cuda": t.cuda, "stage": st.label},
        )
    elif flavour == "runtime":
        yield _f(
            SECOND_CUDA,
            "info",
            f"two copies of CUDA {t.cuda}: the base image's and torch's",
            f"torch {label} loads its own CUDA libraries ({PIP_CUDA_COST}); the base image's CUDA "
            f"{st.cuda.value} runtime libraries are unused by torch.",
            line=t.line,
            fixes=(
                Fix(
                    "A -base image (or python:slim) saves the duplicate",
                    f"FROM nvidia/cuda:{st.cuda.value}-base-ubuntu22.04",
                ),
            ),
            facts={"base_cuda": st.cuda.value, "torch_cuda": t.cuda, "stage": st.label},
        )


def _full_cuda(m: Matrix, cuda: str) -> str:
    rel = m.cuda_release(Version(cuda))
    if rel is None:
        return cuda if cuda.count(".") >= 2 else cuda + ".0"
    same = [r for r in m.cuda_releases if r.version.release[:2] == rel.version.release[:2]]
    return max(same, key=lambda r: r.version).raw if same else rel.raw


def _check_cudnn(st: Stage, m: Matrix) -> Iterator[Finding | Skip]:
    tf = st.tf
    if tf is None or tf.from_base or tf.cpu or tf.raw is None:
        return
    rel = m.tf_release(Version(tf.raw))
    if rel is None or not rel.cudnn:
        return
    if tf.and_cuda:
        if st.cuda is not None:
            yield _f(
                SECOND_CUDA,
                "info" if st.stack.flavour == "base" else "warning",
                f"a second CUDA stack: tensorflow[and-cuda] {tf.raw} brings its own CUDA and cuDNN",
                f"tensorflow[and-cuda] installs the CUDA {rel.cuda or '?'} and cuDNN {rel.cudnn} libraries as pip "
                f"wheels ({PIP_CUDA_COST}); the base image's CUDA {st.cuda.value} libraries are not used by it.",
                line=tf.line,
                facts={"base_cuda": st.cuda.value, "tensorflow": tf.raw, "stage": st.label},
            )
        return
    if st.cuda is None:
        return
    need = Version(rel.cudnn)
    cmd = tf_and_cuda(tf.raw, m=m) if rel.and_cuda else None
    if st.cudnn_major == 0 and st.cudnn is None:
        yield _f(
            CUDNN,
            "error",
            f"TensorFlow {tf.raw} needs cuDNN {rel.cudnn}, and the image has none",
            f"TensorFlow {tf.raw} from pip uses the system cuDNN unless installed as tensorflow[and-cuda]; the "
            f"base image {st.base} has no cuDNN ({st.stack.flavour or 'no'} flavour without -cudnn in the tag), "
            f"so TensorFlow logs 'Could not load dynamic library libcudnn.so.{need.release[0]}' and runs on "
            "the CPU.",
            line=tf.line,
            fixes=(
                Fix("Install the CUDA libraries TensorFlow pins", cmd),
                Fix(f"Or use a -cudnn{need.release[0]} base image"),
            ),
            facts={"tensorflow": tf.raw, "image": st.base, "stage": st.label},
        )
        return
    major = st.cudnn_major
    if major is not None and major not in (0, need.release[0]) and st.cudnn is None:
        yield _f(
            CUDNN,
            "error",
            f"cuDNN {major} in the image cannot serve TensorFlow {tf.raw} (built with cuDNN {rel.cudnn})",
            f"TensorFlow {tf.raw} loads libcudnn.so.{need.release[0]}; the image carries cuDNN {major} "
            f"(libcudnn.so.{major}), so TensorFlow cannot use the GPU.",
            line=tf.line,
            fixes=(
                Fix("Install the CUDA libraries TensorFlow pins", cmd),
                Fix(f"Or use a -cudnn{need.release[0]} base image"),
            ),
            facts={"tensorflow": tf.raw, "cudnn_major": major, "stage": st.label},
        )


def _check_cpu_wheel(st: Stage, m: Matrix) -> Iterator[Finding | Skip]:
    if st.cuda is None:
        return
    t = st.torch
    if t is not None and t.build == "cpu" and not t.from_base:
        how = (
            f"the {t.install.index_url} index"
            if t.install and t.install.index_tag == "cpu" and t.install.index_url
            else "the 'cpuonly' conda package"
            if t.install and t.install.conda_cpu
            else f"the '+{Version(t.raw or '0').local}' label"
        )
        yield _f(
            CPU_WHEEL,
            "error",
            f"CPU-only torch {t.raw} in a CUDA image",
            f"Line {t.line} installs a CPU-only PyTorch ({how}) on the CUDA {st.cuda.value} base image "
            f"{st.base}: torch.cuda.is_available() is False and training silently runs on the CPU.",
            line=t.line,
            fixes=(
                Fix(
                    "Install a CUDA build of torch",
                    (torch_for_cuda(m, st.cuda.value, t.raw) or (None, ""))[0],
                ),
            ),
            facts={"torch": t.raw, "stage": st.label},
        )
    tf = st.tf
    if tf is not None and tf.cpu and not tf.from_base:
        yield _f(
            CPU_WHEEL,
            "error",
            f"tensorflow-cpu {tf.raw} in a CUDA image",
            f"Line {tf.line} installs tensorflow-cpu on the CUDA {st.cuda.value} base image {st.base}: it has no "
            "GPU support, so tf.config.list_physical_devices('GPU') is empty.",
            line=tf.line,
            fixes=(Fix("Install the GPU-capable package", tf_and_cuda(tf.raw, m=m)),),
            facts={"tensorflow": tf.raw, "stage": st.label},
        )


def _check_cpu_base(st: Stage, m: Matrix) -> Iterator[Finding | Skip]:
    """A GPU TensorFlow from pip on a base known to carry no CUDA (python:*, an OS image).

    TensorFlow's pip package loads the system CUDA and cuDNN unless installed as tensorflow[and-cuda] (2.14+,
    https://www.tensorflow.org/install/pip): on such a base it runs on the CPU. PyTorch's CUDA wheels bring their
    CUDA libraries (statically or as nvidia-* wheels), so torch CUDA wheels on a CPU base are not judged here.
    """
    tf = st.tf
    if st.cuda is not None or tf is None or tf.from_base or tf.cpu or tf.and_cuda or tf.raw is None:
        return
    if not st.stack.known or st.stack.kind not in ("python", "os"):
        return
    rel = m.tf_release(Version(tf.raw))
    if rel is None or not rel.cudnn:
        return
    pin = (Fix("Install the CUDA libraries TensorFlow pins", tf_and_cuda(tf.raw, m=m)),)
    fixes = (pin if rel.and_cuda else ()) + (
        Fix(
            ("Or b" if rel.and_cuda else "B")
            + f"uild FROM an nvidia/cuda -cudnn runtime image with the CUDA {rel.cuda or '?'} and "
            f"cuDNN {rel.cudnn} TensorFlow {tf.raw} was tested with"
        ),
    )
    yield _f(
        CPU_BASE,
        "warning",
        f"TensorFlow {tf.raw} on the CPU-only base {st.base} will not find a GPU",
        f"Line {tf.line} installs tensorflow {tf.raw} from pip, which loads the system CUDA {rel.cuda or '?'} "
        f"and cuDNN {rel.cudnn} libraries; the base image {st.base} has none, so TensorFlow logs "
        "'Could not load dynamic library' and runs on the CPU"
        + ("" if rel.and_cuda else f" (TensorFlow {tf.raw} predates the tensorflow[and-cuda] extra of 2.14)")
        + ". Fine for a CPU-only image; wrong for a training image meant for a GPU host.",
        line=tf.line,
        fixes=fixes,
        facts={"tensorflow": tf.raw, "image": st.base, "stage": st.label},
    )


def parse_arch_list(text: str) -> list[tuple[str, CC | None, bool]]:
    """TORCH_CUDA_ARCH_LIST entries → (entry, compute capability, +PTX); names expanded."""
    out: list[tuple[str, CC | None, bool]] = []
    for item in re.split(r"[;\s,]+", text.strip().strip('"').strip("'")):
        if not item:
            continue
        named = NAMED_ARCHES.get(item.lower())
        if named is not None:
            out.extend(parse_arch_list(named))
            continue
        m = re.match(r"^(\d{1,4})\.(\d{1,4})([af]?)(\+PTX)?$", item, re.I)
        if m is None:
            out.append((item, None, False))
            continue
        out.append((item, CC(int(m.group(1)), int(m.group(2))), bool(m.group(4))))
    return out


def _check_arch_list(st: Stage, m: Matrix, opts: Options) -> Iterator[Finding | Skip]:
    al = st.arch_list
    if al is None or UNSET in al.value or not al.value.strip():
        return
    entries = parse_arch_list(al.value)
    has_nvcc = st.stack.nvcc or st.stack.flavour == "devel"
    if st.cuda is None:
        yield Skip(
            ARCH_LIST, f"TORCH_CUDA_ARCH_LIST is set (line {al.line}) but the stage's CUDA toolkit is unknown"
        )
    elif not has_nvcc:
        pass  # no nvcc in this image: nothing is compiled here with that list
    else:
        cuda = Version(st.cuda.value)
        bad = [e for e, cc, _ in entries if cc is not None and m.cuda_can_compile(cuda, cc) is False]
        if bad:
            yield _f(
                ARCH_LIST,
                "error",
                f"CUDA {st.cuda.value} cannot compile TORCH_CUDA_ARCH_LIST entries {', '.join(bad)}",
                f"TORCH_CUDA_ARCH_LIST={al.value!r} ({al.how}, line {al.line}) asks nvcc from CUDA "
                f"{st.cuda.value} for {', '.join(bad)}; it cannot target them, so extension builds fail with "
                f"\"nvcc fatal : Unsupported gpu architecture 'compute_{bad[0].replace('.', '').rstrip('aAfF').split('+')[0]}'\".",
                line=al.line,
                fixes=(Fix("Drop those entries, or use a CUDA toolkit that supports them"),),
                facts={"arch_list": al.value, "cuda": st.cuda.value, "stage": st.label},
            )
    if opts.target_gpu or opts.target_cc:
        cc = parse_cc(opts.target_cc) if opts.target_cc else None
        row = m.gpu(opts.target_gpu) if opts.target_gpu else None
        cc = row.cc if cc is None and row is not None else cc
        if cc is None:
            return
        # "GeForce RTX 5090 has compute capability 12.0" (the matrix's name for --target-gpu 5090); a GPU given by
        # its compute capability alone is not defined by itself.
        name = full_name(opts.target_gpu or "", row.name) if row is not None else opts.target_gpu
        gpu = name or f"a GPU with compute capability {cc}"
        has = f"{name} has compute capability {cc} and none" if name else "none"
        archs: list[Arch] = []
        for _, c, ptx in entries:
            if c is None:
                continue
            archs.append(Arch("sm", c))
            if ptx:
                archs.append(Arch("compute", c))
        how, _ = arch_support(tuple(archs), cc)
        if how == "none" and archs:
            yield _f(
                ARCH_LIST,
                "error",
                f"extensions built here have no kernels for {gpu} ({cc.sm})",
                f"TORCH_CUDA_ARCH_LIST={al.value!r} (line {al.line}) compiles CUDA extensions for "
                f"{', '.join(e for e, _, _ in entries)}; {has} of them (nor PTX) runs on it: "
                "'no kernel image is available for execution on the device'.",
                line=al.line,
                fixes=(Fix(f"Add {cc.major}.{cc.minor} to TORCH_CUDA_ARCH_LIST"),),
                facts={"arch_list": al.value, "cc": str(cc), "stage": st.label},
            )


def _check_require_cuda(st: Stage, m: Matrix, opts: Options) -> Iterator[Finding | Skip]:
    if not opts.target_driver or st.stack.kind != "cuda" or st.cuda is None or st.cuda.line != st.line:
        return
    if "NVIDIA_DISABLE_REQUIRE" in st.env and st.env["NVIDIA_DISABLE_REQUIRE"] not in ("", "0", "false"):
        return
    given = make_fact("driver", opts.target_driver, "--target-driver")
    drv = given_driver(m, given.raw or "0", given.value, "linux").version  # `570`: the branch's first release
    cuda = Version(st.cuda.value)
    state = driver_can_run(m, drv, cuda, "linux")
    if state != "minor":
        return
    _, own, _ = driver_requirement(m, cuda, "linux")
    branch = str(drv.release[0])
    mm = major_minor(cuda)
    branches = st.stack.require_branches
    if branches is not None and branch in branches:
        return
    listed = f" (it lists only {', '.join(branches)})" if branches else ""
    sev = "error" if branches is not None else "warning"
    verb = "refuses" if branches is not None else "may refuse"
    yield _f(
        REQUIRE_CUDA,
        sev,
        f"the container {verb} to start on driver {opts.target_driver}: NVIDIA_REQUIRE_CUDA=cuda>={mm}",
        f"{st.base} sets NVIDIA_REQUIRE_CUDA=cuda>={mm}; CUDA {mm} ships with driver ≥ {own}. The NVIDIA "
        f"container toolkit checks it at `docker run --gpus` and stops with 'unsatisfied condition: "
        f"cuda>={mm}, please update your driver' unless the driver's branch is one the image lists for "
        f"forward compatibility{listed}"
        + ("" if branches is not None else "; which branches this image lists is not in the matrix")
        + ".",
        line=st.line,
        fixes=(
            Fix(f"Install NVIDIA driver ≥ {own}"),
            Fix("Or use a base image whose CUDA the driver supports"),
            Fix(
                "Or skip the check (the runtime then relies on minor-version compatibility)",
                "ENV NVIDIA_DISABLE_REQUIRE=1",
            ),
        ),
        facts={"driver": opts.target_driver, "cuda": st.cuda.value, "stage": st.label},
    )
