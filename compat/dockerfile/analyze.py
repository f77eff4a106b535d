"""From a parsed Dockerfile to stages with facts, then to findings through the shared resolver."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat.dockerfile import installs as ins
from compat.dockerfile.images import BaseStack, infer, parse_ref
from compat.dockerfile.parser import (
    UNSET,
    Dockerfile,
    ExpansionError,
    Instruction,
    expand,
    key_values,
    split_flags,
    strip_unset,
)
from compat.dockerfile.shell import run as run_shell
from compat.errors import InputError
from compat.facts import Fact, Facts, Gpu, make_fact
from compat.findings import Finding, Fix, Report, Skip, unique
from compat.matrix import Matrix, TorchRelease
from compat.resolver import arch_support, driver_can_run, driver_requirement, resolve
from compat.versions import CC, Arch, major_minor, parse_cc

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
_ENV_DIRS = (
    "conda",
    "site-packages",
    "dist-packages",
    "venv",
    "/usr/local/lib/python",
    "/root/.local",
    "/usr/local",
    "/opt/python",
)


@dataclass
class Where:
    """A fact's value and the Dockerfile line it comes from."""

    value: str
    line: int
    how: str = ""


@dataclass
class TorchState:
    install: ins.Install | None
    raw: str | None
    """What the resolver gets as "torch" ("2.1.0+cu121"); None when the version is unknown."""
    line: int
    build: str | None = None
    cuda: str | None = None
    from_base: bool = False


@dataclass
class TfState:
    install: ins.Install | None
    raw: str | None
    line: int
    cpu: bool = False
    and_cuda: bool = False
    from_base: bool = False


@dataclass
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
    arch_list: Where | None = None
    extension_builds: list[tuple[int, str]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

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
        )
        return s


@dataclass
class Options:
    target_driver: str | None = None
    target_gpu: str | None = None
    target_cc: str | None = None
    build_args: Mapping[str, str] = field(default_factory=dict)
    context: Path | None = None


# ------------------------------------------------------------------ stage building


def build_stages(df: Dockerfile, m: Matrix, opts: Options) -> tuple[list[Stage], list[Finding]]:
    """Walk the instructions; every stage with its facts and the findings met on the way."""
    global_args: dict[str, str] = dict(PREDEFINED_ARGS)
    for name, value in opts.build_args.items():
        if name in PREDEFINED_ARGS:
            global_args[name] = value
    declared_global: set[str] = set(PREDEFINED_ARGS)
    stages: list[Stage] = []
    by_name: dict[str, Stage] = {}
    notes: list[Finding] = []
    cur: Stage | None = None
    ins_: Instruction | None = None
    try:
        for ins_ in df.instructions:
            if not ins_.known:
                notes.append(
                    Finding(
                        SYNTAX,
                        "error",
                        f"unknown instruction {ins_.keyword!r}",
                        f"Line {ins_.line} starts with {ins_.keyword!r}, which is not a Dockerfile instruction; "
                        f"docker build stops with 'unknown instruction: {ins_.keyword.upper()}'.",
                        (
                            Fix(
                                "Fix the typo or join the line to the previous instruction with a trailing \\"
                            ),
                        ),
                        {"instruction": ins_.keyword},
                        group="dockerfile",
                        line=ins_.line,
                    )
                )
                continue
            kw = ins_.keyword
            if kw == "ARG" and cur is None:
                for k, v in key_values(ins_.args, df.escape):
                    declared_global.add(k)
                    if k in opts.build_args:
                        global_args[k] = opts.build_args[k]
                    elif v is not None:
                        global_args[k] = strip_unset(expand(v, global_args, df.escape)[0])
                continue
            if kw == "FROM":
                cur = _from(ins_, df, m, opts, global_args, stages, by_name, notes)
                stages.append(cur)
                if cur.name:
                    by_name[cur.name.lower()] = cur
                continue
            if cur is None:
                raise InputError(
                    f"line {ins_.line}: {kw} before any FROM (not a Dockerfile, or FROM is missing)"
                )
            _instruction(cur, ins_, df, m, opts, global_args, by_name)
    except ExpansionError as exc:  # a Dockerfile whose ARG/ENV values grow without bound
        raise InputError(f"line {ins_.line if ins_ is not None else '?'}: {exc}") from None
    return stages, notes


