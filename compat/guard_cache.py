"""compat.guard()'s cache: the cheap facts its key covers (the import path, the driver, the matrix files, the
overrides, the frameworks already imported), the key, and the verdict's entries in compat's one cache.

On the guard's warm path: standard library only (no typing, dataclasses, pathlib, re or hashlib), and never
imports a framework.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # not `from typing import ...`: importing typing costs milliseconds on the warm path

if TYPE_CHECKING:
    from typing import Any, Optional

    from compat.findings import Finding

CACHE_ENV = "COMPAT_CACHE_DIR"
CACHE_FORMAT = 4
"""The guard's entries in compat's one cache (compat.cache: magic, CRC-32, marshal payload)."""


def _finding_from_json(d: Mapping[str, Any]) -> Finding:
    from compat.findings import Finding, Fix

    return Finding(
        str(d["id"]),
        str(d["severity"]),
        str(d["title"]),
        str(d["message"]),
        tuple(Fix(str(f["text"]), f.get("command")) for f in d.get("fixes", [])),
        dict(d.get("facts") or {}),
        str(d.get("group") or "stack"),
    )


Tagged = tuple["Finding", tuple[str, ...]]
"""A finding and the frameworks it is about (for guard(frameworks=...))."""


# ------------------------------------------------------------------ cheap facts


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096)
    except OSError:
        return ""


def cache_dir(environ: Mapping[str, str]) -> str:
    """compat's one cache directory (compat.cache.cache_dir)."""
    from compat.cache import cache_dir as _cache_dir

    return _cache_dir(environ)


def _site_state() -> list[tuple[str, int]]:
    """Modification times of the import path's directories: installing or removing a package changes them."""
    out = []
    for entry in sys.path:
        if not entry:
            continue
        try:
            out.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            continue
    return out


def imported_frameworks() -> dict[str, dict[str, Any]]:
    """Facts about frameworks that are already imported (never imports one)."""
    out: dict[str, dict[str, Any]] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        info: dict[str, Any] = {"version": getattr(torch, "__version__", None)}
        ver = getattr(torch, "version", None)
        info["cuda"] = getattr(ver, "cuda", None)
        cuda = getattr(torch, "cuda", None)
        try:
            info["cuda_initialized"] = bool(cuda.is_initialized()) if cuda is not None else False
        except Exception:
            info["cuda_initialized"] = False
        out["torch"] = info
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        out["tensorflow"] = {"version": getattr(tf, "__version__", None)}
    return out


def matrix_dir(environ: Mapping[str, str]) -> str:
    # Mirrors compat.matrix.resolve_matrix_dir without importing it (the warm path must stay cheap).
    if environ.get("COMPAT_MATRIX_DIR"):
        return environ["COMPAT_MATRIX_DIR"]
    here = os.path.dirname(os.path.realpath(__file__))
    shipped = os.path.join(here, "_matrix")
    return shipped if os.path.isdir(shipped) else os.path.join(os.path.dirname(here), "matrix")


def _matrix_state(environ: Mapping[str, str]) -> list[Any]:
    from compat.about import __version__

    d = matrix_dir(environ)
    files = []
    try:
        with os.scandir(d) as it:
            for e in sorted(it, key=lambda e: e.name):
                if e.name.endswith(".yaml"):
                    st = e.stat()
                    files.append((e.name, st.st_mtime_ns, st.st_size))
    except OSError:
        pass
    return [__version__, d, files]


OVERRIDE_PREFIX = "COMPAT_OVERRIDE_"  # compat.facts.OVERRIDE_PREFIX, not imported on the warm path


def cache_key(environ: Mapping[str, str], options: Mapping[str, Any]) -> str:
    parts = {
        "format": CACHE_FORMAT,
        "python": sys.version,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "site": _site_state(),
        "driver": _read("/proc/driver/nvidia/version"),
        "matrix": _matrix_state(environ),
        "overrides": sorted(
            (k, v) for k, v in environ.items() if k.startswith(OVERRIDE_PREFIX) or k == "COMPAT_MATRIX_DIR"
        ),
        "visible": environ.get("CUDA_VISIBLE_DEVICES"),
        "imported": sorted(
            (k, str(v.get("version")), str(v.get("cuda"))) for k, v in imported_frameworks().items()
        ),
        "options": sorted(options.items()),
    }
    blob = repr(sorted(parts.items())).encode()
    return f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}{len(blob):x}"


def load_cache(path: str) -> Optional[list[Tagged]]:
    from compat.cache import load

    doc = load(path, CACHE_FORMAT)
    if doc is None:
        return None
    try:
        return [(_finding_from_json(d["finding"]), tuple(d["frameworks"])) for d in doc["findings"]]
    except (KeyError, TypeError, IndexError, AttributeError, ValueError):
        return None  # a damaged cache is ignored, never fatal


def store_cache(path: str, findings: Sequence[Tagged]) -> None:
    from compat.cache import store

    doc = {"findings": [{"finding": f.to_json(), "frameworks": list(fw)} for f, fw in findings]}
    store(path, CACHE_FORMAT, doc)
