"""Rules about what RUN lines do beyond installing a framework: companion pins, get-pip.py, forward-compat libs.

Events are noted while the stage is walked (stages.py calls `note` and `note_env`); the checks run with the stage's
other checks (checks.py calls `check_rules`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from compat.dockerfile import aptkey, buildiso, shellglue
from compat.dockerfile.actions import PIP_VALUE_OPTS
from compat.dockerfile.flashattn import FLASH_ATTN_PLATFORM, FLASH_ATTN_WHEEL, flash_attn_wheel
from compat.dockerfile.model import COMPANION, COMPAT_LIBS, GET_PIP, NO_CUDNN, Event, Options, Stage
from compat.dockerfile.parser import UNSET
from compat.dockerfile.shellwords import ShellCommand
from compat.findings import Finding, Fix, Skip
from compat.installcmd import pin_command
from compat.matrix import Matrix
from compat.versions import public_version

COMPANIONS = ("torchvision", "torchaudio", "xformers")
NEEDS_CUDNN = ("transformer-engine", "transformer_engine")
GET_PIP_URL = re.compile(r"https?://bootstrap\.pypa\.io/(?:(pip/\d+\.\d+)/)?get-pip\.py")
# The oldest Python today's unversioned get-pip.py runs on: pip 25.1 dropped Python 3.8
# (https://pip.pypa.io/en/stable/news/#v25-1); older interpreters need https://bootstrap.pypa.io/pip/X.Y/get-pip.py.
GET_PIP_MIN_PYTHON = Version("3.9")
# torchvision / torchaudio releases built for each torch minor release, from the compatibility tables at
# https://github.com/pytorch/vision#installation and https://docs.pytorch.org/audio/main/installation.html
# (torch 2.Y: torchvision 0.(Y+15), torchaudio 2.Y; torch 1.Y: torchvision 0.(Y+1), torchaudio 0.Y). Only the
# rows those tables list are used; other torch releases are not judged.
_TABLE_TORCH = {(1, y) for y in range(7, 14)} | {(2, y) for y in range(0, 10)}

# The torch each xformers release requires (its wheels' `Requires-Dist: torch`), read from PyPI's wheel
# metadata on 2026-11-23 with `pip install --dry-run --no-deps --only-binary=:all: --report out.json
# xformers==V` (Linux x86_64 wheels: cp310 or cp311, cp39-abi3 from 0.0.31, py39 for 0.0.35). Releases not
# listed are not judged. PyPI's xformers wheels are built for one torch each; pip enforces the pin.
XFORMERS_TORCH: dict[str, str] = {
    "0.0.16": "==1.13.1",
    "0.0.20": "==2.0.1",
    "0.0.21": "==2.0.1",
    "0.0.22": "==2.0.1",
    "0.0.22.post7": "==2.1.0",
    "0.0.23": "==2.1.1",
    "0.0.23.post1": "==2.1.2",
    "0.0.24": "==2.2.0",
    "0.0.25": "==2.2.1",
    "0.0.25.post1": "==2.2.2",
    "0.0.26.post1": "==2.3.0",
    "0.0.27": "==2.3.1",
    "0.0.27.post1": "==2.4.0",
    "0.0.27.post2": "==2.4.0",
    "0.0.28": "==2.4.1",
    "0.0.28.post1": "==2.4.1",
    "0.0.28.post2": "==2.5.0",
    "0.0.28.post3": "==2.5.1",
    "0.0.29": "==2.5.1",
    "0.0.29.post1": "==2.5.1",
    "0.0.29.post2": "==2.6.0",
    "0.0.29.post3": "==2.6.0",
    "0.0.30": "==2.7.0",
    "0.0.31": "==2.7.1",
    "0.0.31.post1": "==2.7.1",
    "0.0.32.post1": "==2.8.0",
    "0.0.32.post2": "==2.8.0",
    "0.0.33": "==2.9.0",
    "0.0.33.post1": "==2.9.0",
    "0.0.33.post2": "==2.9.1",
    "0.0.34": "==2.10.0",
    "0.0.35": ">=2.10",
}


def xformers_torch(xformers: Version) -> SpecifierSet | None:
    """The torch requirement of an xformers release from PyPI, or None where the table does not say."""
    spec = XFORMERS_TORCH.get(str(xformers))
    return SpecifierSet(spec) if spec else None


def xformers_for(torch: Version) -> list[str]:
    """The xformers releases whose wheels require exactly `torch`'s release (newest first)."""
    out = [x for x, spec in XFORMERS_TORCH.items() if spec.startswith("==") and Version(spec[2:]) == torch]
    return sorted(out, key=Version, reverse=True)


