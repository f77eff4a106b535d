"""The host: memory, cgroup limits, shared memory, open files, CPU quota, disk, CUDA toolkits and shadowed libraries."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator

from compat.checks.context import Ctx, Result
from compat.checks.doctor_common import GIB, environment, gib
from compat.checks.registry import check
from compat.findings import Finding, Fix, Skip
from compat.probes.model import Cudnn, Frameworks, Resources, Toolkits

# Stable check ids. Never renumber or rename.
HOST_CGROUP_OOM = "host.cgroup-oom"
HOST_SHM = "host.shm"
HOST_MEMORY = "host.memory"
HOST_NOFILE = "host.nofile"
HOST_CPU_QUOTA = "host.cpu-quota"
HOST_DISK = "host.disk"
TOOLKIT_MULTIPLE = "toolkit.multiple"
LIBS_SHADOWED = "libs.shadowed"
CUDNN_MULTIPLE = "cudnn.multiple"

SHM_MIN = 1 * GIB  # Docker's default is 64 MiB; DataLoader workers pass batches through /dev/shm.
NOFILE_MIN = 1024
DISK_MIN = 2 * GIB
MEMORY_LOW = 2 * GIB


@check(
    "doctor.resources",
    ids=(HOST_CGROUP_OOM, HOST_SHM, HOST_MEMORY, HOST_NOFILE, HOST_CPU_QUOTA, HOST_DISK),
    entry_points=("doctor", "check", "explain"),
)
def check_resources(ctx: Ctx) -> Iterator[Result]:
    r = ctx.probes.resources
    if not isinstance(r, Resources):
        why = f"resources probe: {r.reason}" if r is not None else "no resources probe data"
        for cid in (HOST_SHM, HOST_MEMORY, HOST_CGROUP_OOM, HOST_NOFILE, HOST_DISK):
            yield Skip(cid, why)
        return
    in_container = bool(environment(ctx).container.in_container)
    cg = r.cgroup
    kills = cg.oom_kills
    if kills is not None and kills > 0:
        yield Finding(
            HOST_CGROUP_OOM,
            "warning",
            f"{kills} process(es) in this cgroup were OOM-killed",
            f"The memory cgroup this process runs in (cgroup v{cg.version}, limit "
            f"{gib(cg.memory_limit) if cg.memory_limit else 'none'}) counted {kills} OOM kill(s). "
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
    elif cg.error is not None or "error" in cg.extra:
        yield Skip(HOST_CGROUP_OOM, str(cg.error if cg.error is not None else cg.extra["error"]))
    shm = r.shm
    if shm.total is not None:
        if shm.total < SHM_MIN:
            yield Finding(
                HOST_SHM,
                "warning",
                f"/dev/shm is only {gib(shm.total)}",
                f"/dev/shm has {gib(shm.total)} ({gib(shm.free)} free). PyTorch DataLoader workers pass "
                "batches through shared memory; with a small /dev/shm (Docker's default is 64 MiB) they die with "
                "'Bus error' or 'unable to write to file </torch_...>: No space left on device'.",
                (
                    Fix(
                        "Give the container more shared memory",
                        "docker run --shm-size=8g ...  # or --ipc=host",
                    ),
                    Fix("Or load data in the main process", "DataLoader(..., num_workers=0)", "python"),
                ),
                {"shm_total": shm.total},
                group="resources",
            )
    else:
        yield Skip(HOST_SHM, f"/dev/shm: {shm.error if shm.error is not None else 'unknown size'}")
    mem = r.memory
    total, avail = mem.total, mem.available
    limit = cg.memory_limit
    if total is not None and avail is not None:
        if avail < MEMORY_LOW or avail < 0.05 * total:
            yield Finding(
                HOST_MEMORY,
                "warning",
                f"Only {gib(avail)} of {gib(total)} RAM available",
                f"The host has {gib(avail)} of {gib(total)} memory available (swap {gib(mem.swap_free)} "
                "free). Loading a dataset or starting DataLoader workers may get the job OOM-killed.",
                (Fix("Find what uses the memory", "ps aux --sort=-rss | head"),),
                {"available": avail},
                group="resources",
            )
        if limit is not None and limit < total and limit < 8 * GIB:
            yield Finding(
                HOST_MEMORY,
                "warning" if limit < 4 * GIB else "info",
                f"Container memory limit {gib(limit)} (host has {gib(total)})",
                f"This {'container' if in_container else 'cgroup'} may use at most {gib(limit)} although the host has "
                f"{gib(total)}; past it the kernel kills the job ('Killed').",
                (Fix("Raise the limit", "docker run --memory 32g ..."),),
                {"memory_limit": limit},
                group="resources",
            )
    else:
        yield Skip(HOST_MEMORY, str(mem.error if mem.error is not None else "memory size unknown"))
    soft = r.nofile.soft
    if soft is not None and soft < NOFILE_MIN:
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
    quota = cg.cpu_quota
    cpus = r.cpus.affinity or r.cpus.count
    if quota is not None and cpus is not None and quota < cpus:
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
                    "python",
                ),
            ),
            {"cpu_quota": quota, "cpus": cpus},
            group="resources",
        )
    for d in r.disk:
        free = d.free
        if free is not None and free < DISK_MIN:
            yield Finding(
                HOST_DISK,
                "warning",
                f"Only {gib(free)} free on {d.path}",
                f"The file system of {d.path} has {gib(free)} free: checkpoints and datasets written there "
                "will fail with 'No space left on device'.",
                (
                    Fix(
                        "Free space or write checkpoints elsewhere",
                        f"df -h {shlex.quote(str(d.path))}",
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
    t = ctx.probes.toolkits
    if not isinstance(t, Toolkits):
        why = f"toolkits probe: {t.reason}" if t is not None else "no toolkits probe data"
        yield Skip(TOOLKIT_MULTIPLE, why)
        yield Skip(LIBS_SHADOWED, why)
    else:
        installed = t.installed
        releases = list(t.releases)
        nv = t.nvcc
        homes = t.cuda_home
        if len(releases) > 1:
            home_ver = None
            for tk in t.toolkits:
                if homes and tk.path in [h.rstrip("/") for h in homes.values()] and tk.version:
                    home_ver = ".".join(tk.version.split(".")[:2])
            conflict = bool(nv.release and home_ver and nv.release != home_ver)
            where = ", ".join(f"{v} at {p}" for p, v in sorted(installed.items()))
            msg = f"Several CUDA toolkits are installed: {where}."
            if conflict:
                msg += (
                    f" nvcc on PATH is {nv.release} but CUDA_HOME/CUDA_PATH points to {home_ver}: extensions "
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
                {"toolkits": dict(installed)},
                group="cuda",
            )
        yield from _shadowed(ctx, t)
    c = ctx.probes.cudnn
    if isinstance(c, Cudnn) and c.status == "ok" and len(c.distinct) > 1:
        yield Finding(
            CUDNN_MULTIPLE,
            "warning",
            f"Several system cuDNN versions: {', '.join(c.distinct)}",
            f"cuDNN {', '.join(c.system_versions)} are installed system-wide "
            f"({', '.join(h.path or '' for h in c.headers[:4])}). Which one a program loads depends "
            "on LD_LIBRARY_PATH and the loader cache: a mismatch shows up as 'cuDNN version incompatibility' or "
            "CUDNN_STATUS_NOT_INITIALIZED.",
            (Fix("Remove the copies you do not use, or rely on the frameworks' pip cuDNN"),),
            {"cudnn": list(c.system_versions)},
            group="cuda",
        )


def _shadowed(ctx: Ctx, t: Toolkits) -> Iterator[Result]:
    libs = [lib for lib in t.ld_library_path_libs if lib.dir is not None]
    if not libs:
        return
    fw = ctx.probes.frameworks if isinstance(ctx.probes.frameworks, Frameworks) else Frameworks()
    dists = fw.distributions
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
    ld_dirs = sorted({str(lib.dir) for lib in libs})
    loaded_from_ld = []
    for mode, child in sorted(fw.children.items()):
        for path in child.result.libs if child.result is not None else ():
            if any(os.path.dirname(path).rstrip("/") == d.rstrip("/") for d in ld_dirs):
                loaded_from_ld.append(f"{mode} loaded {path}")
    names = ", ".join(f"{lib.file} ({lib.dir})" for lib in libs[:6])
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
    cur = str(environment(ctx).vars.get("LD_LIBRARY_PATH") or "")
    return [d for d in cur.split(":") if d and d not in drop]


# ------------------------------------------------------------------ frameworks


def _toolkit_root(t: Toolkits) -> str:
    """The toolkit directory to export as CUDA_HOME: the chosen toolkit's root, never the nvcc binary itself
    (issue 13: the fix pointed CUDA_HOME at .../bin/nvcc)."""
    path = str((t.chosen.path if t.chosen is not None else None) or "/usr/local/cuda").rstrip("/")
    if path.endswith("/bin/nvcc"):
        path = path[: -len("/bin/nvcc")]
    elif path.endswith("/nvcc"):
        path = path[: -len("/nvcc")]
    return path or "/usr/local/cuda"