def _from(
    ins_: Instruction,
    df: Dockerfile,
    m: Matrix,
    opts: Options,
    global_args: dict[str, str],
    stages: list[Stage],
    by_name: dict[str, Stage],
    notes: list[Finding],
) -> Stage:
    flags, rest = split_flags(ins_.args, df.escape)
    parts = rest.split()
    if not parts:
        raise InputError(f"line {ins_.line}: FROM without an image")
    image_raw = parts[0]
    name = parts[2] if len(parts) >= 3 and parts[1].lower() == "as" else None
    image, unset = expand(image_raw, global_args, df.escape)
    index = len(stages)
    for var in sorted(unset):
        notes.append(
            Finding(
                ARG_UNSET,
                "warning",
                f"FROM uses ${{{var}}}, which has no value",
                f"The base image {image_raw!r} needs ARG {var}, which has no default here and was not given with "
                f"--build-arg: docker build fails with 'base name ({image_raw}) should not be blank' or an invalid "
                "reference. The stage's stack is unknown.",
                (
                    Fix(
                        f"Give it a default (ARG {var}=...) or pass it",
                        f"compat dockerfile PATH --build-arg {var}=...",
                    ),
                ),
                {"arg": var},
                group="dockerfile",
                line=ins_.line,
            )
        )
    image = strip_unset(image)
    platform = flags.get("platform")
    if platform:
        platform = strip_unset(expand(platform, global_args, df.escape)[0])
    parent = by_name.get(image.lower()) if image else None
    if parent is not None:
        st = parent.clone_for_child(index, name, image, ins_.line)
        return st
    if unset or not image:
        stack = BaseStack(
            image_raw, "unknown", known=False, reason=f"'{image_raw}' depends on unset build arguments"
        )
    else:
        stack = infer(parse_ref(image), m.raw)
        if not stack.known:
            notes.append(
                Finding(
                    BASE_UNKNOWN,
                    "info",
                    f"base image {image} is not known",
                    f"{stack.reason}. Checks that need the base image's CUDA, cuDNN or Python are skipped for this stage.",
                    (Fix("Pin a versioned tag such as nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"),),
                    {"image": image},
                    group="dockerfile",
                    line=ins_.line,
                )
            )
    if (
        platform
        and platform not in ("linux/amd64", "$BUILDPLATFORM", "$TARGETPLATFORM")
        and "amd64" not in platform
        and "x86_64" not in platform
    ):
        stack = replace(stack, notes=(*stack.notes, f"built for {platform}"))
    st = Stage(index, name, image, ins_.line, stack)
    src = f"Dockerfile:{ins_.line}"
    if stack.python:
        st.python = Where(stack.python, ins_.line, stack.python_how)
    st.os = stack.os
    if stack.cuda:
        st.cuda = Where(stack.cuda, ins_.line, f"the base image {image}")
    if stack.cudnn:
        st.cudnn = Where(stack.cudnn, ins_.line, f"the base image {image}")
    st.cudnn_major = stack.cudnn_major
    if stack.torch or (stack.torch_cuda and stack.kind in ("pytorch",)):
        raw = _base_torch_raw(m, stack)
        st.torch = TorchState(
            None, raw, ins_.line, "cuda" if stack.torch_cuda else None, stack.torch_cuda, from_base=True
        )
    elif stack.kind == "ngc-pytorch":
        st.torch = TorchState(None, None, ins_.line, "cuda", stack.torch_cuda, from_base=True)
    if stack.kind in ("tensorflow", "ngc-tensorflow"):
        st.tf = TfState(
            None, stack.tensorflow, ins_.line, from_base=True, and_cuda=stack.kind == "tensorflow"
        )
    if stack.kind == "cuda":
        st.env["NVIDIA_REQUIRE_CUDA"] = f"cuda>={major_minor(Version(stack.cuda or '0'))}"
    del src
    return st