def companion_for(torch: Version, package: str) -> tuple[int, int] | None:
    """The (major, minor) of `package` built for `torch`, or None where the tables do not say."""
    key = (torch.release[0], torch.release[1] if len(torch.release) > 1 else 0)
    if key not in _TABLE_TORCH:
        return None
    major, minor = key
    if package == "torchvision":
        return (0, minor + 15) if major == 2 else (0, minor + 1)
    if package == "torchaudio":
        return (2, minor) if major == 2 else (0, minor)
    return None


def _pip_requirements(argv: list[str]) -> tuple[list[str], bool] | None:
    """Requirement words of a pip/uv install command line (and whether --no-deps is given), else None."""
    head = os.path.basename(argv[0]) if argv else ""
    if re.fullmatch(r"python(\d(\.\d{1,2})?)?", head) and argv[1:3] == ["-m", "pip"]:
        rest = argv[3:]
    elif re.fullmatch(r"pip(\d(\.\d{1,2})?)?", head):
        rest = argv[1:]
    elif head == "uv" and argv[1:2] == ["pip"]:
        rest = argv[2:]
    else:
        return None
    while rest and rest[0].startswith("-"):
        rest = rest[1:]
    if not rest or rest[0] != "install":
        return None
    reqs: list[str] = []
    no_deps = False
    i = 1
    while i < len(rest):
        a = rest[i]
        if a.startswith("-"):
            no_deps = no_deps or a == "--no-deps"
            name, eq, _ = a.partition("=")
            i += (
                2
                if (name in PIP_VALUE_OPTS and not eq and len(a) > 2) or a in ("-r", "-c", "-e", "-i", "-f")
                else 1
            )
            continue
        reqs.append(a)
        i += 1
    return reqs, no_deps


def _name_version(req: str) -> tuple[str, str | None, bool]:
    """(normalised name, exact version or None, any version specifier at all)."""
    try:
        parsed = Requirement(req.strip())
    except InvalidRequirement:  # a path, a URL, a wheel file: its name as written, no version
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)(\[[^\]]*\])?\s*(.*)$", req.strip())
        if m is None:
            return "", None, False
        return canonicalize_name(m.group(1)), None, bool(m.group(3).strip())
    specs = list(parsed.specifier)
    exact = (
        specs[0].version
        if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version
        else None
    )
    return canonicalize_name(parsed.name), exact, bool(specs) or parsed.url is not None


def _unwrap(argv: list[str]) -> list[str]:
    """Drop sudo / env / `conda run -n NAME` in front of the command that runs."""
    while argv:
        head = os.path.basename(argv[0])
        if head in ("sudo", "env", "time", "nohup", "exec"):
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or "=" in argv[0]):
                argv = argv[1:]
        elif head in ("conda", "mamba", "micromamba") and argv[1:2] == ["run"]:
            argv = argv[2:]
            while argv and argv[0].startswith("-"):
                opt = argv.pop(0)
                if opt in ("-n", "--name", "-p", "--prefix") and argv:
                    argv.pop(0)
        else:
            return argv
    return argv


def note(st: Stage, cmd: ShellCommand, line: int) -> None:
    """Note what `cmd` does that the rules below judge (called after its installs are applied)."""
    argv = _unwrap(list(cmd.argv))
    if not argv:
        return
    head = os.path.basename(argv[0])
    aptkey.note(st, argv, line, cmd.branch)
    torch_now = st.torch.raw if st.torch is not None else None
    for a in argv[1:]:
        m = GET_PIP_URL.search(a)
        if (m is not None and head in ("curl", "wget", "python", "python3")) or (
            m and head.startswith("python")
        ):
            st.events.append(Event("get-pip-url", line, m.group(0), version=m.group(1), branch=cmd.branch))
    if head.startswith("python") and len(argv) > 1 and argv[1].endswith("get-pip.py"):
        pm = re.fullmatch(r"python(\d\.\d{1,2})", head)
        py = pm.group(1) if pm else (st.python.value if st.python else None)
        st.events.append(Event("get-pip-run", line, argv[1], version=py, branch=cmd.branch))
    if head == "ldconfig" and any("/compat" in a for a in argv[1:]):
        st.events.append(
            Event("compat-libs", line, next(a for a in argv[1:] if "/compat" in a), branch=cmd.branch)
        )
    if head == "echo" and any(re.search(r"cuda[^\s]*/compat", a) for a in argv[1:]):
        path = next(a for a in argv[1:] if "/compat" in a)
        st.events.append(Event("compat-libs", line, path, branch=cmd.branch))
    parsed = _pip_requirements(argv)
    if parsed is None:
        return
    reqs, no_deps = parsed
    buildiso.note(st, argv, reqs, line, cmd.branch, cmd.env)
    st.findings.extend(shellglue.check(st, argv, reqs, line))
    names = [_name_version(r) for r in dict.fromkeys(reqs) if UNSET not in r]  # 1 MB of one requirement: once
    with_torch = any(n == "torch" for n, _, _ in names)
    pinned = [v for n, v, _ in names if n == "torch" and v]
    if pinned:
        torch_now = pinned[0]  # the companion is resolved against the torch of its own command
    for req in dict.fromkeys(reqs):  # 1 MB of one requirement: searched once
        fa = FLASH_ATTN_WHEEL.search(req)
        if fa is not None:
            plat = FLASH_ATTN_PLATFORM.match(req, fa.end())
            st.events.append(
                Event(
                    "flash-attn-wheel",
                    line,
                    fa.group(0).rstrip("-"),
                    fa.group("torch"),
                    torch_now,
                    with_torch,
                    no_deps,
                    branch=cmd.branch,
                    platform=plat.group(1) if plat else None,
                )
            )
    for name, version, _ in names:
        if name in COMPANIONS:
            st.events.append(
                Event("companion", line, name, version, torch_now, with_torch, no_deps, branch=cmd.branch)
            )
        if name in NEEDS_CUDNN:
            st.events.append(Event("needs-cudnn", line, name, branch=cmd.branch))


