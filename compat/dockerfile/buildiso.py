"""CUDA extensions whose setup.py imports torch, built by pip/uv in an isolated build environment (no torch there).

pip and uv build a source distribution in a fresh environment holding only its declared build requirements; a
setup.py that imports torch without declaring it fails there with "No module named 'torch'" however the image's
torch was installed. Only projects with a public report of exactly that failure are listed. `note` notes such an
install as a RUN runs; `check` turns it into an error (rules.py calls both).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from compat.dockerfile.model import BUILD_ISOLATION, Event, Stage
from compat.findings import Finding, Fix
from compat.installcmd import no_isolation_command

# name as pip normalises it (or a source URL pattern) -> the public report of the failure
NEEDS_TORCH_AT_BUILD: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"^flash[-_.]attn(?:[<>=!~ ;\[].*)?$|github\.com/Dao-AILab/flash-attention", re.I),
        "flash-attn",
        "https://github.com/Dao-AILab/flash-attention/issues/1920 (flash_attn 2.8.3 from PyPI), "
        "https://github.com/Dao-AILab/flash-attention/issues/1421; its README installs it with --no-build-isolation",
    ),
    (
        re.compile(r"github\.com/NetEase-FuXi/EETQ", re.I),
        "EETQ",
        "https://github.com/huggingface/peft/commit/070af1d35 (PR #2935: setup.py imports torch)",
    ),
)
_OFF = ("0", "false", "no", "off")


def _isolation_off(argv: list[str], env: Mapping[str, str]) -> bool:
    if any(a == "--no-build-isolation" or a.startswith("--no-build-isolation-package") for a in argv):
        return True
    # pip reads PIP_NO_BUILD_ISOLATION inverted (=0/false turns isolation off); uv reads UV_NO_BUILD_ISOLATION.
    return env.get("PIP_NO_BUILD_ISOLATION", "").lower() in _OFF[:2] or env.get(
        "UV_NO_BUILD_ISOLATION", ""
    ).lower() in ("1", "true", "yes", "on")


def note(
    st: Stage, argv: list[str], reqs: list[str], line: int, branch: str | None, env: Mapping[str, str]
) -> None:
    """Note each listed project that this pip/uv install builds from source with build isolation on."""
    if _isolation_off(argv, {**st.env, **env}):
        return
    for req in dict.fromkeys(reqs):  # 1 MB of one requirement: searched once
        if req.lower().split("?")[0].endswith(".whl"):
            continue  # a prebuilt wheel: nothing is built
        for pat, name, _ in NEEDS_TORCH_AT_BUILD:
            if pat.search(req.strip()):
                st.events.append(Event("build-isolation", line, name, req, branch=branch))
                break


def check(st: Stage) -> Iterator[Finding]:
    for ev in st.events:
        if ev.kind != "build-isolation" or ev.line < st.line:
            continue
        evidence = next(e for _, n, e in NEEDS_TORCH_AT_BUILD if n == ev.what)
        yield Finding(
            BUILD_ISOLATION,
            "error",
            f"{ev.what} is built where torch cannot be imported: add --no-build-isolation",
            f"Line {ev.line}{ev.in_branch} installs {ev.version} from source with pip's default build isolation. Its "
            "setup.py imports torch to build the CUDA extension, and the isolated build environment holds only the "
            "declared build requirements, not the image's torch: the build stops with \"ModuleNotFoundError: No "
            f"module named 'torch'\" ({evidence}).",
            (
                Fix(
                    "Build against the image's torch (install torch, packaging, ninja and wheel first)",
                    no_isolation_command(ev.version or ev.what),
                ),
            ),
            {"package": ev.what, "stage": st.label},
            group="dockerfile",
            line=ev.line,
        )
