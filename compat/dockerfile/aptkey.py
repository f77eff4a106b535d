"""NVIDIA's CUDA apt repository key rotation (2022-04-27) and the base images that still trust only the old key.

Images built before the rotation and never rebuilt list NVIDIA's CUDA repository under /etc/apt/sources.list.d
signed for the old key (7fa2af80); `apt-get update` in them stops with NO_PUBKEY A4B469963BF863CC until the new
key (3bf863cc, or the cuda-keyring package) is installed or the lists are removed. Which images: the
`stale_apt_key` rows of matrix/images.yaml, each with its evidence. `note` notes apt updates and key fixes as
a RUN runs; `check` judges them (rules.py calls both).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from packaging.version import InvalidVersion, Version

from compat.dockerfile.images import parse_ref
from compat.dockerfile.model import APT_KEY, Event, Stage
from compat.findings import Finding, Fix
from compat.matrix import Matrix

_NEW_KEY = re.compile(r"3bf863cc|cuda-keyring")
_NVIDIA_LISTS = re.compile(r"sources\.list\.d/(?:\*|cuda[^/\s]*|nvidia-ml[^/\s]*)$")
_INSECURE = re.compile(
    r"AllowInsecureRepositories|AllowUnauthenticated|allow-insecure-repositories|allow-unauth"
)


def note(st: Stage, argv: list[str], line: int, branch: str | None) -> None:
    """Note an `apt-get update` or a step that makes NVIDIA's new key trusted (or drops its lists)."""
    head = os.path.basename(argv[0])
    words = argv[1:]
    if head in ("apt-get", "apt", "aptitude") and "update" in words:
        insecure = any(_INSECURE.search(w) for w in words)
        st.events.append(
            Event("apt-update", line, f"{head} update", "insecure" if insecure else None, branch=branch)
        )
    elif any(_NEW_KEY.search(w) for w in words) or (
        head in ("rm", "mv") and any(_NVIDIA_LISTS.search(w) for w in words)
    ):
        st.events.append(Event("apt-key-fix", line, " ".join(argv)[:120], branch=branch))


def stale_row(m: Matrix, st: Stage) -> Mapping[str, Any] | None:
    """The images.yaml `stale_apt_key` row the stage's base matches, if any."""
    doc = m.raw.get("images.yaml")
    rows = doc.get("stale_apt_key") if isinstance(doc, Mapping) else None
    stack = st.stack
    repo = parse_ref(stack.image).repository
    for row in rows or ():
        if not isinstance(row, Mapping) or row.get("image") != repo:
            continue
        if row.get("flavour") and row.get("flavour") != stack.flavour:
            continue
        below = row.get("torch_below")
        if below is not None:
            try:
                if stack.torch is None or Version(stack.torch) >= Version(str(below)):
                    continue
            except InvalidVersion:
                continue
        return row
    return None


def check(st: Stage, m: Matrix) -> Iterator[Finding]:
    """One error for the stage's first `apt-get update` that runs before any key fix, on a stale base."""
    fixed_before: int | None = None
    for ev in st.events:
        if ev.kind == "apt-key-fix" and fixed_before is None:
            fixed_before = ev.line
        if ev.kind != "apt-update" or ev.line < st.line or ev.version == "insecure":
            continue
        if fixed_before is not None and fixed_before <= ev.line:
            return
        row = stale_row(m, st)
        if row is None:
            return
        where = f" (in {ev.branch})" if ev.branch else ""
        yield Finding(
            APT_KEY,
            "error",
            f"apt-get update fails: {st.base} trusts only NVIDIA's old apt key",
            f"{st.base} was built before NVIDIA rotated the signing key of its CUDA apt repositories on "
            f"2022-04-27 ({row.get('source')}) and lists that repository in /etc/apt/sources.list.d; line "
            f"{ev.line} runs {ev.what}{where} before the new key is installed, and it stops with "
            "'NO_PUBKEY A4B469963BF863CC' ('The repository … is not signed'). Evidence: "
            f"{row.get('evidence')}.",
            (
                Fix(
                    "Drop NVIDIA's stale apt lists before apt-get update (when nothing is installed from them)",
                    "RUN rm -f /etc/apt/sources.list.d/cuda.list /etc/apt/sources.list.d/nvidia-ml.list",
                ),
                Fix(
                    "Or trust NVIDIA's new key (use the image's distribution in the URL, e.g. ubuntu1804)",
                    "RUN apt-key adv --fetch-keys "
                    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64/3bf863cc.pub",
                ),
            ),
            {"image": st.base, "stage": st.label},
            group="dockerfile",
            line=ev.line,
        )
        return