def _base_torch_raw(m: Matrix, stack: BaseStack) -> str | None:
    if not stack.torch:
        return None
    if stack.kind != "pytorch" or not stack.torch_cuda:
        return stack.torch
    tag = "cu" + stack.torch_cuda.replace(".", "")
    try:
        rel = m.torch_release(Version(stack.torch))
    except InvalidVersion:
        return stack.torch
    if rel is not None and rel.variant(tag) is not None:
        return f"{stack.torch}+{tag}"
    return stack.torch


def _scope(st: Stage) -> dict[str, str]:
    s = dict(st.env)
    s.update(st.args)
    return s


def _instruction(
    st: Stage,
    ins_: Instruction,
    df: Dockerfile,
    m: Matrix,
    opts: Options,
    global_args: Mapping[str, str],
    by_name: Mapping[str, Stage],
) -> None:
    kw = ins_.keyword
    if kw == "ARG":
        for k, v in key_values(ins_.args, df.escape):
            if k in opts.build_args:
                st.args[k] = opts.build_args[k]
            elif v is not None:
                st.args[k] = strip_unset(expand(v, _scope(st), df.escape)[0])
            elif k in global_args:
                st.args[k] = global_args[k]
            if k == "TORCH_CUDA_ARCH_LIST" and k in st.args:
                st.arch_list = Where(st.args[k], ins_.line, "ARG")
        return
    if kw == "ENV":
        for k, v in key_values(ins_.args, df.escape):
            if v is None:
                continue
            st.env[k] = strip_unset(expand(v, _scope(st), df.escape, quotes=False)[0])
            if k == "TORCH_CUDA_ARCH_LIST":
                st.arch_list = Where(st.env[k], ins_.line, "ENV")
        return
    if kw == "WORKDIR":
        path = strip_unset(expand(ins_.args.strip().strip('"'), _scope(st), df.escape)[0])
        st.workdir = _join(st.workdir, path)
        return
    if kw in ("COPY", "ADD"):
        _copy(st, ins_, df, by_name)
        return
    if kw == "RUN":
        _run(st, ins_, df, m, opts)
        return


def _copy(st: Stage, ins_: Instruction, df: Dockerfile, by_name: Mapping[str, Stage]) -> None:
    flags, rest = split_flags(ins_.args, df.escape)
    if ins_.heredocs:
        return
    text = strip_unset(expand(rest, _scope(st), df.escape)[0]).strip()
    exec_items = _exec_form(text)
    if exec_items is not None:
        items = exec_items
    else:
        from compat.dockerfile.parser import words

        items = words(text, df.escape)
    if len(items) < 2:
        return
    srcs, dest = items[:-1], items[-1]
    dest_abs = _join(st.workdir, dest)
    src_stage = flags.get("from")
    if src_stage is not None:
        other = by_name.get(src_stage.lower())
        if other is None:
            return
        if any(any(d in s for d in _ENV_DIRS) for s in srcs):
            # The Python environment (and its frameworks) comes along.
            if other.torch is not None:
                st.torch = replace(other.torch, line=ins_.line)
            if other.tf is not None:
                st.tf = replace(other.tf, line=ins_.line)
            if other.python is not None and (st.python is None or "conda" in " ".join(srcs)):
                st.python = replace(other.python, line=ins_.line, how=f"copied from stage {other.label}")
        return
    is_dir = dest.endswith("/") or len(srcs) > 1 or dest in (".", "./")
    for s in srcs:
        if s.startswith(("http://", "https://", "git@")):
            continue
        st.copies.append((s, dest_abs, is_dir, ins_.line))


def _exec_form(text: str) -> list[str] | None:
    """`["sh", "-c", "…"]` (JSON exec form) as a list; None for shell form (`[ -n "$X" ] && …` included)."""
    t = text.strip()
    if not t.startswith("[") or not t.endswith("]"):
        return None
    import json

    try:
        val = json.loads(t)
    except ValueError:
        return None
    return [str(x) for x in val] if isinstance(val, list) else None


