"""The host C++ compiler that nvcc and torch.utils.cpp_extension use: `$CXX` or `c++`, its family and version.

Acquire: `CXX --version` and `CXX -dumpfullversion -dumpversion` (what torch.utils.cpp_extension runs), bounded;
parse: pure functions tested on recorded outputs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compat.probes.toolcache import version_query

_VERSION_RE = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,3}){0,2})\s*$")
_CLANG_RE = re.compile(r"clang version (\d{1,3}(?:\.\d{1,3}){0,2})")


def parse_compiler(version_text: str, dump: str) -> dict[str, Any] | None:
    """(`--version` output, `-dumpfullversion -dumpversion` output) -> {"family": "gcc"|"clang", "version"}."""
    first = version_text.strip().splitlines()[0] if version_text.strip() else ""
    if "clang" in version_text.lower():
        m = _CLANG_RE.search(version_text)
        if m is None:
            return None
        return {"family": "clang", "version": m.group(1), "banner": first[:200]}
    if not re.search(r"\b(g\+\+|gcc|c\+\+)\b|GCC|Free Software Foundation", version_text):
        return None
    m = _VERSION_RE.match(dump.strip().splitlines()[0] if dump.strip() else "")
    if m is None:
        return None
    return {"family": "gcc", "version": m.group(1), "banner": first[:200]}


def probe(environ: Mapping[str, str], timeout: float = 5.0, cache: bool = True) -> dict[str, Any]:
    """`cache`: remember the compiler's answers for that exact binary (compat.probes.toolcache)."""
    cxx = (environ.get("CXX") or "").strip() or "c++"
    out: dict[str, Any] = {"status": "ok", "cxx": cxx}
    ver = version_query([cxx, "--version"], timeout, environ, cache=cache)
    out["compiler_status"] = ver.status
    if not ver.ok:
        out["error"] = ver.describe() if ver.status != "not-found" else None
        return out
    dump = version_query([cxx, "-dumpfullversion", "-dumpversion"], timeout, environ, cache=cache)
    parsed = parse_compiler(ver.output, dump.stdout if dump.ok else "")
    if parsed is None:
        out["compiler_status"] = "garbage"
        out["error"] = f"{cxx} --version: unrecognised output"
    else:
        out.update(parsed)
    return out


__all__ = ["parse_compiler", "probe"]
