"""The machine at a glance: one (label, value) row per subject, read from a doctor report's JSON document.

Pure: the text doctor's inventory block and the markdown report's summary table both come from `inventory_rows`,
so they agree. Works on a full doctor report (facts, gpus, probes, interpreter) and degrades on a snapshot that
has only facts: a subject with nothing known says "unknown", one known to be absent says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GIB = 1024**3


def gib(n: Any) -> str:
    """Bytes as GiB with one decimal ("79.6 GiB"); "?" when not a number."""
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return "?"
    return f"{n / GIB:.1f} GiB"


def _fact(doc: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    f = (doc.get("facts") or {}).get(name)
    return f if isinstance(f, Mapping) else None


def _raw(doc: Mapping[str, Any], name: str) -> str | None:
    f = _fact(doc, name)
    if f is None or f.get("missing"):
        return None
    raw = f.get("raw")
    return str(raw) if raw is not None else None


def _missing_reason(doc: Mapping[str, Any], name: str) -> str | None:
    f = _fact(doc, name)
    if f is not None and f.get("missing"):
        return str(f.get("reason") or "not found")
    return None


def _sub(m: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    v = m.get(key)
    return v if isinstance(v, Mapping) else {}


def _probe(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    p = (doc.get("probes") or {}).get(name)
    return p if isinstance(p, Mapping) else {}


def _gpus(doc: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    gpus = doc.get("gpus")
    if gpus is None:
        gpus = (doc.get("facts") or {}).get("gpus")
    if gpus is None:
        return None
    return [g for g in gpus if isinstance(g, Mapping)]


def gpu_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    gpus = _gpus(doc)
    if gpus is None:
        return [("GPU", "unknown")]
    if not gpus:
        return [("GPU", "none found")]
    rows = []
    for i, g in enumerate(gpus):
        parts = [str(g.get("name") or "unknown model")]
        if g.get("memory_total") is not None:
            parts.append(gib(g.get("memory_total")))
        cc = g.get("cc")
        if cc:
            parts.append(f"cc {cc}" + (" (from the matrix)" if g.get("cc_source") == "matrix" else ""))
        else:
            parts.append("cc ?")
        mig = g.get("mig_mode")
        if isinstance(mig, Mapping) and mig.get("current"):
            parts.append("MIG on")
        idx = g.get("index", i)
        rows.append((f"GPU {idx if idx is not None else i}", ", ".join(parts)))
    return rows


def _driver(doc: Mapping[str, Any]) -> str:
    drv = _raw(doc, "driver")
    if drv is None:
        return _missing_reason(doc, "driver") or "unknown"
    cu = _raw(doc, "driver_cuda")
    return drv + (f" (supports CUDA ≤ {cu})" if cu else "")


def _toolkits(doc: Mapping[str, Any]) -> str:
    tk = _probe(doc, "toolkits")
    chosen = tk.get("chosen") if isinstance(tk.get("chosen"), Mapping) else None
    installed = _sub(tk, "installed")
    cuda = _raw(doc, "cuda")
    if cuda is None and not installed:
        return _missing_reason(doc, "cuda") or ("none found" if tk else "unknown")
    parts = []
    if cuda:
        where = (chosen or {}).get("path") or (_fact(doc, "cuda") or {}).get("source")
        parts.append(cuda + (f" ({where})" if where else ""))
    others = sorted({str(v) for v in installed.values()} - ({cuda} if cuda else set()))
    if others:
        parts.append("also installed: " + ", ".join(others))
    return "; ".join(parts)


def _cudnn(doc: Mapping[str, Any]) -> str:
    v = _raw(doc, "cudnn")
    if v is not None:
        src = (_fact(doc, "cudnn") or {}).get("source")
        return v + (f" ({src})" if src else "")
    return "none found" if _missing_reason(doc, "cudnn") else "unknown"


def _child(doc: Mapping[str, Any], mode: str) -> Mapping[str, Any]:
    children = _probe(doc, "frameworks").get("children")
    c = children.get(mode) if isinstance(children, Mapping) else None
    r = c.get("result") if isinstance(c, Mapping) else None
    return r if isinstance(r, Mapping) else {}


def _local_cuda(version: str) -> str | None:
    """The CUDA of a PyTorch wheel's local label: 2.1.0+cu121 -> 12.1 (the label names the build)."""
    import re

    m = re.search(r"\+cu(\d{2,3})$", version)
    if m is None:
        return None
    digits = m.group(1)
    return f"{digits[:-1]}.{digits[-1]}"


