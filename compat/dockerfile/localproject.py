"""`pip install .[extra,…]`: the requirements a local project in the build context declares."""

from __future__ import annotations

import configparser
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compat.errors import InputError

_LOCAL_RE = re.compile(r"^(\.{1,2}(?:/[^\[\s]*)?|/[^\[\s]+)(?:\[([^\]]*)\])?$")
MAX_BYTES = 1024 * 1024


def parse_local(spec: str) -> tuple[str, tuple[str, ...]] | None:
    """('.', ('cu121', 'extras')) for `.[cu121,extras]`; None when `spec` is not a local path."""
    m = _LOCAL_RE.match(spec.strip().strip("'\""))
    if m is None:
        return None
    extras = tuple(e.strip().lower() for e in (m.group(2) or "").split(",") if e.strip())
    return m.group(1), extras


def _read(path: Path) -> str:
    """The file through the one capped reader (a FIFO, device or huge file is refused, never read to the end)."""
    from compat.inputs import read_text

    return read_text(str(path), "project file", MAX_BYTES)


def _from_pyproject(path: Path, extras: tuple[str, ...]) -> list[tuple[str, str]] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib  # a dependency below 3.11

    try:
        doc: Any = tomllib.loads(_read(path))
    except (tomllib.TOMLDecodeError, InputError, RecursionError):
        return None
    proj = doc.get("project") if isinstance(doc, dict) else None
    if not isinstance(proj, dict):
        return None
    out = [(str(r), "pyproject.toml") for r in proj.get("dependencies") or [] if isinstance(r, str)]
    opt = proj.get("optional-dependencies") or {}
    for e in extras:
        for r in opt.get(e, []) if isinstance(opt, dict) else []:
            if isinstance(r, str):
                out.append((r, f"pyproject.toml [{e}]"))
    return out


def _from_setup_cfg(path: Path, extras: tuple[str, ...]) -> list[tuple[str, str]] | None:
    cp = configparser.ConfigParser(interpolation=None)
    try:
        cp.read_string(_read(path))
    except (configparser.Error, InputError):
        return None
    out: list[tuple[str, str]] = []
    if cp.has_option("options", "install_requires"):
        out += [
            (r.strip(), "setup.cfg") for r in cp.get("options", "install_requires").splitlines() if r.strip()
        ]
    for e in extras:
        if cp.has_option("options.extras_require", e):
            raw = cp.get("options.extras_require", e)
            out += [(r.strip(), f"setup.cfg [{e}]") for r in raw.splitlines() if r.strip()]
    return out


def project_requirements(
    image_dir: str, extras: tuple[str, ...], resolve: Callable[[str], tuple[Path | None, str]]
) -> list[tuple[str, str]]:
    """Requirements of the project at `image_dir` (an image path), read from the build context."""
    base = image_dir.rstrip("/") or "/"
    for name, reader in (("pyproject.toml", _from_pyproject), ("setup.cfg", _from_setup_cfg)):
        local, _ = resolve(f"{base}/{name}" if base != "/" else f"/{name}")
        if local is None or not local.is_file():
            continue
        reqs = reader(local, extras)
        if reqs:
            return reqs
    return []
