"""pip and uv install lines: options, indexes (flags and environment), requirements files, local projects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import parse_wheel_filename

from compat._valueclass import valueclass
from compat.dockerfile.actions import (
    EXTENSION_PACKAGES,
    FRAMEWORKS,
    INDEX_TAG_RE,
    PIP_VALUE_OPTS,
    WHEEL_FRAMEWORKS,
    Action,
    ExtensionBuild,
    Install,
    InstallContext,
    Note,
    abs_path,
    norm_name,
    readable,
    uninstall_of,
)
from compat.dockerfile.localproject import parse_local, project_requirements
from compat.dockerfile.parser import UNSET
from compat.dockerfile.shellwords import ShellCommand


@valueclass(frozen=False)
class _PipOpts:
    index: str | None = None
    extra: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    torch_backend: str | None = None


# pip's options that may come before the subcommand (`python -m pip --no-cache-dir install ...`).
_PIP_GENERAL_VALUE_OPTS = frozenset(
    {
        "--log",
        "--cache-dir",
        "--proxy",
        "--retries",
        "--timeout",
        "--exists-action",
        "--trusted-host",
        "--cert",
        "--client-cert",
        "--python",
        "--keyring-provider",
        "--use-feature",
        "--use-deprecated",
        "--log-file",
    }
)


def _skip_general_options(args: list[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        name, eq, _ = args[i].partition("=")
        i += 2 if name in _PIP_GENERAL_VALUE_OPTS and not eq else 1
    return args[i:]


def _env_index(tool: str, env: Mapping[str, str]) -> _PipOpts:
    """Index settings from the environment: PIP_INDEX_URL / PIP_EXTRA_INDEX_URL / PIP_FIND_LINKS for pip,
    UV_INDEX_URL / UV_DEFAULT_INDEX / UV_INDEX / UV_EXTRA_INDEX_URL / UV_TORCH_BACKEND for uv (pip's and uv's
    documented environment variables; the command line still wins)."""
    o = _PipOpts()

    def val(name: str) -> str:
        v = env.get(name, "")
        return "" if UNSET in v else v.strip()

    if tool == "uv":
        o.index = val("UV_DEFAULT_INDEX") or val("UV_INDEX_URL") or None
        o.extra = [*val("UV_INDEX").split(), *val("UV_EXTRA_INDEX_URL").split()]
        o.find_links = val("UV_FIND_LINKS").split()
        o.torch_backend = val("UV_TORCH_BACKEND") or None
    else:
        o.index = val("PIP_INDEX_URL") or None
        o.extra = val("PIP_EXTRA_INDEX_URL").split()
        o.find_links = val("PIP_FIND_LINKS").split()
    o.extra = [
        e.split("=", 1)[1] if re.match(r"^[\w-]+=https?://", e) else e for e in o.extra
    ]  # uv's name=url
    return o


def _index_tag(url: str) -> str | None:
    m = INDEX_TAG_RE.search(url)
    if m is None:
        return None
    tag = m.group(1)
    return "cpu" if tag.startswith("cpu") else tag


def interpret_pip(
    args: list[str], cmd: ShellCommand, ctx: InstallContext, cwd: str, py: str | None, tool: str
) -> list[Action]:
    """Actions of a pip / uv pip command line (`args` after `pip`), read with the stage's environment."""
    args = _skip_general_options(args)
    if not args:
        return []
    sub = args[0]
    if sub == "uninstall":
        return uninstall_of(args[1:])
    if sub not in ("install", "download") or sub == "download":
        return []
    out: list[Action] = []
    reqs: list[tuple[str, str]] = []  # (requirement text, origin)
    opts = _env_index(tool, {**ctx.env, **cmd.env})
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
        if name in PIP_VALUE_OPTS:
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
                loc = parse_local(val)
                if loc is not None:
                    reqs.extend(project_requirements(abs_path(loc[0], cwd), loc[1], ctx.resolve_path))
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
        loc = parse_local(a)
        if loc is not None:
            reqs.extend(project_requirements(abs_path(loc[0], cwd), loc[1], ctx.resolve_path))
        else:
            reqs.append((a, ""))
        i += 1
    for text, origin in dict.fromkeys(reqs):  # a requirement written twice is read once
        out.extend(_requirement(text, origin, opts, tool, py, cmd))
    return out


