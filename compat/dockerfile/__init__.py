"""`compat dockerfile`: check a Dockerfile's GPU stack statically, before `docker build` (no GPU needed)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from compat._text import clip
from compat.errors import InputError
from compat.inputs import read_bytes

if TYPE_CHECKING:
    from compat.dockerfile.parser import Instruction
    from compat.findings import Report
    from compat.matrix import Matrix


def read_dockerfile(path: str | Path) -> str:
    """The Dockerfile's text; InputError (one line) when it is missing, a directory, binary or empty."""
    p = Path(path)
    if _is_dir(p):
        cand = p / "Dockerfile"
        if not cand.is_file():
            raise InputError(f"{str(p)!r} is a directory without a Dockerfile")
        p = cand
    try:
        data = read_bytes(str(p), "Dockerfile")
    except FileNotFoundError:
        raise InputError(f"Dockerfile {str(p)!r} does not exist") from None
    except OSError as exc:
        raise InputError(f"Dockerfile {str(p)!r} cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise InputError(f"{str(p)!r} is a binary file, not a Dockerfile")
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(f"Dockerfile {str(p)!r} is empty")
    return text


def check_dockerfile(
    path: str | Path,
    matrix: Matrix,
    *,
    target_driver: Optional[str] = None,
    target_gpu: Optional[str] = None,
    target_cc: Optional[str] = None,
    build_args: Optional[Mapping[str, str]] = None,
    context: Optional[str | Path] = None,
    today: Optional[_dt.date] = None,
) -> Report:
    """Parse, infer each stage's stack and resolve it: the report `compat dockerfile` prints."""
    from compat.dockerfile.analyze import analyze
    from compat.dockerfile.model import Options
    from compat.dockerfile.parser import parse

    p = Path(path)
    text = read_dockerfile(p)
    df = parse(text, origin=str(p))
    first = df.instructions[0] if df.instructions else None
    if first is None or not first.known or first.keyword not in ("FROM", "ARG"):
        raise InputError(f"{clip(str(p))!r} is not a Dockerfile: {_first_line(first)} (expected FROM)")
    ctx = Path(context) if context is not None else (p if p.is_dir() else p.parent)
    if context is not None and not _is_dir(ctx):
        raise InputError(f"--context {str(ctx)!r} is not a directory")
    opts = Options(
        target_driver=target_driver,
        target_gpu=target_gpu,
        target_cc=target_cc,
        build_args=dict(build_args or {}),
        context=ctx,
        today=today,
    )
    return analyze(df, matrix, opts)


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:  # a name too long: Python 3.11 raises ENAMETOOLONG instead of answering False
        return False


def _first_line(first: Instruction | None) -> str:
    """What the first line is, without its text: a file that is no Dockerfile may hold a secret (issue 32)."""
    if first is None:
        return "it has no instructions"
    if first.known:
        return f"line {first.line} is a {first.keyword} instruction"
    return f"line {first.line} is not a Dockerfile instruction"


__all__ = ["check_dockerfile", "read_dockerfile"]