def note_env(st: Stage, key: str, value: str, line: int) -> None:
    """Note what an ENV setting does that the rules below judge (the forward-compatibility libraries)."""
    if key == "LD_LIBRARY_PATH" and re.search(r"cuda[^:]*/compat", value):
        path = next(p for p in value.split(":") if "/compat" in p)
        st.events.append(Event("compat-libs", line, path))


_NEWEST: dict[int, Version | None] = {}


def _newest_torch(m: Matrix) -> Version | None:
    key = id(m.torch)
    if key not in _NEWEST:
        _NEWEST.clear()
        _NEWEST[key] = max((r.version for r in m.torch if not r.version.is_prerelease), default=None)
    return _NEWEST[key]


def check_rules(st: Stage, m: Matrix, opts: Options) -> Iterator[Finding | Skip]:
    if not st.events:
        return
    yield from aptkey.check(st, m)
    yield from buildiso.check(st)
    newest = _newest_torch(m)
    url_event: Event | None = None
    for ev in st.events:
        if ev.kind == "companion":
            yield from _companion(st, ev, newest)
        elif ev.kind == "flash-attn-wheel":
            yield from flash_attn_wheel(st, ev, m)
        elif ev.kind == "get-pip-url":
            url_event = ev
        elif ev.kind == "get-pip-run" and url_event is not None and url_event.version is None and ev.version:
            try:
                py = Version(ev.version)
            except InvalidVersion:
                continue
            if py < GET_PIP_MIN_PYTHON:
                mm = f"{py.release[0]}.{py.release[1]}"
                yield Finding(
                    GET_PIP,
                    "error",
                    f"get-pip.py without a version on Python {mm}",
                    f"Line {url_event.line} fetches {url_event.what}, which installs the newest pip; it needs "
                    f"Python ≥ {GET_PIP_MIN_PYTHON} (pip 25.1 dropped 3.8) and line {ev.line} runs it with "
                    f"Python {mm}{ev.in_branch}: it stops with 'This version of pip does not support python {mm}'.",
                    (
                        Fix(
                            "Fetch the get-pip.py for that Python",
                            f"https://bootstrap.pypa.io/pip/{mm}/get-pip.py",
                        ),
                    ),
                    {"python": mm, "stage": st.label},
                    group="dockerfile",
                    line=url_event.line,
                )
        elif ev.kind == "compat-libs":
            yield from _compat_libs(st, ev, m, opts)
        elif ev.kind == "needs-cudnn" and st.cudnn_major == 0 and st.cudnn is None:
            yield Finding(
                NO_CUDNN,
                "error",
                f"{ev.what} needs cuDNN, and {st.base} has none",
                f"Line {ev.line} installs {ev.what}{ev.in_branch}; Transformer Engine builds and loads against cuDNN "
                "(https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/installation.html), but "
                f"the base image {st.base} carries no cuDNN.",
                (
                    Fix(
                        "Use a -cudnn image",
                        f"FROM {st.base.replace('-devel', '-cudnn-devel').replace('-runtime', '-cudnn-runtime')}",
                    ),
                ),
                {"package": ev.what, "stage": st.label},
                group="dockerfile",
                line=ev.line,
            )


