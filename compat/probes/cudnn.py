"""cuDNN: system copies (headers with CUDNN_MAJOR/MINOR/PATCHLEVEL, libcudnn.so.X.Y.Z files) and the
pip-installed nvidia-cudnn-cu1x distributions that frameworks load."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from compat.probes.host import HostFS, read
from compat.probes.toolkits import soname

INCLUDE_DIRS = (
    "/usr/include",
    "/usr/include/x86_64-linux-gnu",
    "/usr/include/aarch64-linux-gnu",
    "/usr/local/cuda/include",
)
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64")
# cuDNN <= 7 kept the version in cudnn.h; 8 moved it to cudnn_version.h; 9.10 adds cudnn_version_v9.h.
HEADERS = ("cudnn_version.h", "cudnn_version_v*.h", "cudnn.h")
_DEFINE_RE = re.compile(r"^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)\b", re.MULTILINE)
_PIP_RE = re.compile(r"^nvidia-cudnn(?:-cu(\d+))?$")


def parse_header(text: str) -> str | None:
    """The "MAJOR.MINOR.PATCHLEVEL" a cuDNN header defines; None when it defines no CUDNN_MAJOR."""
    found: dict[str, str] = {}
    for m in _DEFINE_RE.finditer(text):
        found.setdefault(m.group(1), m.group(2))
    if "MAJOR" not in found:
        return None
    return ".".join(found.get(k, "0") for k in ("MAJOR", "MINOR", "PATCHLEVEL"))


def pip_cudnn(dists: Mapping[str, str]) -> list[dict[str, Any]]:
    """nvidia-cudnn-cu11/12/13 distributions: [{"dist", "version", "cuda_major"}]."""
    out = []
    for name, ver in sorted(dists.items()):
        m = _PIP_RE.match(name)
        if m:
            out.append({"dist": name, "version": ver, "cuda_major": int(m.group(1)) if m.group(1) else None})
    return out


def probe(fs: HostFS, environ: Mapping[str, str]) -> dict[str, Any]:
    inc = list(INCLUDE_DIRS)
    libdirs = list(LIB_DIRS)
    for p in fs.glob("/usr/local/cuda-*"):
        inc.append(f"{p}/include")
        libdirs.append(f"{p}/lib64")
    for key in ("CUDA_HOME", "CUDA_PATH", "CUDNN_PATH"):
        if environ.get(key):
            inc.append(f"{environ[key].rstrip('/')}/include")
            libdirs.append(f"{environ[key].rstrip('/')}/lib64")
    for d in (environ.get("LD_LIBRARY_PATH") or "").split(":"):
        if d:
            libdirs.append(d)
    headers = []
    seen: set[str] = set()
    for d in dict.fromkeys(inc):
        for pattern in HEADERS:
            for p in fs.glob(f"{d}/{pattern}"):
                real = fs.realpath(p)
                if real in seen:
                    continue
                seen.add(real)
                r = read(fs, p, 1 << 18)
                v = parse_header(r.text) if r.ok and r.text else None
                if v:
                    headers.append({"path": p, "version": v})
    libs = []
    seen = set()
    for d in dict.fromkeys(libdirs):
        for p in fs.glob(f"{d}/libcudnn.so.*"):
            real = fs.realpath(p)
            s = soname(real) or soname(p)
            if s is None or real in seen:
                continue
            seen.add(real)
            libs.append({"path": p, "real_path": real, "version": s[1]})
    return {"status": "ok", "headers": headers, "libraries": libs}


def analyse(raw: Mapping[str, Any], dists: Mapping[str, str]) -> dict[str, Any]:
    """The cuDNN the "cudnn" fact describes: a system copy if any (header first), else the pip one."""
    headers = list(raw.get("headers") or [])
    libs = [lib for lib in raw.get("libraries") or [] if lib["version"].count(".") >= 1]
    pip = pip_cudnn(dists)
    chosen = None
    if headers:
        chosen = {"version": headers[0]["version"], "source": headers[0]["path"]}
    elif libs:
        chosen = {"version": libs[0]["version"], "source": libs[0]["real_path"]}
    elif pip:
        chosen = {"version": pip[0]["version"], "source": f"pip {pip[0]['dist']}"}
    system = sorted({h["version"] for h in headers} | {lib["version"] for lib in libs})
    # Versions that differ beyond the patch level count as different copies.
    majors_minors = sorted({".".join(v.split(".")[:2]) for v in system})
    return {
        "chosen": chosen,
        "system_versions": system,
        "distinct": majors_minors,
        "pip": pip,
        "library_dirs": sorted({os.path.dirname(lib["real_path"]) for lib in libs}),
    }