def framework_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    torch = _raw(doc, "torch")
    if torch:
        res = _child(doc, "torch")
        cu = _raw(doc, "torch_cuda") or res.get("cuda") or _local_cuda(torch)
        dn = _raw(doc, "torch_cudnn") or res.get("cudnn")
        build = _raw(doc, "torch_build")
        bits = [f"CUDA {cu}" if cu else ("CPU-only build" if build == "cpu" else "CUDA build unknown")]
        if dn:
            bits.append(f"cuDNN {dn}")
        if res.get("cuda_available") is not None:
            bits.append("GPU usable" if res.get("cuda_available") else "no GPU usable")
        rows.append(("PyTorch", f"{torch} ({', '.join(bits)})"))
    tf = _raw(doc, "tensorflow")
    if tf:
        cu, dn, build = _raw(doc, "tf_cuda"), _raw(doc, "tf_cudnn"), _raw(doc, "tf_build")
        bits = [f"CUDA {cu}" if cu else ("CPU-only build" if build == "cpu" else "CUDA build unknown")]
        if dn:
            bits.append(f"cuDNN {dn}")
        rows.append(("TensorFlow", f"{tf} ({', '.join(bits)})"))
    jax = _raw(doc, "jax")
    if jax:
        res = _child(doc, "jax")
        backend = res.get("backend")
        rows.append(("JAX", jax + (f" (backend {backend})" if backend else "")))
    if not rows:
        where = (
            (doc.get("interpreter") or {}).get("python")
            if isinstance(doc.get("interpreter"), Mapping)
            else None
        )
        rows.append(("Frameworks", "none installed" + (f" in {where}" if where else "")))
    return rows


def _python(doc: Mapping[str, Any]) -> str:
    v = _raw(doc, "python") or "unknown"
    interp = doc.get("interpreter")
    if isinstance(interp, Mapping) and interp.get("python"):
        return f"{v} ({interp['python']})"
    return v


def resource_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    res = _probe(doc, "resources")
    if not res:
        return []
    rows: list[tuple[str, str]] = []
    mem = _sub(res, "memory")
    if mem:
        rows.append(("RAM", f"{gib(mem.get('total'))} total, {gib(mem.get('available'))} available"))
    cpus = _sub(res, "cpus")
    if cpus:
        count, aff = cpus.get("count"), cpus.get("affinity")
        rows.append(("CPUs", f"{aff} usable of {count}" if aff is not None and aff != count else str(count)))
    shm = _sub(res, "shm")
    if shm:
        rows.append(("/dev/shm", f"{gib(shm.get('total'))} ({gib(shm.get('free'))} free)"))
    disks = res.get("disk")
    for d in disks[:2] if isinstance(disks, list) else []:
        if isinstance(d, Mapping):
            rows.append(("Disk", f"{gib(d.get('free'))} free of {gib(d.get('total'))} at {d.get('path')}"))
    return rows


def _container(doc: Mapping[str, Any]) -> str | None:
    env = _probe(doc, "environment")
    if not env:
        return None
    c = _sub(env, "container")
    parts = []
    if c.get("in_container"):
        signs = c.get("signs") or []
        parts.append("container" + (f" ({', '.join(str(s) for s in signs)})" if signs else ""))
    else:
        parts.append("not in a container")
    parts.append("WSL" if env.get("wsl") else "not WSL")
    return ", ".join(parts)


def inventory_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The inventory, in reading order: GPUs, driver, toolkits, cuDNN, frameworks, Python, OS, resources."""
    rows = gpu_rows(doc)
    rows.append(("Driver", _driver(doc)))
    rows.append(("CUDA toolkit", _toolkits(doc)))
    rows.append(("cuDNN", _cudnn(doc)))
    rows.extend(framework_rows(doc))
    rows.append(("Python", _python(doc)))
    os_name = _raw(doc, "os")
    if os_name:
        rows.append(("OS", os_name))
    rows.extend(resource_rows(doc))
    cont = _container(doc)
    if cont:
        rows.append(("Container/WSL", cont))
    return rows
