"""CUDA toolkits: `nvcc --version` on PATH, CUDA_HOME/CUDA_PATH, /usr/local/cuda*, and LD_LIBRARY_PATH entries
holding CUDA libraries (libcudart, libcudnn, libcublas, ...) that can shadow the copies a framework bundles."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from compat._proc import which
from compat.probes.host import HostFS, read
from compat.probes.toolcache import version_query

_NVCC_RE = re.compile(r"Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+(?:\.\d+)?)")
_VERSION_TXT_RE = re.compile(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)?)")
_SONAME_RE = re.compile(r"^(lib[A-Za-z_]+?)\.so\.(\d+(?:\.\d+)*)$")

# Libraries a framework wheel bundles (torch's nvidia-* dependencies, tensorflow[and-cuda]).
SHADOW_LIBS = (
    "libcudart",
    "libcudnn",
    "libcublas",
    "libcublasLt",
    "libnccl",
    "libcufft",
    "libcurand",
    "libcusparse",
    "libcusolver",
    "libnvrtc",
    "libnvJitLink",
    "libcupti",
)


def parse_nvcc(text: str) -> dict[str, str] | None:
    """`nvcc --version` -> {"release": "12.4", "build": "12.4.131"}; None when the text is not nvcc's."""
    m = _NVCC_RE.search(text)
    if m is None:
        return None
    return {"release": m.group(1), "build": m.group(2)}


def parse_version_json(text: str) -> str | None:
    """A toolkit's version.json (CUDA >= 11.1): {"cuda": {"version": "12.4.1"}, ...}."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    v = (
        doc.get("cuda", {}).get("version")
        if isinstance(doc, dict) and isinstance(doc.get("cuda"), dict)
        else None
    )
    return v if isinstance(v, str) and re.match(r"^\d+\.\d+(\.\d+)*$", v) else None


def parse_version_txt(text: str) -> str | None:
    """A toolkit's version.txt (CUDA <= 11.0): "CUDA Version 10.2.89"."""
    m = _VERSION_TXT_RE.search(text)
    return m.group(1) if m else None


def soname(filename: str) -> tuple[str, str] | None:
    """libcudnn.so.8.9.7 -> ("libcudnn", "8.9.7"); libcudart.so.12 -> ("libcudart", "12")."""
    m = _SONAME_RE.match(os.path.basename(filename))
    return (m.group(1), m.group(2)) if m else None


def _release(v: str | None) -> str | None:
    if not v:
        return None
    parts = v.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else None


def _toolkit_at(
    fs: HostFS, root: str, timeout: float, environ: Mapping[str, str], cache: bool = True
) -> dict[str, Any]:
    """One toolkit directory: version from version.json, version.txt or its own nvcc."""
    tk: dict[str, Any] = {"path": root, "real_path": fs.realpath(root)}
    vj = read(fs, f"{root}/version.json")
    version = parse_version_json(vj.text) if vj.ok and vj.text else None
    source = "version.json" if version else None
    if version is None:
        vt = read(fs, f"{root}/version.txt")
        version = parse_version_txt(vt.text) if vt.ok and vt.text else None
        source = "version.txt" if version else None
    nvcc = f"{root}/bin/nvcc"
    if version is None and fs.exists(nvcc):
        res = version_query([fs.real(nvcc), "--version"], timeout, environ, cache=cache)
        parsed = parse_nvcc(res.output) if res.ok else None
        if parsed:
            version, source = parsed["release"], "bin/nvcc --version"
    tk["version"] = version
    tk["source"] = source
    return tk


def probe(fs: HostFS, environ: Mapping[str, str], timeout: float = 5.0, cache: bool = True) -> dict[str, Any]:
    """`cache`: remember nvcc's answer for that exact binary (compat.probes.toolcache)."""
    out: dict[str, Any] = {"status": "ok"}
    # nvcc on PATH: what `nvcc` and most build systems use.
    res = version_query(["nvcc", "--version"], timeout, environ, cache=cache)
    nv: dict[str, Any] = {"status": res.status}
    if res.ok:
        parsed = parse_nvcc(res.output)
        nv.update(parsed or {"status": "garbage", "output": res.output[:300]})
        path = which("nvcc", environ)
        nv["path"] = path
        nv["real_path"] = os.path.realpath(path) if path else None
    elif res.status != "not-found":
        nv["error"] = res.describe()
    out["nvcc"] = nv
    out["cuda_home"] = {k: environ.get(k) for k in ("CUDA_HOME", "CUDA_PATH") if environ.get(k)}
    roots: list[str] = []
    for v in out["cuda_home"].values():
        if v not in roots:
            roots.append(v.rstrip("/") or "/")
    for p in fs.glob("/usr/local/cuda*"):
        if fs.is_dir(p) and p not in roots:
            roots.append(p)
    out["toolkits"] = [_toolkit_at(fs, r, timeout, environ, cache) for r in roots]
    # LD_LIBRARY_PATH entries carrying CUDA libraries.
    shadow = []
    for d in (environ.get("LD_LIBRARY_PATH") or "").split(":"):
        if not d:
            continue
        for p in fs.glob(f"{d}/lib*.so.*"):
            s = soname(p)
            if s and s[0] in SHADOW_LIBS:
                shadow.append({"dir": d, "file": os.path.basename(p), "lib": s[0], "version": s[1]})
    out["ld_library_path_libs"] = shadow
    return out


def analyse(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The toolkit the "cuda" fact describes (nvcc on PATH, else CUDA_HOME, else /usr/local/cuda) and all found."""
    found: list[dict[str, Any]] = []
    nv = raw.get("nvcc") or {}
    chosen = None
    if nv.get("release"):
        chosen = {
            "version": nv["release"],
            "source": f"nvcc --version ({nv.get('path') or 'on PATH'})",
            "path": nv.get("real_path"),
        }
    homes = raw.get("cuda_home") or {}
    for tk in raw.get("toolkits") or []:
        if tk.get("version"):
            found.append(tk)
    if chosen is None:
        for key in ("CUDA_HOME", "CUDA_PATH"):
            home = homes.get(key)
            tk = next((t for t in found if t["path"] == (home or "").rstrip("/")), None)
            if tk is not None:
                chosen = {
                    "version": _release(tk["version"]) if tk["source"] != "version.json" else tk["version"],
                    "source": f"{key}={home} ({tk['source']})",
                    "path": tk["real_path"],
                }
                break
    if chosen is None:
        tk = next((t for t in found if t["path"] == "/usr/local/cuda"), None)
        if tk is None and len({t["real_path"] for t in found}) == 1:
            tk = found[0]
        if tk is not None:
            chosen = {
                "version": tk["version"],
                "source": f"{tk['path']}/{tk['source']}",
                "path": tk["real_path"],
            }
    versions: dict[str, str] = {}
    for t in found:
        versions.setdefault(t["real_path"], t["version"])
    if nv.get("release") and nv.get("real_path"):
        nvroot = os.path.dirname(os.path.dirname(nv["real_path"]))
        versions.setdefault(nvroot, nv["release"])
    return {
        "chosen": chosen,
        "installed": versions,
        "releases": sorted(
            {_release(v) or v for v in versions.values()}, key=lambda s: [int(x) for x in s.split(".")]
        ),
    }