def _join(base: str, path: str) -> str:
    """An image path: `path` made absolute against `base`, normalised (no `//`)."""
    joined = path if path.startswith("/") else f"{base.rstrip('/')}/{path}"
    out = os.path.normpath(joined)
    return "/" + out.lstrip("/")


def _resolve_path(st: Stage, opts: Options, image_path: str) -> tuple[Path | None, str]:
    ctx = opts.context
    if ctx is None:
        return None, "no build context"
    target = PurePosixPath(image_path)
    for src, dest, is_dir, line in reversed(st.copies):
        for rel in ins.expand_globs(ctx, src):
            try:
                local = (ctx / rel).resolve()
            except (RuntimeError, OSError):  # a symlink loop in the build context (issue 19, item 6)
                return None, f"{src} in the build context is a symbolic link loop"
            if local.is_dir() or rel in (".", "./"):
                d = PurePosixPath(dest)
                if target == d or str(target).startswith(str(d).rstrip("/") + "/"):
                    sub = os.path.relpath(str(target), str(d))
                    cand = local / sub
                    if cand.is_file():
                        return cand, ""
                    return None, f"COPY at line {line} brings {src} to {dest}, but {cand} does not exist"
                continue
            dst = PurePosixPath(dest) / PurePosixPath(rel).name if is_dir else PurePosixPath(dest)
            if dst == target:
                if local.is_file():
                    return local, ""
                return None, f"COPY at line {line} copies {src}, which is not in the build context {ctx}"
    return None, f"no COPY/ADD before this RUN puts {image_path} in the image"


def _run(st: Stage, ins_: Instruction, df: Dockerfile, m: Matrix, opts: Options) -> None:
    _, text = split_flags(ins_.args, df.escape)
    scope = _scope(st)
    pieces: list[tuple[str, int, Instruction | None]] = []
    if ins_.heredocs:
        head = text.strip()
        body_is_script = (
            re.fullmatch(r"<<-?\s*[\"']?\w+[\"']?", head) is not None
            or re.match(r"^(?:ba|da|z)?sh\b", head) is not None
        )
        for h in ins_.heredocs:
            if body_is_script:
                pieces.append((h.body, h.line, None))
        if not body_is_script:
            pieces.append((re.sub(r"<<-?\s*[\"']?\w+[\"']?", "", text), ins_.line, ins_))
    else:
        argv = _exec_form(text)
        if argv is not None:
            if len(argv) >= 3 and os.path.basename(argv[0]) in ("sh", "bash") and argv[1] == "-c":
                pieces.append((argv[2], ins_.line, None))
            else:
                import shlex

                pieces.append((" ".join(shlex.quote(a) for a in argv), ins_.line, None))
        else:
            pieces.append((text, ins_.line, ins_))
    ctx = ins.Context(st.workdir, lambda p: _resolve_path(st, opts, p), scope)
    for body, base_line, inst in pieces:
        for cmd in run_shell(body, scope):
            if inst is not None:
                line = inst.line_at(cmd.offset)
            else:
                line = base_line + body.count("\n", 0, cmd.offset)
            if "TORCH_CUDA_ARCH_LIST" in cmd.env:
                st.arch_list = Where(cmd.env["TORCH_CUDA_ARCH_LIST"], line, "RUN")
            for act in ins.interpret(cmd, ctx):
                _apply(st, act, line, m)


def _apply(st: Stage, act: ins.Action, line: int, m: Matrix) -> None:
    if isinstance(act, ins.SetPython):
        ver = act.version
        if ver is None:
            row = _os_python(m, st.os)
            if row is None:
                return
            if st.python is not None and st.stack.kind not in ("os", "cuda"):
                return  # apt's python3 beside an image's own Python: the image's stays the default
            ver = row
        st.python = Where(ver, line, act.how)
    elif isinstance(act, ins.SetCudnn):
        st.cudnn_major = act.major
        st.cudnn = Where(act.version, line, act.how) if act.version else None
    elif isinstance(act, ins.SetCuda):
        st.cuda = Where(act.version, line, act.how)
        if st.stack.flavour is None:
            st.stack = replace(st.stack, flavour="devel")
    elif isinstance(act, ins.ExtensionBuild):
        st.extension_builds.append((line, act.what))
    elif isinstance(act, ins.Uninstall):
        if "torch" in act.frameworks:
            st.torch = None
        if "tensorflow" in act.frameworks:
            st.tf = None
    elif isinstance(act, ins.Note):
        st.findings.append(
            Finding(act.id, "info", act.title, act.message, (), {}, group="dockerfile", line=line)
        )
    elif isinstance(act, ins.Install):
        if act.python is not None:
            st.python = Where(act.python, line, f"the interpreter of this install ({act.python})")
        if act.framework == "torch":
            _install_torch(st, act, line, m)
        else:
            _install_tf(st, act, line, m)


