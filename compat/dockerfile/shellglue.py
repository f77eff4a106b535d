"""A second install command glued onto a pip install by a missing `&&` at the end of a continued line.

`RUN pip install torch \\` followed by `    python3 -m pip install numpy` is one pip command whose arguments include
`python3`, `-m`, `pip` and `install`; pip stops with "no such option: -m". rules.py calls `check` for each pip/uv
install it reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from compat.dockerfile.model import GLUED_COMMAND, Stage
from compat.findings import Finding, Fix

_HEADS = ("python", "python3", "pip", "pip3", "uv")


def check(st: Stage, argv: list[str], reqs: list[str], line: int) -> Iterator[Finding]:
    """One error when the install's arguments hold `<python|pip> … -m … install`, i.e. a glued command."""
    words = [os.path.basename(a) for a in argv]
    try:
        sub = words.index("install")
        at = next(
            i
            for i, w in enumerate(words)
            if i > sub and argv[i] in reqs and (w in _HEADS or w.startswith("python3."))
        )
        end = words.index("install", at + 1)
    except (StopIteration, ValueError):
        return
    if "-m" not in argv[at + 1 : end]:
        return
    glued = " ".join(argv[at : end + 1])
    yield Finding(
        GLUED_COMMAND,
        "error",
        f"`{glued}` is glued onto the pip install before it: a `&&` is missing",
        f"Line {line} runs one pip install whose arguments include `{glued}` and `-m`: a continued line ends with "
        "`\\` but no `&&`, so the next command became arguments of this one, and pip stops with "
        "'no such option: -m'.",
        (Fix("End the package list with `&& \\` before the next command"),),
        {"stage": st.label, "glued": glued},
        group="dockerfile",
        line=line,
    )
