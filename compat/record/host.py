"""Host evidence from /proc and the cgroup files: process tree and its RSS, cgroup memory, swap, /dev/shm.

Each reader is a tiny acquire step (one bounded file read) beside a pure parser tested on recorded text.
Every reader returns None (or an empty value) when the file is absent or unreadable: the recorder goes on.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from compat._valueclass import valueclass

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
READ_CAP = 64 * 1024


def read_text(path: str, cap: int = READ_CAP) -> str | None:
    """At most `cap` bytes of a small kernel file, decoded with replacement; None if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(cap).decode("utf-8", "replace")
    except OSError:
        return None


# ---------------------------------------------------------------- processes


def parse_stat(text: str) -> tuple[int, str, str] | None:
    """(ppid, comm, state) from /proc/PID/stat; comm may hold spaces and parentheses."""
    lp, rp = text.find("("), text.rfind(")")
    if lp < 0 or rp < lp:
        return None
    rest = text[rp + 2 :].split()
    if len(rest) < 2:
        return None
    try:
        return int(rest[1]), text[lp + 1 : rp], rest[0]
    except ValueError:
        return None


def parse_stat_exit_code(text: str) -> int | None:
    """The wait status in /proc/PID/stat (field 52, Linux >= 3.5): readable while the process is a zombie."""
    rp = text.rfind(")")
    fields = text[rp + 2 :].split()
    # fields[0] is field 3 (state); field 52 is fields[49]
    if len(fields) < 50:
        return None
    try:
        return int(fields[49])
    except ValueError:
        return None


def parse_statm_rss(text: str, page: int = PAGE) -> int | None:
    parts = text.split()
    if len(parts) < 2:
        return None
    try:
        return int(parts[1]) * page
    except ValueError:
        return None


class ProcessTree:
    """The descendants of one root pid, found cheaply: each sample reads /proc/PID/stat only for pids newer than
    the root (children get higher pids until the pid counter wraps) and the ones already known; a full scan every
    `full_every` samples catches wrap-around."""

    def __init__(self, root: int, proc: str = "/proc", full_every: int = 30) -> None:
        self.root = root
        self.proc = proc
        self.full_every = full_every
        self._n = 0
        self.pids: set[int] = {root}
        self.names: dict[int, str] = {}
        self.ever: set[int] = {root}

    def refresh(self) -> set[int]:
        full = self._n % self.full_every == 0
        self._n += 1
        parents: dict[int, int] = {}
        try:
            entries = os.listdir(self.proc)
        except OSError:
            return self.pids
        for e in entries:
            if not e.isdigit():
                continue
            pid = int(e)
            if not full and pid < self.root and pid not in self.pids:
                continue
            text = read_text(f"{self.proc}/{e}/stat", 4096)
            if text is None:
                continue
            st = parse_stat(text)
            if st is None:
                continue
            parents[pid] = st[0]
            if pid in self.pids or pid == self.root:
                self.names[pid] = st[1]
        self.pids = descendants(self.root, parents)
        self.ever |= self.pids
        for pid in [p for p in self.names if p not in self.ever]:
            del self.names[pid]
        return self.pids

    def rss(self) -> int:
        total = 0
        for pid in self.pids:
            text = read_text(f"{self.proc}/{pid}/statm", 256)
            if text is not None:
                total += parse_statm_rss(text) or 0
        return total


def descendants(root: int, parents: Mapping[int, int]) -> set[int]:
    """`root` and every pid whose parent chain reaches it (the root itself only if it is alive)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    out: set[int] = set()
    stack = [root] if root in parents else []
    while stack:
        pid = stack.pop()
        if pid in out:
            continue
        out.add(pid)
        stack.extend(children.get(pid, ()))
    return out


# ---------------------------------------------------------------- cgroups


@valueclass
class CgroupRef:
    """Where a process's memory cgroup lives."""

    version: int
    """2 (unified) or 1 (the v1 memory controller)."""
    path: str
    """The cgroup as the process sees it (/proc/PID/cgroup)."""
    dir: str
    """Its directory on this host."""


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """/proc/PID/cgroup → {"": v2 path, "memory": v1 memory path, ...}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for ctl in parts[1].split(",") if parts[1] else [""]:
            out[ctl] = parts[2]
    return out


def parse_mountinfo(text: str) -> dict[str, str]:
    """Cgroup mount points from /proc/self/mountinfo: {"cgroup2": dir, "memory": dir (v1)}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf, rf = left.split(), right.split()
        if len(lf) < 5 or len(rf) < 3:
            continue
        mnt = lf[4].replace("\\040", " ")
        if rf[0] == "cgroup2":
            out.setdefault("cgroup2", mnt)
        elif rf[0] == "cgroup" and "memory" in rf[2].split(","):
            out.setdefault("memory", mnt)
    return out


