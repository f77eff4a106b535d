"""Was a SIGKILL the kernel's out-of-memory killer? The cgroup OOM-kill count and the kernel log say.

Acquire (read a file, run dmesg) and parse (pure functions, tested on recorded outputs) are kept apart.
Where the counters live: cgroup v2 `memory.events` ("oom_kill N"), cgroup v1 `memory.oom_control`
("oom_kill N", Linux >= 4.13), both in the cgroup of this process as named in /proc/self/cgroup
(https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files,
https://docs.kernel.org/admin-guide/cgroup-v1/memory.html). The victim's cgroup counts a kill even when the
OOM was global (host out of memory), so the count of the cgroup the smoke child shares with us is the one to read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from compat._valueclass import valueclass

CGROUP_ROOT = Path("/sys/fs/cgroup")


@valueclass
class OomCount:
    """The OOM-kill counter of this process's cgroup, or why it could not be read."""

    value: Optional[int]
    source: str
    """The file read, or the reason there is no value."""


def parse_oom_kill(text: str) -> Optional[int]:
    """The `oom_kill N` line of cgroup v2 memory.events or v1 memory.oom_control; None when absent."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "oom_kill" and parts[1].isdigit():
            return int(parts[1])
    return None


def cgroup_paths(proc_self_cgroup: str) -> tuple[Optional[str], Optional[str]]:
    """(v2 path, v1 memory path) from /proc/self/cgroup: lines `0::/path` and `N:memory:/path`."""
    from compat.probes.resources import parse_proc_cgroup

    parsed = parse_proc_cgroup(proc_self_cgroup)
    return parsed["v2"], parsed["v1"].get("memory")


def counter_files(proc_self_cgroup: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """Where this process's OOM-kill counter may be, most specific first.

    The cgroup's own folder comes first; the mount root is the fallback for a container whose cgroup namespace
    or bind mount makes its own cgroup the root (then /proc/self/cgroup names a path that is not there).
    """
    v2, v1 = cgroup_paths(proc_self_cgroup)
    out: list[Path] = []
    if v2 is not None:
        rel = v2.lstrip("/")
        out += [root / rel / "memory.events", root / "unified" / rel / "memory.events"]
    if v1 is not None:
        out.append(root / "memory" / v1.lstrip("/") / "memory.oom_control")
    out += [root / "memory.events", root / "memory" / "memory.oom_control"]
    seen: set[Path] = set()
    return [p for p in out if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


def read_oom_count(root: Path = CGROUP_ROOT, proc_self_cgroup: Optional[str] = None) -> OomCount:
    """Acquire: the OOM-kill count of this process's cgroup."""
    if proc_self_cgroup is None:
        try:
            proc_self_cgroup = Path("/proc/self/cgroup").read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return OomCount(None, f"/proc/self/cgroup unreadable ({exc.strerror or exc})")
    for path in counter_files(proc_self_cgroup, root):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        value = parse_oom_kill(text)
        if value is not None:
            return OomCount(value, str(path))
    return OomCount(None, "no readable cgroup OOM-kill counter (memory.events / memory.oom_control)")


def uptime() -> Optional[float]:
    """Seconds since boot, the clock of the kernel log's timestamps."""
    try:
        return float(Path("/proc/uptime").read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def parse_kernel_log(text: str, since: Optional[float] = None) -> list[int]:
    """PIDs the OOM killer killed, from kernel-log lines (the one parser: compat.probes.health.oom_pids)."""
    from compat.probes.health import oom_pids

    return oom_pids(text, since)


def read_kernel_log(timeout: float = 5.0) -> tuple[Optional[str], str]:
    """Acquire: (the kernel log or None, where it came from or why not), by the one kernel-log reader."""
    from compat.probes.health import read_log
    from compat.probes.host import HostFS

    text, source, tried = read_log(HostFS(), os.environ, timeout)
    if text is not None:
        return text, source
    return None, "; ".join(f"{t['source']}: {t['error']}" for t in tried) or "no kernel log"


@valueclass
class OomEvidence:
    """Whether a SIGKILLed child was the OOM killer's victim, and on what evidence."""

    confirmed: Optional[bool]
    """True: the count rose or the kernel log names the process; False: readable and neither; None: unknown."""
    evidence: str


def judge(
    pid: int,
    before: OomCount,
    after: OomCount,
    kernel_log: Optional[str],
    log_source: str,
    since: Optional[float],
) -> OomEvidence:
    """Pure: combine the counter before/after the run and the kernel log into a verdict."""
    notes: list[str] = []
    if before.value is not None and after.value is not None:
        delta = after.value - before.value
        if delta > 0:
            return OomEvidence(
                True, f"the cgroup OOM-kill count rose by {delta} during the run ({after.source})"
            )
        notes.append(f"the cgroup OOM-kill count did not change ({after.source})")
    else:
        notes.append(f"OOM-kill count unknown: {after.source if after.value is None else before.source}")
    if kernel_log is not None:
        if pid in parse_kernel_log(kernel_log, since):
            return OomEvidence(
                True, f"the kernel log says the OOM killer killed process {pid} ({log_source})"
            )
        notes.append(f"the kernel log does not name process {pid}")
    else:
        notes.append(f"kernel log unreadable: {log_source}")
    known = before.value is not None and after.value is not None
    return OomEvidence(False if known or kernel_log is not None else None, "; ".join(notes))
