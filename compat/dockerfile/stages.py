"""Walk a parsed Dockerfile: each stage's base, ARG/ENV scope, COPYs and RUN commands become facts."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from packaging.version import InvalidVersion, Version

from compat.dockerfile.actions import (
    Action,
    ExtensionBuild,
    Install,
    InstallContext,
    Note,
    SetCuda,
    SetCudnn,
    SetPython,
    Uninstall,
)
from compat.dockerfile.expand import ExpansionError, expand, strip_unset
from compat.dockerfile.frameworks import install_tf, install_torch
from compat.dockerfile.images import BaseStack, deleted_row, infer, parse_ref
from compat.dockerfile.installs import context_file, expand_globs, interpret
from compat.dockerfile.jaxinstall import note_install
from compat.dockerfile.model import (
    ARG_UNSET,
    BASE_UNKNOWN,
    DELETED_TAG,
    ENV_DIRS,
    PREDEFINED_ARGS,
    SYNTAX,
    Options,
    Stage,
    TfState,
    TorchState,
    Where,
)
from compat.dockerfile.parser import Dockerfile, Instruction, key_values, split_flags
from compat.dockerfile.rules import note, note_env
from compat.dockerfile.shell import run as run_shell
from compat.errors import InputError
from compat.findings import Finding, Fix
from compat.matrix import Matrix
from compat.versions import major_minor


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
    if not image.strip() and not unset:
        # `FROM ${BASE}` with BASE set to nothing (--build-arg BASE=): docker build stops with "base name
        # (${BASE}) should not be blank" (issue 19, item 11): a finding, never OK.
        notes.append(
            Finding(
                "dockerfile.empty-from",
                "error",
                f"FROM {image_raw} names no image",
                "After build arguments are expanded this FROM is empty, and docker build refuses it ('base name "
                "should not be blank'). Give the build argument a value, or the ARG a default (ARG BASE=image:tag).",
                (),
                {"from": image_raw},
                group="dockerfile",
                line=ins_.line,
            )
        )
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
    if stack.kind == "cuda" and stack.cuda:
        gone = deleted_row(m.raw, stack.cuda)
        if gone is not None:
            notes.append(
                Finding(
                    DELETED_TAG,
                    "error",
                    f"{image} was deleted from Docker Hub",
                    f"NVIDIA deletes nvidia/cuda tags six months after their end of life ({gone.get('source')}); "
                    f"the CUDA {stack.cuda} tags are gone ({gone.get('evidence')}), so docker build stops with "
                    f"'{image}: not found'.",
                    (
                        Fix(
                            "Move to a supported tag of the same CUDA major (see NVIDIA's supported-tags list)"
                        ),
                    ),
                    {"image": image, "cuda": stack.cuda},
                    group="dockerfile",
                    line=ins_.line,
                )
            )
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
            note_env(st, k, st.env[k], ins_.line)
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
        if any(any(d in s for d in ENV_DIRS) for s in srcs):
            # The Python environment (and its frameworks) comes along.
            if other.torch is not None:
                st.torch = replace(other.torch, line=ins_.line)
            if other.tf is not None:
                st.tf = replace(other.tf, line=ins_.line)
            if other.jax is not None:
                st.jax = replace(other.jax, jax_line=ins_.line, jaxlib_line=ins_.line)
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
        for rel in expand_globs(ctx, src):
            try:
                local = (ctx / rel).resolve()
            except (RuntimeError, OSError):  # a symlink loop in the build context (issue 19, item 6)
                return None, f"{src} in the build context is a symbolic link loop"
            if local.is_dir() or rel in (".", "./"):
                d = PurePosixPath(dest)
                if target == d or str(target).startswith(str(d).rstrip("/") + "/"):
                    sub = os.path.relpath(str(target), str(d))
                    cand = local / sub
                    found, why = context_file(cand, ctx)
                    if found is not None:
                        return found, ""
                    return None, f"COPY at line {line} brings {src} to {dest}, but {cand} {why}"
                continue
            dst = PurePosixPath(dest) / PurePosixPath(rel).name if is_dir else PurePosixPath(dest)
            if dst == target:
                found, why = context_file(local, ctx)
                if found is not None:
                    return found, ""
                if why == "does not exist":
                    return None, f"COPY at line {line} copies {src}, which is not in the build context {ctx}"
                return None, f"COPY at line {line} copies {src}, which {why}"
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
    ctx = InstallContext(st.workdir, lambda p: _resolve_path(st, opts, p), scope)
    for body, base_line, inst in pieces:
        for cmd in run_shell(body, scope):
            if inst is not None:
                line = inst.line_at(cmd.offset)
            else:
                line = base_line + body.count("\n", 0, cmd.offset)
            if "TORCH_CUDA_ARCH_LIST" in cmd.env:
                st.arch_list = Where(cmd.env["TORCH_CUDA_ARCH_LIST"], line, "RUN")
            for act in interpret(cmd, ctx):
                if cmd.branch and isinstance(act, Install):
                    act = replace(act, origin=f"{act.origin + '; ' if act.origin else ''}in {cmd.branch}")
                _apply(st, act, line, m)
            note(st, cmd, line)


def _apply(st: Stage, act: Action, line: int, m: Matrix) -> None:
    if isinstance(act, SetPython):
        ver = act.version
        if ver == "":
            st.python = None  # e.g. Miniconda3-latest: its Python is whatever the installer ships today
            return
        if ver is None:
            row = _os_python(m, st.os)
            if row is None:
                return
            if st.python is not None and st.stack.kind not in ("os", "cuda"):
                return  # apt's python3 beside an image's own Python: the image's stays the default
            ver = row
        st.python = Where(ver, line, act.how)
    elif isinstance(act, SetCudnn):
        st.cudnn_major = act.major
        st.cudnn = Where(act.version, line, act.how) if act.version else None
    elif isinstance(act, SetCuda):
        st.cuda = Where(act.version, line, act.how)
        if st.stack.flavour is None:
            st.stack = replace(st.stack, flavour="devel")
    elif isinstance(act, ExtensionBuild):
        st.extension_builds.append((line, act.what))
    elif isinstance(act, Uninstall):
        if "torch" in act.frameworks:
            st.torch = None
        if "tensorflow" in act.frameworks:
            st.tf = None
        if "jax" in act.frameworks:
            st.jax = None
    elif isinstance(act, Note):
        st.findings.append(
            Finding(act.id, act.severity, act.title, act.message, (), {}, group="dockerfile", line=line)
        )
    elif isinstance(act, Install):
        if act.python is not None:
            st.python = Where(act.python, line, f"the interpreter of this install ({act.python})")
        if act.framework == "torch":
            install_torch(st, act, line, m)
        elif act.framework == "jax":
            note_install(st, act, line)
        else:
            install_tf(st, act, line, m)


def _os_python(m: Matrix, os_name: str | None) -> str | None:
    from compat.dockerfile.images import os_row

    if os_name is None:
        return None
    doc = m.raw.get("images.yaml")
    row = os_row(doc, os_name) if isinstance(doc, Mapping) else None
    return str(row.get("python")) if row is not None and row.get("python") else None