def _local_project(val: str) -> list[Action]:
    v = val.strip()
    if v.startswith("git+"):
        name = v.rstrip("/").split("/")[-1].split("@")[0].removesuffix(".git")
        if norm_name(name) in EXTENSION_PACKAGES or name.lower() in EXTENSION_PACKAGES:
            return [ExtensionBuild(f"pip install {v}")]
    return []


def _framework_wheel(target: str) -> tuple[str, str, str] | None:
    """(distribution, version as written, Python "3.10") of a torch or tensorflow CPython wheel named by a file
    name or URL (packaging's wheel file name rules), else None."""
    base = target.replace("%2B", "+").split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
    if not base.endswith(".whl"):
        return None
    try:
        name, _, _, tags = parse_wheel_filename(base)
    except ValueError:  # InvalidWheelFilename, InvalidVersion, and a version too long for int()
        return None
    cp = sorted({t.interpreter for t in tags if re.fullmatch(r"cp\d{2,}", t.interpreter)})
    if name not in WHEEL_FRAMEWORKS or not cp:
        return None
    return name, base.split("-")[1], f"{cp[0][2]}.{cp[0][3:]}"


def _requirement(
    text: str, origin: str, opts: _PipOpts, tool: str, py: str | None, cmd: ShellCommand
) -> list[Action]:
    t = text.strip()
    if not t:
        return []
    if t.startswith(("git+", "http://", "https://", "file:")) or t.endswith(".whl"):
        wheel = _framework_wheel(t)
        if wheel is not None:
            pkg, ver, pyv = wheel
            return [Install(FRAMEWORKS[pkg], pkg, t, version=ver, tool=tool, python=py or pyv, origin=origin)]
        return _local_project(t)
    if t in (".", "./") or t.startswith(("./", "/", "../")):
        return []
    unresolved = tuple(sorted(set(re.findall(UNSET + r"([A-Za-z0-9_$()]*)" + UNSET, t))))
    clean = re.sub(UNSET + r"[A-Za-z0-9_$()]*" + UNSET, "", t)
    name_m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)", clean)
    if name_m is None:
        return []
    pkg = norm_name(name_m.group(1))
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
    except InvalidRequirement as exc:
        # pip stops the build on it ("ERROR: Invalid requirement"): a finding, never a silent OK (issue 19).
        return [
            Note(
                "dockerfile.invalid-requirement",
                f"pip cannot parse the requirement {clean[:80]!r}",
                f"pip refuses {clean[:80]!r} ({str(exc).splitlines()[0][:120]}) and the build stops at this RUN; nothing is "
                "installed, so the framework checks of this stage see no install.",
                severity="error",
            )
        ]
    version = None
    specifier = str(req.specifier)
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        version = specs[0].version
        specifier = ""
        if not readable(version):  # `torch===anything`, or a release number too long for int()
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
    channel = None
    if url and kind is not None:
        cm = re.search(r"/whl/(nightly|test)/", url)
        channel = cm.group(1) if cm else None
    return [
        Install(
            FRAMEWORKS[pkg],
            pkg,
            clean,
            channel=channel,
            version=version,
            specifier=specifier,
            extras=frozenset(e.lower() for e in req.extras),
            index_tag=tag,
            index_kind=kind,
            index_url=url,
            tool=tool,
            python=py,
            origin=origin,
            links=tuple(u for u in (opts.index, *opts.extra, *opts.find_links) if u),
        ),
        *extra_act,
    ]


def _read_requirements(
    path: str, cwd: str, ctx: InstallContext, reqs: list[tuple[str, str]], opts: _PipOpts, depth: int
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
    image_path = abs_path(path, cwd)
    local, why = ctx.resolve_path(image_path)
    if local is None:
        # there but not a file to read: say what it is, "a character device" (issue 32, item 19)
        unusable = any(k in why for k in ("not a regular file", "leads out of", "kernel file"))
        return [
            Note(
                "dockerfile.requirements",
                f"requirements file {path} "
                + ("cannot be read" if unusable else "is not in the build context"),
                f"{why}; its pins are not checked" + ("." if unusable else " (give --context DIR)."),
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
            # Per-requirement options (pip-compile --generate-hashes writes `name==V --hash=sha256:...`) are not
            # part of the requirement.
            req = re.sub(r"\s--(?:hash|config-settings|global-option|install-option)(?:=|\s+)\S+", "", line)
            reqs.append((req.split(";")[0].strip(), f"{PurePosixPath(path).name}:{n}"))
    return out