def _os_python(m: Matrix, os_name: str | None) -> str | None:
    from compat.dockerfile.images import os_row

    if os_name is None:
        return None
    doc = m.raw.get("images.yaml")
    row = os_row(doc, os_name) if isinstance(doc, Mapping) else None
    return str(row.get("python")) if row is not None and row.get("python") else None


def _spec_of(inst: ins.Install) -> SpecifierSet | None:
    try:
        spec = SpecifierSet(inst.specifier) if inst.specifier else SpecifierSet()
        for one in spec:  # packaging reads a specifier's version only when comparing
            one.contains("0", prereleases=True)
    except (InvalidSpecifier, ValueError):  # ValueError: a release number of over 4300 digits
        return None
    return spec


def _where(inst: ins.Install, line: int) -> str:
    return f"line {line}" + (f" ({inst.origin})" if inst.origin else "")


def _install_torch(st: Stage, inst: ins.Install, line: int, m: Matrix) -> None:
    if inst.unresolved:
        st.findings.append(_unresolved(inst, line, "torch"))
        st.torch = TorchState(inst, None, line)
        return
    py = st.python.value if st.python else None
    tag = inst.index_tag
    if inst.tool == "conda":
        tag = (
            "cpu"
            if inst.conda_cpu
            else ("cu" + inst.conda_cuda.replace(".", "") if inst.conda_cuda else None)
        )
    version = inst.version
    if version is None:
        spec = _spec_of(inst)
        rel = _newest_torch(m, spec, py, tag if inst.index_kind == "index" else None)
        if rel is None:
            st.findings.append(
                Finding(
                    UNPINNED,
                    "info",
                    f"{inst.spec} matches no PyTorch release in the matrix",
                    f"The requirement {inst.spec!r} ({_where(inst, line)}) matches no release compat knows "
                    f"(matrix updated {m.updated_for('pytorch.yaml')}{', for Python ' + py if py else ''}); "
                    "PyTorch checks are skipped for this stage.",
                    (),
                    {"requirement": inst.spec},
                    group="dockerfile",
                    line=line,
                )
            )
            st.torch = TorchState(inst, None, line)
            return
        version = rel.raw
        st.findings.append(_unpinned_note(m, inst, rel, tag, py, line))
    v = Version(version)
    rel = m.torch_release(v)
    if rel is not None and v.public != rel.raw:
        version = rel.raw + (f"+{v.local}" if v.local else "")  # `torch==1.10` is release 1.10.0
        v = Version(version)
    raw = version
    if v.local is None and tag is not None:
        if rel is not None and rel.variant(tag) is None:
            tags = ", ".join(x.tag for x in rel.variants) or "none known"
            if inst.index_kind == "index":
                st.findings.append(
                    Finding(
                        INDEX_TAG,
                        "error",
                        f"torch {version} has no {tag} build: pip install fails",
                        f"{_where(inst, line)} installs torch {version} from {inst.index_url}, the only index pip "
                        f"reads. PyTorch publishes torch {version} as {tags}; there is no {tag} wheel, so pip stops "
                        f"with 'No matching distribution found for torch=={version}'.",
                        _torch_tag_fixes(m, rel, tag),
                        {"torch": version, "index": tag},
                        group="dockerfile",
                        line=line,
                    )
                )
                st.torch = TorchState(inst, None, line)
                return
            default = rel.pypi_default or "unknown"
            st.findings.append(
                Finding(
                    INDEX_TAG,
                    "warning",
                    f"torch {version} has no {tag} build: the {tag} index is ignored",
                    f"{_where(inst, line)} adds {inst.index_url} beside PyPI, but PyTorch publishes torch {version} "
                    f"only as {tags}. pip silently installs PyPI's torch {version} ({default}) instead of a {tag} "
                    "build.",
                    _torch_tag_fixes(m, rel, tag),
                    {"torch": version, "index": tag},
                    group="dockerfile",
                    line=line,
                )
            )
        else:
            raw = f"{version}+{tag}"
    if inst.tool == "conda" and tag is None and rel is not None:
        raw = version
    build = None
    local = Version(raw).local
    if local:
        build = (
            "cpu"
            if local.startswith("cpu")
            else "rocm"
            if local.startswith("rocm")
            else ("cuda" if local.startswith("cu") else None)
        )
    elif rel is not None:
        pypi = rel.pypi_default
        build = "cuda" if pypi and pypi.startswith("cu") else ("cpu" if pypi == "cpu" else None)
    cuda = None
    if rel is not None:
        var = rel.variant(local or (rel.pypi_default or ""))
        cuda = var.cuda if var is not None else None
    if inst.tool == "conda" and inst.conda_cuda:
        cuda = inst.conda_cuda
    st.torch = TorchState(inst, raw, line, build, cuda)


