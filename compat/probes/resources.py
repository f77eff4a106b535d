"""Host resources a training job runs out of: RAM and swap (/proc/meminfo), the cgroup memory limit and its
OOM-kill count (v1 and v2), /dev/shm (DataLoader workers), the open-files limit, the CPU quota and free disk."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from compat._proc import os_error_text
from compat.probes.host import HostFS, read

# cgroup v1 reports "no limit" as a huge page-aligned number (PAGE_COUNTER_MAX * page size).
_V1_UNLIMITED = 1 << 62


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo -> bytes for each "Key:  N kB" line."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if not parts or not parts[0].isdigit():
            continue
        n = int(parts[0])
        out[key.strip()] = n * 1024 if len(parts) > 1 and parts[1].lower() == "kb" else n
    return out


def parse_proc_cgroup(text: str) -> dict[str, Any]:
    """/proc/self/cgroup -> {"v2": path or None, "v1": {controller: path}}."""
    v1: dict[str, str] = {}
    v2 = None
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        hid, ctrls, path = parts
        if hid == "0" and ctrls == "":
            v2 = path
        else:
            for c in ctrls.split(","):
                if c:
                    v1[c] = path
    return {"v2": v2, "v1": v1}


def parse_limit(text: str) -> int | None:
    """memory.max ("max" or bytes) or memory.limit_in_bytes; None means no limit."""
    t = text.strip()
    if not t or t == "max":
        return None
    try:
        n = int(t)
    except ValueError:
        return None
    return None if n >= _V1_UNLIMITED or n < 0 else n


def parse_kv(text: str) -> dict[str, int]:
    """memory.events (v2) or memory.oom_control (v1): "key N" lines."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def parse_cpu_max(text: str) -> float | None:
    """cpu.max "200000 100000" -> 2.0 CPUs; "max 100000" -> None (no quota)."""
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def parse_cfs(quota: str, period: str) -> float | None:
    """cgroup v1 cpu.cfs_quota_us (-1: none) / cpu.cfs_period_us."""
    try:
        q, p = int(quota.strip()), int(period.strip())
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def _ancestors(path: str) -> list[str]:
    """'/a/b' -> ['/a/b', '/a', '/']: a limit set on a parent applies to its children."""
    out = []
    p = path.rstrip("/") or "/"
    while True:
        out.append(p)
        if p == "/":
            return out
        p = os.path.dirname(p) or "/"


def _cgroup_dirs(fs: HostFS, mount: str, path: str | None) -> list[str]:
    """Existing directories for `path` and its ancestors under `mount`; in a container with its own cgroup
    namespace the host path does not exist and the mount's root is the container's own cgroup."""
    dirs = []
    if path:
        for a in _ancestors(path):
            d = mount if a == "/" else f"{mount}{a}"
            if fs.is_dir(d):
                dirs.append(d)
    if mount not in dirs and fs.is_dir(mount):
        dirs.append(mount)
    return dirs


def _cgroup(fs: HostFS) -> dict[str, Any]:
    pc = read(fs, "/proc/self/cgroup")
    if not pc.ok:
        return {"error": f"/proc/self/cgroup: {pc.error}"}
    cg = parse_proc_cgroup(pc.text or "")
    out: dict[str, Any] = {"version": None, "memory_limit": None, "oom_kills": None, "cpu_quota": None}
    mem_v1 = cg["v1"].get("memory")
    if mem_v1 is not None and fs.is_dir("/sys/fs/cgroup/memory"):
        out["version"] = 1
        limits: list[int] = []
        kills = None
        for i, d in enumerate(_cgroup_dirs(fs, "/sys/fs/cgroup/memory", mem_v1)):
            lim = read(fs, f"{d}/memory.limit_in_bytes", 256)
            v1_limit = parse_limit(lim.text or "") if lim.ok else None
            if v1_limit is not None:
                limits.append(v1_limit)
            if i == 0:
                oc = read(fs, f"{d}/memory.oom_control", 4096)
                if oc.ok:
                    kills = parse_kv(oc.text or "").get("oom_kill")
        out["memory_limit"] = min(limits, default=None)
        out["oom_kills"] = kills
        cpu = cg["v1"].get("cpu") or cg["v1"].get("cpuacct")
        for d in _cgroup_dirs(fs, "/sys/fs/cgroup/cpu", cpu):
            q = read(fs, f"{d}/cpu.cfs_quota_us", 64)
            p = read(fs, f"{d}/cpu.cfs_period_us", 64)
            if q.ok and p.ok:
                quota = parse_cfs(q.text or "", p.text or "")
                if quota is not None:
                    out["cpu_quota"] = quota if out["cpu_quota"] is None else min(out["cpu_quota"], quota)
    elif cg["v2"] is not None and fs.exists("/sys/fs/cgroup/cgroup.controllers"):
        out["version"] = 2
        limits2: list[int] = []
        quotas: list[float] = []
        dirs = _cgroup_dirs(fs, "/sys/fs/cgroup", cg["v2"])
        for i, d in enumerate(dirs):
            mx = read(fs, f"{d}/memory.max", 256)
            if mx.ok:
                v = parse_limit(mx.text or "")
                if v is not None:
                    limits2.append(v)
            cm = read(fs, f"{d}/cpu.max", 256)
            if cm.ok:
                cq = parse_cpu_max(cm.text or "")
                if cq is not None:
                    quotas.append(cq)
            if i == 0:
                ev = read(fs, f"{d}/memory.events", 4096)
                if ev.ok:
                    out["oom_kills"] = parse_kv(ev.text or "").get("oom_kill")
        out["memory_limit"] = min(limits2, default=None)
        out["cpu_quota"] = min(quotas, default=None)
    return out


def _statvfs(fs: HostFS, path: str) -> dict[str, Any]:
    try:
        st = fs.statvfs(path)
    except OSError as exc:
        return {"path": path, "error": exc.strerror or str(exc)}
    return {"path": path, "total": st.f_frsize * st.f_blocks, "free": st.f_frsize * st.f_bavail}


def probe(fs: HostFS, environ: Mapping[str, str], cwd: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "ok"}
    mi = read(fs, "/proc/meminfo")
    if mi.ok:
        m = parse_meminfo(mi.text or "")
        out["memory"] = {
            "total": m.get("MemTotal"),
            "available": m.get("MemAvailable"),
            "swap_total": m.get("SwapTotal"),
            "swap_free": m.get("SwapFree"),
        }
    else:
        out["memory"] = {"error": f"/proc/meminfo: {mi.error}"}
    out["cgroup"] = _cgroup(fs)
    out["shm"] = (
        _statvfs(fs, "/dev/shm") if fs.is_dir("/dev/shm") else {"path": "/dev/shm", "error": "absent"}
    )
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        out["nofile"] = {
            "soft": None if soft == resource.RLIM_INFINITY else soft,
            "hard": None if hard == resource.RLIM_INFINITY else hard,
        }
    except (ImportError, OSError, ValueError):  # pragma: no cover - Windows
        out["nofile"] = None
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - macOS
        affinity = None
    out["cpus"] = {"count": os.cpu_count(), "affinity": affinity}
    try:
        here = cwd or os.getcwd()
    except OSError as exc:  # the working directory was deleted under us
        out["disk"] = [{"path": ".", "error": os_error_text(exc)}]
    else:
        out["disk"] = [_statvfs(fs, here)]
    return out
