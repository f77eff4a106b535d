"""What a RUN command installs: pip / pip3 / python -m pip / uv pip, conda / mamba, apt (Python, CUDA, cuDNN).

Each command becomes a list of actions (an install of a framework, an uninstall, a Python version,
a system cuDNN or CUDA toolkit, a CUDA extension build). Requirements files are read from the build
context through the stage's COPY mappings.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from pathlib import Path

from compat.dockerfile.actions import (
    EXTENSION_PACKAGES,
    FRAMEWORKS,
    Action,
    ExtensionBuild,
    Install,
    InstallContext,
    SetCuda,
    SetCudnn,
    SetPython,
    abs_path,
    norm_name,
    readable,
    uninstall_of,
)
from compat.dockerfile.pip import interpret_pip
from compat.dockerfile.shellwords import ShellCommand

_PY_EXE_RE = re.compile(r"^(?:.*/)?python(\d(?:\.\d{1,2})?)?$")
_PIP_EXE_RE = re.compile(r"^(?:.*/)?pip(\d(?:\.\d{1,2})?)?$")
_APT_PY_RE = re.compile(r"^python(3(?:\.\d{1,2})?)(?:-(?:dev|venv|pip|full|distutils))?(?:=.*)?$")
_APT_CUDNN_RE = re.compile(
    r"^libcudnn(\d{1,4})(?:-dev)?(?:-cuda-(\d{1,4}))?(?:=(\d{1,6}(?:\.\d{1,6}){1,3}))?"
)
_APT_CUDA_RE = re.compile(
    r"^cuda(?:-toolkit|-nvcc|-compiler|-libraries-dev|-runtime|-cudart-dev|-libraries)?-(\d{1,4})-(\d{1,4})(?:=.*)?$"
)
_CONDA_INSTALLER_RE = re.compile(
    r"(Miniconda3|Miniconda2|Miniforge3|Mambaforge|Miniforge-pypy3|Anaconda3)-(?:py(\d)(\d{1,2})_)?[^/\s]*\.sh"
)
_CONDA_SPEC_RE = re.compile(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(?:(==|=|>=|<=|>|<|!=|~=)\s*([^\s=,|]+))?")
# Source trees whose setup.py compiles CUDA code (beside EXTENSION_PACKAGES): PyTorch itself and its
# companions built from a clone, and projects commonly built that way in GPU images.
_CUDA_SOURCE_TREES = frozenset(
    {
        "pytorch",
        "torch",
        "vision",
        "torchvision",
        "audio",
        "torchaudio",
        "maskrcnn-benchmark",
        "bitsandbytes",
        "flash-attention",
        "tensorrt-llm",
        "nccl-tests",
        "mmdetection3d",
        "spconv",
        "kaolin",
    }
)


def _builds_cuda(cwd: str, args: list[str], env: Mapping[str, str]) -> bool:
    """Whether `python setup.py …` in `cwd` compiles CUDA: a known CUDA project, FORCE_CUDA / arch list set,
    or a CUDA flag. A clone of a pure-Python project (transformers) is not a CUDA build."""
    name = norm_name(os.path.basename(cwd.rstrip("/")) or "")
    if (
        name in EXTENSION_PACKAGES
        or name in _CUDA_SOURCE_TREES
        or name.replace("_", "-") in EXTENSION_PACKAGES
    ):
        return True
    if any(env.get(k, "") not in ("", "0") for k in ("FORCE_CUDA", "TORCH_CUDA_ARCH_LIST", "DS_BUILD_OPS")):
        return True
    return any("cuda" in a.lower() for a in args[1:])


def interpret(cmd: ShellCommand, ctx: InstallContext) -> list[Action]:
    """Actions of one simple command; unknown commands give none."""
    argv = list(cmd.argv)
    # Wrappers: sudo, env, conda run, time, nohup, xargs -n1
    while argv:
        head = os.path.basename(argv[0])
        if head in ("sudo", "time", "nohup", "exec", "command", "stdbuf"):
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
            continue
        if head == "env":
            argv = argv[1:]
            while argv and ("=" in argv[0] or argv[0].startswith("-")):
                argv = argv[1:]
            continue
        if head in ("conda", "mamba", "micromamba") and len(argv) > 1 and argv[1] == "run":
            rest = argv[2:]
            while rest and rest[0].startswith("-"):
                opt = rest.pop(0)
                if opt in ("-n", "--name", "-p", "--prefix") and rest:
                    rest.pop(0)
            argv = rest
            continue
        break
    if not argv:
        return []
    cwd = cmd.cwd if cmd.cwd and cmd.cwd.startswith("/") else abs_path(cmd.cwd or ".", ctx.workdir)
    head = os.path.basename(argv[0])
    pym = _PY_EXE_RE.match(argv[0])
    if pym is not None:
        py = pym.group(1) if pym.group(1) and "." in pym.group(1) else None
        args = argv[1:]
        while args and args[0].startswith("-") and args[0] not in ("-m",) and not args[0].startswith("-m"):
            args = args[1:]
        if args and ((args[0] == "-m" and len(args) > 1 and args[1] == "pip") or args[0] == "-mpip"):
            rest = args[2:] if args[0] == "-m" else args[1:]
            return interpret_pip(rest, cmd, ctx, cwd, py, "pip")
        if (
            len(args) >= 2
            and args[0].endswith("setup.py")
            and any(a in ("install", "develop", "build_ext", "bdist_wheel") for a in args[1:])
        ):
            if _builds_cuda(cwd, args, {**ctx.env, **cmd.env}):
                return [ExtensionBuild(f"python {' '.join(args[:2])} (in {cwd})")]
            return []
        if args and args[0] == "-m" and len(args) > 2 and args[1] == "venv":
            return []
        return []
    pipm = _PIP_EXE_RE.match(argv[0])
    if pipm is not None:
        py = pipm.group(1) if pipm.group(1) and "." in pipm.group(1) else None
        return interpret_pip(argv[1:], cmd, ctx, cwd, py, "pip")
    if head == "uv":
        if len(argv) > 2 and argv[1] == "pip" and argv[2] == "install":
            return interpret_pip(argv[2:], cmd, ctx, cwd, None, "uv")
        if len(argv) > 2 and argv[1] == "pip" and argv[2] == "uninstall":
            return uninstall_of(argv[3:])
        if len(argv) > 2 and argv[1] == "python" and argv[2] == "install":
            vers = [a for a in argv[3:] if re.match(r"^3\.\d{1,2}", a)]
            return [SetPython(".".join(vers[-1].split(".")[:2]), "uv python install")] if vers else []
        if len(argv) > 1 and argv[1] == "venv":
            py = _opt_value(argv[2:], ("--python", "-p"))
            if py and re.match(r"^3\.\d{1,2}", py):
                return [SetPython(".".join(py.split(".")[:2]), "uv venv --python")]
        return []
    if head in ("conda", "mamba", "micromamba"):
        return _conda(argv[1:])
    for a in argv[1:]:
        cm = _CONDA_INSTALLER_RE.search(a)
        if (
            cm is not None
        ):  # Miniconda / Miniforge fetched or run: later pip/conda use its Python, not the OS's
            py = f"{cm.group(2)}.{cm.group(3)}" if cm.group(2) else ""
            return [SetPython(py, f"the Python of {cm.group(1)} ({cm.group(0)})")]
    if head in ("apt-get", "apt", "yum", "dnf", "microdnf"):
        return _apt(argv[1:])
    if head == "pyenv" and len(argv) > 2 and argv[1] in ("install", "global"):
        vers = [a for a in argv[2:] if re.match(r"^3\.\d{1,2}", a)]
        if vers:
            return [SetPython(".".join(vers[-1].split(".")[:2]), f"pyenv {argv[1]}")]
    return []


def _opt_value(args: list[str], names: tuple[str, ...]) -> str | None:
    val = None
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                val = args[i + 1]
            elif a.startswith(n + "="):
                val = a.split("=", 1)[1]
    return val


def _conda(args: list[str]) -> list[Action]:
    if not args or args[0] not in ("install", "create", "update", "upgrade", "remove", "uninstall"):
        return []
    if args[0] in ("remove", "uninstall"):
        return uninstall_of([a.split("=")[0] for a in args[1:] if not a.startswith("-")])
    channels: list[str] = []
    specs: list[str] = []
    i = 1
    while i < len(args):
        a = args[i]
        if a in ("-c", "--channel") and i + 1 < len(args):
            channels.append(args[i + 1])
            i += 2
            continue
        if a in ("-n", "--name", "-p", "--prefix", "--file") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        specs.append(a)
        i += 1
    out: list[Action] = []
    parsed: dict[str, tuple[str | None, str | None]] = {}
    for s in specs:
        m = _CONDA_SPEC_RE.match(s.replace(" ", ""))
        if m is None:
            continue
        parsed[m.group(1).lower()] = (m.group(2), m.group(3))
    if "python" in parsed and parsed["python"][1]:
        v = parsed["python"][1] or ""
        if re.match(r"^3\.\d{1,2}", v):
            out.append(SetPython(".".join(v.split(".")[:2]), f"conda {args[0]} python={v}"))
    cuda = None
    for key in ("pytorch-cuda", "cudatoolkit", "cuda-version", "cuda-toolkit"):
        if key in parsed and parsed[key][1]:
            cuda = ".".join((parsed[key][1] or "").split(".")[:2])
            break
    cpu = "cpuonly" in parsed
    for name in ("pytorch", "torch", "tensorflow", "tensorflow-gpu"):
        if name not in parsed:
            continue
        op, ver = parsed[name]
        exact = ver if op in ("=", "==") and ver and "*" not in ver and readable(ver) else None
        if exact is not None and op == "=" and exact.count(".") < 2:
            exact = None  # conda's `=2.1` means 2.1.*: a range
        out.append(
            Install(
                FRAMEWORKS[name],
                name,
                f"{name}{op or ''}{ver or ''}",
                version=exact,
                specifier=""
                if exact
                else (f"=={ver}.*" if op == "=" and ver else f"{op}{ver}" if op and ver else ""),
                tool="conda",
                conda_cuda=cuda,
                conda_cpu=cpu,
                channels=tuple(channels),
            )
        )
    return out


def _apt(args: list[str]) -> list[Action]:
    if not args or args[0] not in ("install",):
        return []
    out: list[Action] = []
    for a in args[1:]:
        if a.startswith("-"):
            continue
        pm = _APT_PY_RE.match(a)
        if pm is not None:
            ver = pm.group(1)
            out.append(SetPython(ver if "." in ver else None, f"apt install {a}"))
            continue
        cm = _APT_CUDNN_RE.match(a)
        if cm is not None:
            ver = cm.group(3)
            out.append(
                SetCudnn(int(cm.group(1)), ".".join(ver.split(".")[:3]) if ver else None, f"apt install {a}")
            )
            continue
        km = _APT_CUDA_RE.match(a)
        if km is not None:
            out.append(SetCuda(f"{km.group(1)}.{km.group(2)}", f"apt install {a}"))
    return out


def expand_globs(context: Path, pattern: str) -> list[str]:
    """InstallContext-relative paths matching a COPY source (which may be a glob)."""
    if any(ch in pattern for ch in "*?["):
        return sorted(os.path.relpath(p, context) for p in glob.glob(str(context / pattern)))
    return [pattern]


def context_file(path: Path, ctx: Path) -> tuple[Path | None, str]:
    """(the file, "") when `path` (resolved) is a regular file inside the build context, else (None, what it is):
    a device or FIFO is named as such (issue 32, item 19), and a link out of the context is not followed (Docker
    copies the link, not its target; reading it would read a host file, such as /etc/shadow)."""
    from compat.inputs import refusal

    try:
        real = path.resolve()
        st = real.stat()
    except (OSError, RuntimeError):
        return None, "does not exist"
    why = refusal(st)
    if why is not None:
        return None, why
    try:
        real.relative_to(ctx.resolve())
    except ValueError:
        return None, "is a symbolic link that leads out of the build context"
    return real, ""