def _torch_tag_fixes(m: Matrix, rel: TorchRelease, tag: str) -> tuple[Fix, ...]:
    fixes: list[Fix] = []
    cuda_vars = sorted(
        (v for v in rel.variants if v.is_cuda), key=lambda v: Version(v.cuda or "0"), reverse=True
    )
    if cuda_vars:
        v = cuda_vars[0]
        fixes.append(
            Fix(
                f"Use an index torch {rel.raw} is published on ({v.tag})",
                f"pip install torch=={rel.raw} --index-url {v.index_url or 'https://download.pytorch.org/whl/' + v.tag}",
            )
        )
    newer = [r for r in m.torch if r.variant(tag) is not None]
    if newer:
        r = (
            min(newer, key=lambda r: r.version)
            if Version(rel.raw) < min(x.version for x in newer)
            else max(newer, key=lambda r: r.version)
        )
        var = r.variant(tag)
        assert var is not None
        fixes.append(
            Fix(
                f"Or pin a torch release that has a {tag} build",
                f"pip install torch=={r.raw} --index-url {var.index_url or 'https://download.pytorch.org/whl/' + tag}",
            )
        )
    return tuple(fixes)


def _newest_torch(
    m: Matrix, spec: SpecifierSet | None, py: str | None, tag: str | None
) -> TorchRelease | None:
    cands = []
    for r in m.torch:
        if spec is not None and not spec.contains(r.version, prereleases=False):
            continue
        if r.version.is_prerelease:
            continue
        if py is not None and r.python and py not in r.python:
            continue
        if tag is not None and r.variant(tag) is None:
            continue
        cands.append(r)
    return max(cands, key=lambda r: r.version) if cands else None


def _driver_need(m: Matrix, cuda: str | None) -> str:
    if not cuda:
        return ""
    floor, own, _ = driver_requirement(m, Version(cuda), "linux")
    need = own or floor
    return f", which needs NVIDIA driver ≥ {need}" if need else ""


def _unpinned_note(
    m: Matrix, inst: ins.Install, rel: TorchRelease, tag: str | None, py: str | None, line: int
) -> Finding:
    var = rel.variant(tag) if tag else None
    if var is None and rel.pypi_default:
        var = rel.variant(rel.pypi_default)
    what = (
        f"{var.tag} build, CUDA {var.cuda}"
        if var is not None and var.cuda
        else (var.tag if var else "default build")
    )
    return Finding(
        UNPINNED,
        "info",
        f"{inst.spec} resolves today to torch {rel.raw}",
        f"{_where(inst, line)} does not pin torch: built today it installs torch {rel.raw} ({what}"
        f"{_driver_need(m, var.cuda if var else None)}){' for Python ' + py if py else ''}. A rebuild next "
        "month may get a different CUDA runtime.",
        (Fix("Pin the version the image was tested with", f"pip install torch=={rel.raw}"),),
        {"requirement": inst.spec, "torch": rel.raw},
        group="dockerfile",
        line=line,
    )


