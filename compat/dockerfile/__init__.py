"""`compat dockerfile`: check a Dockerfile's GPU stack statically, before `docker build` (no GPU needed)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from compat.errors import InputError
from compat.inputs import read_bytes

if TYPE_CHECKING:
    from compat.findings import Report
    from compat.matrix import Matrix


def read_dockerfile(path: str | Path) -> str:
    """The Dockerfile's text; InputError (one line) when it is missing, a directory, binary or empty."""
    p = Path(path)
    if p.is_dir():
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
    known = [i for i in df.instructions if i.known]
    if not known or known[0].keyword not in ("FROM", "ARG"):
        first = df.instructions[0] if df.instructions else None
        what = f"line {first.line} starts with {first.keyword!r}" if first else "it has no instructions"
        raise InputError(f"{str(p)!r} is not a Dockerfile: {what} (expected FROM)")
    if df.instructions[0].keyword not in ("FROM", "ARG") or not df.instructions[0].known:
        first = df.instructions[0]
        raise InputError(
            f"{str(p)!r} is not a Dockerfile: line {first.line} starts with {first.keyword!r} (expected FROM)"
        )
    ctx = Path(context) if context is not None else (p if p.is_dir() else p.parent)
    if context is not None and not ctx.is_dir():
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


__all__ = ["check_dockerfile", "read_dockerfile"]