def find_cgroup(pid: int, proc: str = "/proc") -> CgroupRef | None:
    text = read_text(f"{proc}/{pid}/cgroup")
    mounts = read_text(f"{proc}/self/mountinfo", 256 * 1024)
    if text is None or mounts is None:
        return None
    return resolve_cgroup(parse_proc_cgroup(text), parse_mountinfo(mounts))


def resolve_cgroup(groups: Mapping[str, str], mounts: Mapping[str, str]) -> CgroupRef | None:
    """The memory cgroup: v1's memory controller where it is mounted (it is the one that limits), else v2."""
    if "memory" in groups and "memory" in mounts:
        path = groups["memory"]
        return CgroupRef(1, path, _join(mounts["memory"], path))
    if "" in groups and "cgroup2" in mounts:
        path = groups[""]
        return CgroupRef(2, path, _join(mounts["cgroup2"], path))
    return None


def _join(mount: str, path: str) -> str:
    d = os.path.join(mount, path.lstrip("/"))
    # Inside a container the namespace root may be shown as "/" while the files sit at the mount itself.
    return d if os.path.isdir(d) else mount


def parse_kv(text: str) -> dict[str, int]:
    """ "key value" lines (memory.events, memory.oom_control, memory.stat) → {key: int}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                pass
    return out


def parse_limit(text: str | None) -> int | None:
    """memory.max ("max" = none) or v1 limit_in_bytes (a huge page-rounded number = none)."""
    if text is None:
        return None
    t = text.strip()
    if not t or t == "max":
        return None
    try:
        v = int(t)
    except ValueError:
        return None
    return None if v >= 1 << 62 else v


@valueclass
class CgroupReading:
    current: int | None
    peak: int | None
    limit: int | None
    oom_kill: int | None
    """memory.events oom_kill (v2) or memory.oom_control oom_kill (v1)."""
    oom: int | None
    """Times the limit was hit and reclaim failed (v2 memory.events oom; v1 failcnt)."""


def read_cgroup(ref: CgroupRef) -> CgroupReading:
    d = ref.dir
    if ref.version == 2:
        cur = parse_limit(read_text(f"{d}/memory.current"))
        peak = parse_limit(read_text(f"{d}/memory.peak"))
        limit = parse_limit(read_text(f"{d}/memory.max"))
        ev = parse_kv(read_text(f"{d}/memory.events") or "")
        return CgroupReading(cur, peak, limit, ev.get("oom_kill"), ev.get("oom"))
    cur = parse_limit(read_text(f"{d}/memory.usage_in_bytes"))
    peak = parse_limit(read_text(f"{d}/memory.max_usage_in_bytes"))
    limit = parse_limit(read_text(f"{d}/memory.limit_in_bytes"))
    oc = parse_kv(read_text(f"{d}/memory.oom_control") or "")
    fail = parse_limit(read_text(f"{d}/memory.failcnt"))
    return CgroupReading(cur, peak, limit, oc.get("oom_kill"), fail)


# ---------------------------------------------------------------- host memory, swap, /dev/shm


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo → bytes by key."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            try:
                out[key.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
            except ValueError:
                pass
    return out


def read_meminfo(proc: str = "/proc") -> dict[str, int]:
    return parse_meminfo(read_text(f"{proc}/meminfo") or "")


def shm_usage(path: str = "/dev/shm") -> tuple[int, int] | None:
    """(used, total) bytes of the /dev/shm file system, or None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    total = st.f_blocks * st.f_frsize
    return total - st.f_bfree * st.f_frsize, total


def core_pattern(proc: str = "/proc") -> str | None:
    text = read_text(f"{proc}/sys/kernel/core_pattern", 4096)
    return text.strip() if text is not None else None


def find_core(cwd: str, pid: int, since: float) -> str | None:
    """A core file written in `cwd` for `pid` after `since` (the plain `core` / `core.PID` patterns)."""
    for name in (f"core.{pid}", "core"):
        p = os.path.join(cwd, name)
        try:
            if os.stat(p).st_mtime >= since:
                return p
        except OSError:
            continue
    return None


def pid_alive(pid: int, proc: str = "/proc") -> tuple[bool, int | None]:
    """(alive, wait status if it is a zombie). A zombie counts as gone: its status is read from its stat."""
    text = read_text(f"{proc}/{pid}/stat", 4096)
    if text is None:
        return False, None
    st = parse_stat(text)
    if st is not None and st[2] in ("Z", "X"):
        return False, parse_stat_exit_code(text)
    return True, None


def names_of(pids: Iterable[int], proc: str = "/proc") -> dict[int, str]:
    out: dict[int, str] = {}
    for pid in pids:
        text = read_text(f"{proc}/{pid}/stat", 4096)
        st = parse_stat(text) if text else None
        if st:
            out[pid] = st[1]
    return out