def _companion(st: Stage, ev: Event, newest: Version | None) -> Iterator[Finding]:
    torch = public_version(ev.torch)
    if torch is None:
        return
    if ev.version is not None and ev.what == "xformers":
        yield from _xformers_pin(st, ev, torch)
        return
    if ev.version is not None:
        want = companion_for(torch, ev.what)
        try:
            have = Version(ev.version)
        except InvalidVersion:
            return
        if want is None or (have.release + (0,))[:2] == want:
            return
        how = (
            "in the same pip command: the resolver stops with 'ResolutionImpossible'"
            if ev.same_command_torch
            else f"so pip replaces torch {torch} with the torch that {ev.what} {have} requires"
        )
        yield Finding(
            COMPANION,
            "error",
            f"{ev.what} {have} does not go with torch {torch}",
            f"Line {ev.line} pins {ev.what}=={have}{ev.in_branch}, but torch {torch} pairs with {ev.what} "
            f"{want[0]}.{want[1]} (PyTorch's compatibility tables); {ev.what} requires its own torch exactly, "
            f"{how}.",
            (
                Fix(
                    f"Pin the {ev.what} built for torch {torch}",
                    pin_command(ev.what, f"{want[0]}.{want[1]}.*"),
                ),
            ),
            {"torch": str(torch), ev.what: str(have), "stage": st.label},
            group="dockerfile",
            line=ev.line,
        )
        return
    if ev.same_command_torch or ev.no_deps or newest is None or torch >= newest:
        return
    yield Finding(
        COMPANION,
        "error",
        f"unpinned {ev.what} replaces torch {torch}",
        f"Line {ev.line} installs {ev.what} without a version{ev.in_branch} after torch {torch} is in place: pip takes "
        f"the newest {ev.what}, which requires the newest torch exactly (torch {newest} in the matrix), so it "
        f"uninstalls torch {torch} and installs that one, with the CUDA build PyPI ships instead of the image's.",
        (
            Fix(f"Pin the {ev.what} built for torch {torch}, or install it with torch in one command"),
            Fix("Or keep torch as it is", pin_command(ev.what, "VERSION", no_deps=True)),
        ),
        {"torch": str(torch), "package": ev.what, "stage": st.label},
        group="dockerfile",
        line=ev.line,
    )


def _xformers_pin(st: Stage, ev: Event, torch: Version) -> Iterator[Finding]:
    try:
        have = Version(ev.version or "")
    except InvalidVersion:
        return
    spec = xformers_torch(have)
    if spec is None or ev.no_deps or spec.contains(torch, prereleases=True):
        return
    how = (
        "in the same pip command: the resolver stops with 'ResolutionImpossible'"
        if ev.same_command_torch
        else f"so pip uninstalls torch {torch} and installs torch{spec} from PyPI, with the CUDA build PyPI "
        "ships instead of the image's"
    )
    fits = xformers_for(torch)
    yield Finding(
        COMPANION,
        "error",
        f"xformers {have} does not go with torch {torch}",
        f"Line {ev.line} pins xformers=={have}{ev.in_branch}; its wheels on PyPI require torch{spec} (their "
        f"Requires-Dist), and the stage has torch {torch}, {how}.",
        (
            Fix(f"Pin the xformers built for torch {torch}", pin_command("xformers", fits[0]))
            if fits
            else Fix(f"Pin an xformers release built for torch {torch}"),
            Fix(
                "Or keep torch as it is (xformers' C++ ops may then not load)",
                pin_command("xformers", str(have), no_deps=True),
            ),
        ),
        {"torch": str(torch), "xformers": str(have), "stage": st.label},
        group="dockerfile",
        line=ev.line,
    )


_DATACENTER_ONLY = re.compile(r"geforce|titan|quadro|^rtx|rtx a\d|rtx \d", re.I)


def _compat_libs(st: Stage, ev: Event, m: Matrix, opts: Options) -> Iterator[Finding]:
    gpu = opts.target_gpu
    consumer = bool(gpu) and _DATACENTER_ONLY.search(gpu or "") is not None
    yield Finding(
        COMPAT_LIBS,
        "error" if consumer else "warning",
        f"CUDA forward-compatibility libraries are put on the library path ({ev.what})",
        f"Line {ev.line} makes the loader use {ev.what}{ev.in_branch}: the forward-compatibility libcuda there works "
        "only on data center GPUs (https://docs.nvidia.com/deploy/cuda-compatibility/); on GeForce and "
        "workstation GPUs every CUDA call fails with Error 804 'forward compatibility was attempted on non "
        "supported HW'" + (f", and the target GPU is {gpu}" if consumer else "") + ".",
        (Fix("Drop the compat path (the host driver's libcuda is mounted by the container toolkit)"),),
        {"path": ev.what, "stage": st.label},
        group="dockerfile",
        line=ev.line,
    )
