"""The kernel log: NVIDIA Xid events, OOM-killer kills and driver messages (API mismatch, nouveau holding the
GPU). Read with `dmesg` (bounded), else /dev/kmsg (non-blocking), else `journalctl -k`; each may be denied.

Also the validator of matrix/xid.yaml, the table of what each Xid code means (NVIDIA's Xid catalog).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from typing import Any

from compat._proc import run as run_command
from compat.matrixfiles import document, integer, items, mapping, problems, register_side_file, text, url
from compat.probes.host import HostFS

MAX_EVENTS = 50

# "NVRM: Xid (PCI:0000:2b:00): 79, pid=..., name=..., GPU has fallen off the bus."
# Older drivers omit "PCI:" ("NVRM: Xid (0000:01:00): 3, C 00000005 ...").
_XID_RE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)\): "
    r"(?P<code>\d+),\s*(?P<rest>.*)$"
)
_PID_RE = re.compile(r"pid=(?P<pid>'?<unknown>'?|\d+|'N/A'), name=(?P<name>[^,]*),\s*")
# "Out of memory: Killed process 25315 (python3) total-vm:..." (kernel >= 5.0), "Out of memory: Kill process
# 1234 (python) score 900 or sacrifice child" (older) and "Memory cgroup out of memory: Killed process ...".
_OOM_RE = re.compile(
    r"(?P<kind>Memory cgroup out of memory|Out of memory): Kill(?:ed)? process (?P<pid>\d+) "
    r"\((?P<name>[^)]*)\)(?:.*?anon-rss:(?P<rss>[\d,]+)kB)?"
)
_API_MISMATCH_RE = re.compile(
    r"NVRM: API mismatch: the client has the version (?P<client>\d+(?:\.\d+)*), but"
)
_MODULE_VERSION_RE = re.compile(r"this kernel module has the version (?P<kernel>\d+(?:\.\d+)*)")
_NOTES = (
    ("The NVIDIA probe routine was not called", "probe-not-called"),
    ("was loaded and obtained ownership of the NVIDIA device", "probe-not-called"),
    ("RmInitAdapter failed", "rm-init-failed"),
    ("No NVIDIA GPU found", "no-gpu-found"),
    ("No NVIDIA graphics adapter probed", "no-gpu-found"),
    ("has fallen off the bus", "fallen-off-bus"),
)
_KEYWORDS = ("NVRM", "NVIDIA", "Out of memory", "out of memory", "RmInitAdapter", "has fallen off the bus")
"""Every line a pattern above matches holds one of these (a cheap test before the regular expressions)."""
_TS_RE = re.compile(r"^\s*\[\s*(?P<ts>[^\]]+)\]\s*")


def strip_prefix(line: str) -> tuple[str | None, str]:
    """("[ 269.516977]" or "[Fri Aug 30 11:43:09 2024]" timestamp, the message); syslog prefixes are kept."""
    m = _TS_RE.match(line)
    if m:
        return m.group("ts").strip(), line[m.end() :]
    return None, line


def parse_kmsg_record(record: str) -> str | None:
    """One /dev/kmsg record "prio,seq,usec,flags;message\\n continuation" -> "[sec.usec] message"."""
    head, sep, msg = record.partition(";")
    if not sep:
        return None
    fields = head.split(",")
    if len(fields) < 3 or not fields[2].isdigit():
        return None
    usec = int(fields[2])
    return f"[{usec // 1_000_000:5d}.{usec % 1_000_000:06d}] {msg.splitlines()[0] if msg else ''}"


def parse_log(text: str) -> dict[str, Any]:
    """Kernel-log text -> Xid events, OOM kills and notable NVRM messages (newest last, bounded)."""
    xids: list[dict[str, Any]] = []
    ooms: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    pending_mismatch: dict[str, Any] | None = None
    for raw in text.splitlines():
        if pending_mismatch is None and not any(k in raw for k in _KEYWORDS):
            continue  # most kernel-log lines: none of the patterns below can match
        ts, line = strip_prefix(raw)
        m = _XID_RE.search(line)
        if m:
            rest = m.group("rest").strip()
            pm = _PID_RE.match(rest)
            pid = name = None
            if pm:
                p = pm.group("pid").strip("'")
                pid = int(p) if p.isdigit() else None
                name = pm.group("name").strip() or None
                if name in ("<unknown>", "'<unknown>'"):
                    name = None
                rest = rest[pm.end() :]
            xids.append(
                {
                    "time": ts,
                    "pci": m.group("pci").lower(),
                    "code": int(m.group("code")),
                    "pid": pid,
                    "process": name,
                    "message": rest.strip()[:300],
                }
            )
            continue
        m = _OOM_RE.search(line)
        if m:
            rss = m.group("rss")
            ooms.append(
                {
                    "time": ts,
                    "pid": int(m.group("pid")),
                    "process": m.group("name"),
                    "cgroup": m.group("kind").startswith("Memory cgroup"),
                    "anon_rss": int(rss.replace(",", "")) * 1024 if rss else None,
                }
            )
            continue
        m = _API_MISMATCH_RE.search(line)
        if m:
            pending_mismatch = {
                "time": ts,
                "kind": "api-mismatch",
                "client": m.group("client"),
                "kernel": None,
                "message": line.strip()[:300],
            }
            notes.append(pending_mismatch)
            km = _MODULE_VERSION_RE.search(line)
            if km:
                pending_mismatch["kernel"] = km.group("kernel")
                pending_mismatch = None
            continue
        if pending_mismatch is not None:
            km = _MODULE_VERSION_RE.search(line)
            if km:
                pending_mismatch["kernel"] = km.group("kernel")
                pending_mismatch = None
                continue
        for needle, kind in _NOTES:
            if needle in line:
                if not any(n["kind"] == kind for n in notes):
                    notes.append({"time": ts, "kind": kind, "message": line.strip()[:300]})
                break
    return {
        "xid": xids[-MAX_EVENTS:],
        "oom": ooms[-MAX_EVENTS:],
        "notes": notes[-MAX_EVENTS:],
        "xid_total": len(xids),
        "oom_total": len(ooms),
    }


def read_kmsg(fs: HostFS, max_records: int = 200_000) -> tuple[str | None, str | None]:
    """/dev/kmsg read without blocking: one record per read(); EAGAIN means the end of the buffer."""
    try:
        fd = fs.open_kmsg()
    except OSError as exc:
        return None, "permission denied" if exc.errno in (errno.EACCES, errno.EPERM) else (
            exc.strerror or str(exc)
        )
    lines: list[str] = []
    try:
        for _ in range(max_records):
            try:
                data = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # records overwritten while reading: keep going
                    continue
                if exc.errno in (errno.EACCES, errno.EPERM):
                    return None, "permission denied"
                return None, exc.strerror or str(exc)
            if not data:
                break
            text = data.decode("utf-8", errors="replace")
            # A regular file (tests, or an unusual /dev/kmsg) returns many records in one read.
            for rec in text.splitlines():
                if rec.startswith(" "):
                    continue  # continuation lines (" SUBSYSTEM=pci") of the previous record
                parsed = parse_kmsg_record(rec)
                if parsed is not None:
                    lines.append(parsed)
    finally:
        os.close(fd)
    return "\n".join(lines), None


def read_log(
    fs: HostFS, environ: Mapping[str, str], timeout: float = 5.0
) -> tuple[str | None, str, list[dict[str, str]]]:
    """The one kernel-log reader: (text or None, the source that answered, every refusal with its reason).

    dmesg, then /dev/kmsg, then journalctl -k; each command through the process runner (timeout, capped output:
    a flooding dmesg keeps its first and last MiB, never gigabytes).
    """
    tried: list[dict[str, str]] = []
    env = {**environ, "LC_ALL": "C"}
    res = run_command(["dmesg"], timeout, environ=env)
    if res.ok and res.stdout.strip():
        return res.stdout, "dmesg", tried
    tried.append({"source": "dmesg", "error": res.describe() if not res.ok else "empty"})
    text, err = read_kmsg(fs)
    if text is not None and text.strip():
        return text, "/dev/kmsg", tried
    tried.append({"source": "/dev/kmsg", "error": err or "empty"})
    res = run_command(
        ["journalctl", "-k", "-q", "--no-pager", "-o", "short-monotonic", "-n", "20000"],
        timeout,
        environ=env,
    )
    if res.ok and res.stdout.strip():
        return res.stdout, "journalctl -k", tried
    tried.append({"source": "journalctl -k", "error": res.describe() if not res.ok else "empty"})
    return None, "", tried


def probe(fs: HostFS, environ: Mapping[str, str], timeout: float = 5.0) -> dict[str, Any]:
    """The first kernel-log source that answers; every refusal is recorded with its reason."""
    text, source, tried = read_log(fs, environ, timeout)
    if text is not None:
        return {"status": "ok", "source": source, "tried": tried, **parse_log(text)}
    return {
        "status": "unavailable",
        "tried": tried,
        "error": "; ".join(f"{t['source']}: {t['error']}" for t in tried),
    }


# "Killed process 4649 (python)" in any of its forms, and the one-line summary "oom-kill:...,pid=4649,...".
_KILLED_RE = re.compile(r"Killed process (\d+)")
_OOM_KILL_PID_RE = re.compile(r"oom-kill:.*?[,:]pid=(\d+)")
_STAMP_RE = re.compile(r"^\[\s*(\d+(?:\.\d+)?)\]")


def oom_pids(text: str, since: float | None = None) -> list[int]:
    """PIDs the OOM killer killed, from kernel-log lines; with `since`, only lines stamped at or after it."""
    pids: list[int] = []
    for line in text.splitlines():
        if since is not None:
            m = _STAMP_RE.match(line)
            if m and float(m.group(1)) < since:
                continue
        for rx in (_KILLED_RE, _OOM_KILL_PID_RE):
            for hit in rx.finditer(line):
                pid = int(hit.group(1))
                if pid not in pids:
                    pids.append(pid)
    return pids


# ------------------------------------------------------------------ matrix/xid.yaml

XID_SEVERITIES = ("error", "warning", "info")
XID_CAUSES = ("application", "driver", "hardware", "memory", "bus", "thermal", "nvlink", "firmware", "info")


XID_FILE = "xid.yaml"
XID_SHAPE = document(
    {
        "xids": items(
            mapping(
                {
                    "code": integer(gt=0),
                    "name": text(),
                    "meaning": text(),
                    "action": text(),
                    "severity": text(enum=XID_SEVERITIES),
                    "cause": text(enum=XID_CAUSES),
                    "source": url(),
                },
                required=("code", "name", "meaning", "action", "severity", "cause", "source"),
            ),
            nonempty=True,
            label=("code",),
            unique=("code",),
        )
    },
    required=("xids",),
)


def validate_document(doc: Any) -> list[str]:
    """Every problem in matrix/xid.yaml (empty when valid)."""
    return problems(XID_SHAPE, doc)


register_side_file(XID_FILE, validate_document)