def _unresolved(inst: ins.Install, line: int, what: str) -> Finding:
    names = ", ".join(f"${{{n}}}" for n in inst.unresolved)
    first = inst.unresolved[0] if inst.unresolved else "VAR"
    return Finding(
        UNRESOLVED,
        "info",
        f"the {what} version comes from {names}, which is not set",
        f"{_where(inst, line)} installs {inst.spec or what} with a version from {names}, which this Dockerfile "
        "does not set; checks of that version are skipped.",
        (Fix("Pass the value this image is built with", f"compat dockerfile PATH --build-arg {first}=..."),),
        {"requirement": inst.spec},
        group="dockerfile",
        line=line,
    )


def _install_tf(st: Stage, inst: ins.Install, line: int, m: Matrix) -> None:
    if inst.unresolved:
        st.findings.append(_unresolved(inst, line, "TensorFlow"))
        st.tf = TfState(inst, None, line)
        return
    py = st.python.value if st.python else None
    version = inst.version
    if version is None:
        spec = _spec_of(inst)
        cands = [
            r
            for r in m.tensorflow
            if (spec is None or spec.contains(r.version, prereleases=False))
            and not r.version.is_prerelease
            and (py is None or not r.python or py in r.python)
        ]
        if not cands:
            st.findings.append(
                Finding(
                    UNPINNED,
                    "info",
                    f"{inst.spec} matches no TensorFlow release in the matrix",
                    f"The requirement {inst.spec!r} ({_where(inst, line)}) matches no release compat knows "
                    f"(matrix updated {m.updated_for('tensorflow.yaml')}{', for Python ' + py if py else ''}).",
                    (),
                    {"requirement": inst.spec},
                    group="dockerfile",
                    line=line,
                )
            )
            st.tf = TfState(inst, None, line)
            return
        rel = max(cands, key=lambda r: r.version)
        version = rel.raw
        st.findings.append(
            Finding(
                UNPINNED,
                "info",
                f"{inst.spec} resolves today to TensorFlow {rel.raw}",
                f"{_where(inst, line)} does not pin TensorFlow: built today it installs TensorFlow {rel.raw} "
                f"(built with CUDA {rel.cuda or '?'}, cuDNN {rel.cudnn or '?'}{_driver_need(m, rel.cuda)})"
                f"{' for Python ' + py if py else ''}.",
                (Fix("Pin the version the image was tested with", f"pip install tensorflow=={rel.raw}"),),
                {"requirement": inst.spec, "tensorflow": rel.raw},
                group="dockerfile",
                line=line,
            )
        )
    cpu = inst.package in ("tensorflow-cpu", "tf-nightly-cpu")
    st.tf = TfState(inst, version, line, cpu=cpu, and_cuda="and-cuda" in inst.extras)


# ------------------------------------------------------------------ facts


def stage_facts(st: Stage, opts: Options) -> tuple[Facts, dict[str, int]]:
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
    if opts.target_driver:
        vals["driver"] = make_fact("driver", opts.target_driver, "--target-driver")
    facts = Facts(values=vals)
    if opts.target_gpu or opts.target_cc:
        cc = str(parse_cc(opts.target_cc)) if opts.target_cc else None
        src = "--target-gpu" if opts.target_gpu else "--target-cc"
        facts = facts.with_gpus((Gpu(opts.target_gpu, cc, src, 0),), src)
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
    yield from _check_cpu_wheel(st)
    yield from _check_arch_list(st, m, opts)
    yield from _check_require_cuda(st, m, opts)
    yield from _check_no_nvcc(st)


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
                        f"pip install torch --index-url https://download.pytorch.org/whl/cu{major_minor(base).replace('.', '')}",
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
    cmd = f"pip install 'tensorflow[and-cuda]=={tf.raw}'" if rel.and_cuda else None
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


