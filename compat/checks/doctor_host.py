"""The host: memory, cgroup limits, shared memory, open files, CPU quota, disk, CUDA toolkits and shadowed libraries."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from compat.checks.doctor_common import (
    CUDNN_MULTIPLE,
    DISK_MIN,
    GIB,
    HOST_CGROUP_OOM,
    HOST_CPU_QUOTA,
    HOST_DISK,
    HOST_MEMORY,
    HOST_NOFILE,
    HOST_SHM,
    LIBS_SHADOWED,
    MEMORY_LOW,
    NOFILE_MIN,
    SHM_MIN,
    TOOLKIT_MULTIPLE,
    _env,
    _failed,
    _gib,
    _probe,
)
from compat.checks.registry import check
from compat.findings import Finding, Fix, Skip
from compat.resolver import Ctx, Result


@check(
    "doctor.resources",
    ids=(HOST_CGROUP_OOM, HOST_SHM, HOST_MEMORY, HOST_NOFILE, HOST_CPU_QUOTA, HOST_DISK),
    entry_points=("doctor", "check", "explain"),
)
def check_resources(ctx: Ctx) -> Iterator[Result]:
    r = _probe(ctx, "resources")
    why = _failed(r, "resources")
    if why or r is None:
        for cid in (HOST_SHM, HOST_MEMORY, HOST_CGROUP_OOM, HOST_NOFILE, HOST_DISK):
            yield Skip(cid, why or "no resources probe data")
        return
    env = _env(ctx)
    in_container = bool((env.get("container") or {}).get("in_container"))
    cg = r.get("cgroup") or {}
    kills = cg.get("oom_kills")
    if isinstance(kills, int) and kills > 0:
        yield Finding(
            HOST_CGROUP_OOM,
            "warning",
            f"{kills} process(es) in this cgroup were OOM-killed",
            f"The memory cgroup this process runs in (cgroup v{cg.get('version')}, limit "
            f"{_gib(cg.get('memory_limit')) if cg.get('memory_limit') else 'none'}) counted {kills} OOM kill(s). "
            "A job that vanished with 'Killed' (or a Jupyter 'kernel died') hit this limit.",
            (
                Fix(
                    "Raise the container's memory limit or use less memory (fewer DataLoader workers, smaller batches)",
                    "docker run --memory 32g ...",
                ),
            ),
            {"oom_kills": kills},
            group="resources",
        )
    elif "error" in cg:
        yield Skip(HOST_CGROUP_OOM, str(cg["error"]))
    shm = r.get("shm") or {}
    if isinstance(shm.get("total"), int):
        if shm["total"] < SHM_MIN:
            yield Finding(
                HOST_SHM,
                "warning",
                f"/dev/shm is only {_gib(shm['total'])}",
                f"/dev/shm has {_gib(shm['total'])} ({_gib(shm.get('free'))} free). PyTorch DataLoader workers pass "
                "batches through shared memory; with a small /dev/shm (Docker's default is 64 MiB) they die with "
                "'Bus error' or 'unable to write to file </torch_...>: No space left on device'.",
                (
                    Fix(
                        "Give the container more shared memory",
                        "docker run --shm-size=8g ...  # or --ipc=host",
                    ),
                    Fix("Or load data in the main process", "DataLoader(..., num_workers=0)"),
                ),
                {"shm_total": shm["total"]},
                group="resources",
            )
    else:
        yield Skip(HOST_SHM, f"/dev/shm: {shm.get('error', 'unknown size')}")
    mem = r.get("memory") or {}
    total, avail = mem.get("total"), mem.get("available")
    limit = cg.get("memory_limit")
    if isinstance(total, int) and isinstance(avail, int):
        if avail < MEMORY_LOW or avail < 0.05 * total:
            yield Finding(
                HOST_MEMORY,
                "warning",
                f"Only {_gib(avail)} of {_gib(total)} RAM available",
                f"The host has {_gib(avail)} of {_gib(total)} memory available (swap {_gib(mem.get('swap_free'))} "
                "free). Loading a dataset or starting DataLoader workers may get the job OOM-killed.",
                (Fix("Find what uses the memory", "ps aux --sort=-rss | head"),),
                {"available": avail},
                group="resources",
            )
        if isinstance(limit, int) and limit < total and limit < 8 * GIB:
            yield Finding(
                HOST_MEMORY,
                "warning" if limit < 4 * GIB else "info",
                f"Container memory limit {_gib(limit)} (host has {_gib(total)})",
                f"This {'container' if in_container else 'cgroup'} may use at most {_gib(limit)} although the host has "
                f"{_gib(total)}; past it the kernel kills the job ('Killed').",
                (Fix("Raise the limit", "docker run --memory 32g ..."),),
                {"memory_limit": limit},
                group="resources",
            )
    else:
        yield Skip(HOST_MEMORY, str(mem.get("error", "memory size unknown")))
    nf = r.get("nofile") or {}
    soft = nf.get("soft") if isinstance(nf, Mapping) else None
    if isinstance(soft, int) and soft < NOFILE_MIN:
        yield Finding(
            HOST_NOFILE,
            "warning",
            f"Open-files limit is {soft}",
            f"This process may open only {soft} files (ulimit -n). DataLoader workers sharing tensors through file "
            "descriptors fail with 'Too many open files' or 'received 0 items of ancdata'.",
            (Fix("Raise the limit for the shell that starts training", "ulimit -n 65536"),),
            {"nofile": soft},
            group="resources",
        )
    quota = cg.get("cpu_quota")
    cpus = (r.get("cpus") or {}).get("affinity") or (r.get("cpus") or {}).get("count")
    if isinstance(quota, (int, float)) and isinstance(cpus, int) and quota < cpus:
        yield Finding(
            HOST_CPU_QUOTA,
            "info",
            f"CPU quota: {quota:g} of {cpus} CPUs",
            f"The cgroup CPU quota allows {quota:g} CPUs although {cpus} are visible; os.cpu_count() still says "
            f"{cpus}, so code that sizes worker pools from it oversubscribes.",
            (
                Fix(
                    f"Use at most {max(1, int(quota))} DataLoader workers",
                    f"DataLoader(..., num_workers={max(1, int(quota))})",
                ),
            ),
            {"cpu_quota": quota, "cpus": cpus},
            group="resources",
        )
    for d in r.get("disk") or []:
        free = d.get("free")
        if isinstance(free, int) and free < DISK_MIN:
            yield Finding(
                HOST_DISK,
                "warning",
                f"Only {_gib(free)} free on {d.get('path')}",
                f"The file system of {d.get('path')} has {_gib(free)} free: checkpoints and datasets written there "
                "will fail with 'No space left on device'.",
                (
                    Fix(
                        "Free space or write checkpoints elsewhere",
                        f"df -h {shlex.quote(str(d.get('path')))}",
                    ),
                ),
                {"free": free},
                group="resources",
            )


# ------------------------------------------------------------------ CUDA toolkits, cuDNN, libraries


@check(
    "doctor.toolkits",
    ids=(TOOLKIT_MULTIPLE, LIBS_SHADOWED, CUDNN_MULTIPLE),
    entry_points=("doctor", "check", "explain"),
)
def check_toolkits(ctx: Ctx) -> Iterator[Result]:
    t = _probe(ctx, "toolkits")
    why = _failed(t, "toolkits")
    if why or t is None:
        yield Skip(TOOLKIT_MULTIPLE, why or "no toolkits probe data")
        yield Skip(LIBS_SHADOWED, why or "no toolkits probe data")
    else:
        installed = t.get("installed") or {}
        releases = list(t.get("releases") or [])
        nv = t.get("nvcc") or {}
        homes = t.get("cuda_home") or {}
        if len(releases) > 1:
            home_ver = None
            for tk in t.get("toolkits") or []:
                if homes and tk.get("path") in [h.rstrip("/") for h in homes.values()] and tk.get("version"):
                    home_ver = ".".join(str(tk["version"]).split(".")[:2])
            conflict = bool(nv.get("release") and home_ver and nv["release"] != home_ver)
            where = ", ".join(f"{v} at {p}" for p, v in sorted(installed.items()))
            msg = f"Several CUDA toolkits are installed: {where}."
            if conflict:
                msg += (
                    f" nvcc on PATH is {nv['release']} but CUDA_HOME/CUDA_PATH points to {home_ver}: extensions "
                    "built with torch.utils.cpp_extension use CUDA_HOME, other builds use nvcc on PATH."
                )
            yield Finding(
                TOOLKIT_MULTIPLE,
                "warning" if conflict else "info",
                "nvcc on PATH and CUDA_HOME disagree"
                if conflict
                else f"{len(releases)} CUDA toolkits installed",
                msg + " Pip wheels of PyTorch and TensorFlow bundle their own CUDA runtime and ignore these.",
                (
                    Fix(
                        "Point PATH and CUDA_HOME at the same toolkit (the one nvcc on PATH belongs to)",
                        f"export CUDA_HOME={_toolkit_root(t)} PATH={_toolkit_root(t)}/bin:$PATH",
                    ),
                ),
                {"toolkits": installed},
                group="cuda",
            )
        yield from _shadowed(ctx, t)
    c = _probe(ctx, "cudnn")
    if c is not None and c.get("status") == "ok" and len(c.get("distinct") or []) > 1:
        yield Finding(
            CUDNN_MULTIPLE,
            "warning",
            f"Several system cuDNN versions: {', '.join(c['distinct'])}",
            f"cuDNN {', '.join(c.get('system_versions') or [])} are installed system-wide "
            f"({', '.join(h.get('path', '') for h in (c.get('headers') or [])[:4])}). Which one a program loads depends "
            "on LD_LIBRARY_PATH and the loader cache: a mismatch shows up as 'cuDNN version incompatibility' or "
            "CUDNN_STATUS_NOT_INITIALIZED.",
            (Fix("Remove the copies you do not use, or rely on the frameworks' pip cuDNN"),),
            {"cudnn": c.get("system_versions")},
            group="cuda",
        )


def _shadowed(ctx: Ctx, t: Mapping[str, Any]) -> Iterator[Result]:
    libs = list(t.get("ld_library_path_libs") or [])
    if not libs:
        return
    fw = _probe(ctx, "frameworks") or {}
    dists = fw.get("distributions") or {}
    bundling = sorted(k for k in dists if k.startswith("nvidia-"))
    torch_cuda = ctx.facts.get("torch_build")
    tf = ctx.facts.get("tf_build")
    uses_bundled = (
        bool(bundling)
        or (torch_cuda is not None and torch_cuda.value == "cuda")
        or (tf is not None and tf.value == "cuda")
    )
    if not uses_bundled:
        return
    ld_dirs = sorted({lib["dir"] for lib in libs})
    loaded_from_ld = []
    for mode, child in sorted((fw.get("children") or {}).items()):
        for path in ((child.get("result") or {}).get("libs") or []) if isinstance(child, Mapping) else []:
            if any(os.path.dirname(path).rstrip("/") == d.rstrip("/") for d in ld_dirs):
                loaded_from_ld.append(f"{mode} loaded {path}")
    names = ", ".join(f"{lib['file']} ({lib['dir']})" for lib in libs[:6])
    msg = (
        f"LD_LIBRARY_PATH provides {names}. The framework wheels bring their own copies "
        f"({', '.join(bundling[:6]) or 'bundled in the wheel'}); a library found through LD_LIBRARY_PATH wins over "
        "them and a different version fails with 'undefined symbol', 'cuDNN version incompatibility' or "
        "CUBLAS_STATUS_NOT_INITIALIZED."
    )
    if loaded_from_ld:
        msg += f" The import really picked them up: {'; '.join(loaded_from_ld[:4])}."
    yield Finding(
        LIBS_SHADOWED,
        "error" if loaded_from_ld else "warning",
        "CUDA libraries on LD_LIBRARY_PATH shadow the frameworks' own"
        if loaded_from_ld
        else "LD_LIBRARY_PATH holds CUDA libraries that can shadow the frameworks' own",
        msg,
        (
            Fix(
                "Drop those directories from LD_LIBRARY_PATH for training",
                f"export LD_LIBRARY_PATH={':'.join(d for d in _ld_without(ctx, ld_dirs)) or ''}",
            ),
        ),
        {"ld_library_path": ld_dirs},
        group="cuda",
    )


def _ld_without(ctx: Ctx, drop: list[str]) -> list[str]:
    cur = str((_env(ctx).get("vars") or {}).get("LD_LIBRARY_PATH") or "")
    return [d for d in cur.split(":") if d and d not in drop]


# ------------------------------------------------------------------ frameworks


def _toolkit_root(t: Any) -> str:
    """The toolkit directory to export as CUDA_HOME: the chosen toolkit's root, never the nvcc binary itself
    (issue 13: the fix pointed CUDA_HOME at .../bin/nvcc)."""
    chosen = t.get("chosen") if isinstance(t, dict) else None
    path = str((chosen or {}).get("path") or "/usr/local/cuda").rstrip("/")
    if path.endswith("/bin/nvcc"):
        path = path[: -len("/bin/nvcc")]
    elif path.endswith("/nvcc"):
        path = path[: -len("/nvcc")]
    return path or "/usr/local/cuda"
