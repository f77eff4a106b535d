"""What a RUN command installs: pip / pip3 / python -m pip / uv pip, conda / mamba, apt (Python, CUDA, cuDNN).

Each command becomes a list of actions (an install of a framework, an uninstall, a Python version,
a system cuDNN or CUDA toolkit, a CUDA extension build). Requirements files are read from the build
context through the stage's COPY mappings.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Union

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from compat.dockerfile.parser import UNSET
from compat.dockerfile.shell import Command

FRAMEWORKS = {
    "torch": "torch",
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "tf-nightly": "tensorflow",
    "tf-nightly-gpu": "tensorflow",
    "tf-nightly-cpu": "tensorflow",
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
_PIP_VALUE_OPTS = frozenset(
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
_INDEX_TAG_RE = re.compile(
    r"/(?:whl/)?(?:nightly/|test/)?(cu\d{2,3}|cpu(?:-cxx11-abi)?|rocm\d+(?:\.\d+)*|xpu)(?:/|$|/torch_stable\.html)"
)
_WHEEL_RE = re.compile(r"(?:^|/)(torch|tensorflow(?:[_-]gpu|[_-]cpu)?)-([0-9][^-]*)-(cp\d+)-")
_PY_EXE_RE = re.compile(r"^(?:.*/)?python(\d(?:\.\d{1,2})?)?$")
_PIP_EXE_RE = re.compile(r"^(?:.*/)?pip(\d(?:\.\d{1,2})?)?$")
_APT_PY_RE = re.compile(r"^python(3(?:\.\d{1,2})?)(?:-(?:dev|venv|pip|full|distutils))?(?:=.*)?$")
_APT_CUDNN_RE = re.compile(
    r"^libcudnn(\d{1,4})(?:-dev)?(?:-cuda-(\d{1,4}))?(?:=(\d{1,6}(?:\.\d{1,6}){1,3}))?"
)
_APT_CUDA_RE = re.compile(
    r"^cuda(?:-toolkit|-nvcc|-compiler|-libraries-dev|-runtime|-cudart-dev|-libraries)?-(\d{1,4})-(\d{1,4})(?:=.*)?$"
)
_CONDA_SPEC_RE = re.compile(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(?:(==|=|>=|<=|>|<|!=|~=)\s*([^\s=,|]+))?")


@dataclass
class Install:
    """One framework requirement a command installs."""

    framework: str
    """"torch" or "tensorflow"."""
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


@dataclass
class Uninstall:
    frameworks: tuple[str, ...]


@dataclass
class SetPython:
    version: str | None
    """None: apt's python3 of the stage's OS."""
    how: str


@dataclass
class SetCudnn:
    major: int
    version: str | None
    how: str


@dataclass
class SetCuda:
    version: str
    how: str


@dataclass
class ExtensionBuild:
    what: str


@dataclass
class Note:
    """Something odd about an install (a requirements file that cannot be read)."""

    id: str
    title: str
    message: str


Action = Union[Install, Uninstall, SetPython, SetCudnn, SetCuda, ExtensionBuild, Note]


@dataclass
class Context:
    """What an install command needs from its stage."""

    workdir: str
    resolve_path: Callable[[str], tuple[Path | None, str]]
    """Image path → (file in the build context or None, why not)."""
    env: dict[str, str] = field(default_factory=dict)


def _readable(version: str) -> bool:
    """Whether packaging reads `version` (past 4300 digits it raises ValueError, not InvalidVersion)."""
    try:
        Version(version)
    except ValueError:
        return False
    return True


def _abs(path: str, cwd: str) -> str:
    joined = path if path.startswith("/") else f"{(cwd or '/').rstrip('/')}/{path}"
    return "/" + os.path.normpath(joined).lstrip("/")


def interpret(cmd: Command, ctx: Context) -> list[Action]:
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
    cwd = cmd.cwd if cmd.cwd and cmd.cwd.startswith("/") else _abs(cmd.cwd or ".", ctx.workdir)
    head = os.path.basename(argv[0])
    pym = _PY_EXE_RE.match(argv[0])
    if pym is not None:
        py = pym.group(1) if pym.group(1) and "." in pym.group(1) else None
        args = argv[1:]
        while args and args[0].startswith("-") and args[0] not in ("-m",) and not args[0].startswith("-m"):
            args = args[1:]
        if args and ((args[0] == "-m" and len(args) > 1 and args[1] == "pip") or args[0] == "-mpip"):
            rest = args[2:] if args[0] == "-m" else args[1:]
            return _pip(rest, cmd, ctx, cwd, py, "pip")
        if (
            len(args) >= 2
            and args[0].endswith("setup.py")
            and any(a in ("install", "develop", "build_ext", "bdist_wheel") for a in args[1:])
        ):
            return [ExtensionBuild(f"python {' '.join(args[:2])} (in {cwd})")]
        if args and args[0] == "-m" and len(args) > 2 and args[1] == "venv":
            return []
        return []
    pipm = _PIP_EXE_RE.match(argv[0])
    if pipm is not None:
        py = pipm.group(1) if pipm.group(1) and "." in pipm.group(1) else None
        return _pip(argv[1:], cmd, ctx, cwd, py, "pip")
    if head == "uv":
        if len(argv) > 2 and argv[1] == "pip" and argv[2] == "install":
            return _pip(argv[2:], cmd, ctx, cwd, None, "uv")
        if len(argv) > 2 and argv[1] == "pip" and argv[2] == "uninstall":
            return _uninstall(argv[3:])
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


def _uninstall(args: list[str]) -> list[Action]:
    fws = tuple(sorted({FRAMEWORKS[_norm(a)] for a in args if _norm(a) in FRAMEWORKS}))
    return [Uninstall(fws)] if fws else []


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class _PipOpts:
    index: str | None = None
    extra: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    torch_backend: str | None = None


def _index_tag(url: str) -> str | None:
    m = _INDEX_TAG_RE.search(url)
    if m is None:
        return None
    tag = m.group(1)
    return "cpu" if tag.startswith("cpu") else tag


def _pip(args: list[str], cmd: Command, ctx: Context, cwd: str, py: str | None, tool: str) -> list[Action]:
    if not args:
        return []
    sub = args[0]
    if sub == "uninstall":
        return _uninstall(args[1:])
    if sub not in ("install", "download") or sub == "download":
        return []
    out: list[Action] = []
    reqs: list[tuple[str, str]] = []  # (requirement text, origin)
    opts = _PipOpts()
    rest = args[1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        name, eq, inline = a.partition("=") if a.startswith("--") else (a, "", "")
        if (
            a.startswith("-")
            and not eq
            and len(a) > 2
            and a[1] != "-"
            and a[:2] in ("-r", "-c", "-i", "-f", "-e")
        ):
            name, inline, eq = a[:2], a[2:], "="
        if name in _PIP_VALUE_OPTS:
            val = inline if eq else (rest[i + 1] if i + 1 < len(rest) else "")
            i += 1 if eq else 2
            if name in ("-r", "--requirement"):
                out.extend(_read_requirements(val, cwd, ctx, reqs, opts, depth=0))
            elif name in ("-i", "--index-url"):
                opts.index = val
            elif name == "--extra-index-url":
                opts.extra.append(val)
            elif name in ("-f", "--find-links"):
                opts.find_links.append(val)
            elif name == "--torch-backend":
                opts.torch_backend = val
            elif name in ("-e", "--editable"):
                out.extend(_local_project(val))
            elif name in (
                "--global-option",
                "--config-settings",
                "-C",
                "--install-option",
                "--build-option",
            ) and ("cuda" in val.lower() or "build_ext" in val):
                out.append(ExtensionBuild(f"pip install {name}={val}"))
            continue
        if a.startswith("-"):
            if a == "--no-build-isolation":
                pass
            i += 1
            continue
        reqs.append((a, ""))
        i += 1
    for text, origin in dict.fromkeys(reqs):  # a requirement written twice is read once
        out.extend(_requirement(text, origin, opts, tool, py, cmd))
    return out


def _local_project(val: str) -> list[Action]:
    v = val.strip()
    if v.startswith("git+"):
        name = v.rstrip("/").split("/")[-1].split("@")[0].removesuffix(".git")
        if _norm(name) in EXTENSION_PACKAGES or name.lower() in EXTENSION_PACKAGES:
            return [ExtensionBuild(f"pip install {v}")]
    return []


def _requirement(
    text: str, origin: str, opts: _PipOpts, tool: str, py: str | None, cmd: Command
) -> list[Action]:
    t = text.strip()
    if not t:
        return []
    if t.startswith(("git+", "http://", "https://", "file:")) or t.endswith(".whl"):
        wm = _WHEEL_RE.search(t.replace("%2B", "+"))
        if wm is not None:
            pkg = _norm(wm.group(1))
            ver = wm.group(2)
            if not _readable(ver):
                return _local_project(t)
            pyv = f"{wm.group(3)[2]}.{wm.group(3)[3:]}"
            return [Install(FRAMEWORKS[pkg], pkg, t, version=ver, tool=tool, python=py or pyv, origin=origin)]
        return _local_project(t)
    if t in (".", "./") or t.startswith(("./", "/", "../")):
        return []
    unresolved = tuple(sorted(set(re.findall(UNSET + r"([A-Za-z0-9_$()]*)" + UNSET, t))))
    clean = re.sub(UNSET + r"[A-Za-z0-9_$()]*" + UNSET, "", t)
    name_m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)", clean)
    if name_m is None:
        return []
    pkg = _norm(name_m.group(1))
    if pkg in EXTENSION_PACKAGES and pkg not in ("vllm", "deepspeed", "xformers", "transformer-engine"):
        # flash-attn, apex, mmcv-full … compile against torch unless a matching wheel exists.
        extra_act: list[Action] = [ExtensionBuild(f"pip install {t}")]
    elif pkg == "deepspeed" and any(
        k.startswith("DS_BUILD_") and v not in ("0", "") for k, v in cmd.env.items()
    ):
        extra_act = [ExtensionBuild("pip install deepspeed with DS_BUILD_* ops")]
    else:
        extra_act = []
    if pkg not in FRAMEWORKS:
        return extra_act
    if unresolved:
        return [
            Install(FRAMEWORKS[pkg], pkg, clean, tool=tool, python=py, unresolved=unresolved, origin=origin)
        ]
    try:
        req = Requirement(clean)
    except InvalidRequirement:
        return []
    version = None
    specifier = str(req.specifier)
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        version = specs[0].version
        specifier = ""
        if not _readable(version):  # `torch===anything`, or a release number too long for int()
            version, specifier = None, str(req.specifier)
    tag = None
    kind = None
    url = None
    if opts.torch_backend and opts.torch_backend not in ("auto",):
        tag, kind, url = opts.torch_backend, "index", f"--torch-backend {opts.torch_backend}"
    elif opts.index and _index_tag(opts.index):
        tag, kind, url = _index_tag(opts.index), "index", opts.index
    else:
        for u in opts.extra + opts.find_links:
            if _index_tag(u):
                tag, kind, url = _index_tag(u), "extra", u
    return [
        Install(
            FRAMEWORKS[pkg],
            pkg,
            clean,
            version=version,
            specifier=specifier,
            extras=frozenset(e.lower() for e in req.extras),
            index_tag=tag,
            index_kind=kind,
            index_url=url,
            tool=tool,
            python=py,
            origin=origin,
        ),
        *extra_act,
    ]


def _read_requirements(
    path: str, cwd: str, ctx: Context, reqs: list[tuple[str, str]], opts: _PipOpts, depth: int
) -> list[Action]:
    if not path.strip() or path.strip() in ("<", "-"):
        return []
    if UNSET in path:
        return [
            Note(
                "dockerfile.requirements",
                f"requirements file {path.replace(UNSET, '')!r} is not known",
                "Its name comes from a variable the Dockerfile leaves unset; its pins are not checked.",
            )
        ]
    if path.startswith(("http://", "https://")):
        return [
            Note(
                "dockerfile.requirements",
                f"requirements file {path} is fetched at build time",
                "compat does not download it; its pins are not checked.",
            )
        ]
    image_path = _abs(path, cwd)
    local, why = ctx.resolve_path(image_path)
    if local is None:
        return [
            Note(
                "dockerfile.requirements",
                f"requirements file {path} is not in the build context",
                f"{why}; its pins are not checked (give --context DIR).",
            )
        ]
    try:
        from compat.errors import InputError
        from compat.inputs import read_text

        text = read_text(str(local), "requirements file", 8 << 20)
    except InputError as exc:
        return [
            Note(
                "dockerfile.requirements",
                f"requirements file {path} cannot be read",
                f"{exc}; its pins are not checked.",
            )
        ]
    out: list[Action] = []
    lines = text.replace("\\\n", " ").splitlines()
    for n, raw in enumerate(lines, 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        parts = line.split()
        head = parts[0]
        val = parts[1] if len(parts) > 1 else ""
        if "=" in head and head.startswith("--"):
            head, val = head.split("=", 1)
        if head in ("-r", "--requirement") and depth < 5:
            out.extend(
                _read_requirements(val, str(PurePosixPath(image_path).parent), ctx, reqs, opts, depth + 1)
            )
        elif head in ("-i", "--index-url"):
            opts.index = val
        elif head == "--extra-index-url":
            opts.extra.append(val)
        elif head in ("-f", "--find-links"):
            opts.find_links.append(val)
        elif head.startswith("-"):
            continue
        else:
            reqs.append((line.split(";")[0].strip(), f"{PurePosixPath(path).name}:{n}"))
    return out


def _conda(args: list[str]) -> list[Action]:
    if not args or args[0] not in ("install", "create", "update", "upgrade", "remove", "uninstall"):
        return []
    if args[0] in ("remove", "uninstall"):
        return _uninstall([a.split("=")[0] for a in args[1:] if not a.startswith("-")])
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
        exact = ver if op in ("=", "==") and ver and "*" not in ver and _readable(ver) else None
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
    """Context-relative paths matching a COPY source (which may be a glob)."""
    if any(ch in pattern for ch in "*?["):
        return sorted(os.path.relpath(p, context) for p in glob.glob(str(context / pattern)))
    return [pattern]