def _check_cpu_wheel(st: Stage) -> Iterator[Finding | Skip]:
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
                    f"pip install torch --index-url https://download.pytorch.org/whl/cu{''.join(st.cuda.value.split('.')[:2])}",
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
            fixes=(Fix("Install the GPU-capable package", f"pip install 'tensorflow[and-cuda]=={tf.raw}'"),),
            facts={"tensorflow": tf.raw, "stage": st.label},
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
        if cc is None and opts.target_gpu:
            row = m.gpu(opts.target_gpu)
            cc = row.cc if row is not None else None
        if cc is None:
            return
        archs: list[Arch] = []
        for _, c, ptx in entries:
            if c is None:
                continue
            archs.append(Arch("sm", c))
            if ptx:
                archs.append(Arch("compute", c))
        how, _ = arch_support(tuple(archs), cc)
        if how == "none" and archs:
            gpu = opts.target_gpu or f"compute capability {cc}"
            yield _f(
                ARCH_LIST,
                "error",
                f"extensions built here have no kernels for {gpu} ({cc.sm})",
                f"TORCH_CUDA_ARCH_LIST={al.value!r} (line {al.line}) compiles CUDA extensions for "
                f"{', '.join(e for e, _, _ in entries)}; {gpu} is {cc} and none of them (nor PTX) runs on it: "
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
    drv = Version(make_fact("driver", opts.target_driver, "--target-driver").value or "0")
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


# ------------------------------------------------------------------ everything together

_DROP_FOR_AND_CUDA = ("tensorflow.cuda", "tensorflow.cudnn")


def analyze(df: Dockerfile, m: Matrix, opts: Options) -> Report:
    stages, notes = build_stages(df, m, opts)
    if not stages:
        raise InputError("no FROM instruction: this is not a Dockerfile")
    findings: list[Finding] = list(notes)
    skipped: list[Skip] = []
    stage_docs: list[dict[str, Any]] = []
    last_facts: dict[str, Any] = {}
    for st in stages:
        facts, lines = stage_facts(st, opts)
        rep = resolve(facts, m)
        own = list(st.findings)
        for r in check_stage(st, m, opts):
            if isinstance(r, Skip):
                skipped.append(r)
            else:
                own.append(r)
        own_ids = {f.id for f in own}
        for f in rep.findings:
            if st.tf is not None and st.tf.and_cuda and f.id in _DROP_FOR_AND_CUDA:
                continue
            if f.id == "toolkit.arch" and not (st.stack.nvcc or st.stack.flavour == "devel"):
                continue
            if f.id == "framework.cpu-build" and CPU_WHEEL in own_ids:
                continue
            if f.id in ("tensorflow.cuda", "tensorflow.cudnn") and st.tf is not None and st.tf.from_base:
                continue
            line = _line_for(f, lines, st)
            facts_ = dict(f.facts)
            facts_["stage"] = st.label
            own.append(replace(f, line=line, facts=facts_))
        for f in own:
            if f.line is None:
                f = replace(f, line=st.line)
            findings.append(f)
        skipped.extend(rep.skipped)
        fj = facts.to_json()
        stage_docs.append(
            {
                "name": st.name,
                "index": st.index,
                "line": st.line,
                "base": st.base,
                "from_stage": st.parent,
                "facts": fj,
            }
        )
        last_facts = fj
    report = Report(
        unique(findings, lambda f: (f.id, f.title, f.line)),
        unique(skipped, lambda s: (s.id, s.reason)),
        last_facts,
        m.updated_date,
    )
    report.extra["stages"] = stage_docs
    return report


def _line_for(f: Finding, lines: Mapping[str, int], st: Stage) -> int:
    text = (f.title + " " + " ".join(f.facts)).lower()
    for key, name in (
        ("torch", "torch"),
        ("tensorflow", "tensorflow"),
        ("cudnn", "cudnn"),
        ("python", "python"),
        ("cuda", "cuda"),
    ):
        if key in text and name in lines:
            return lines[name]
    return st.line
