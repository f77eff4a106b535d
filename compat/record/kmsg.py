"""The kernel log during a run: bounded non-blocking reads of /dev/kmsg, and a parser for the lines that matter
(OOM kills, segfaults, NVIDIA Xid errors). Without permission it says so; the cgroup counters still decide."""

from __future__ import annotations

import errno
import os
import re

from compat._valueclass import valueclass

MAX_RECORDS_PER_POLL = 2000
MAX_KEPT = 200
LINE_CAP = 1000

_KILLED = re.compile(r"Killed process (\d+) \(([^)]*)\)")
_OOM_KILL = re.compile(r"oom-kill:.*?\bpid=(\d+)")
_SEGV = re.compile(r"(\S+)\[(\d+)\]: (segfault at|general protection fault|trap )")
_XID = re.compile(r"NVRM: Xid \(([^)]*)\): (\d+)(?:, pid=(\d+|'<unknown>'))?")
_CGROUP_OOM = re.compile(r"oom_memcg=([^,\s]+)|Memory cgroup out of memory")


@valueclass
class KernelEvent:
    """One kernel-log line that concerns a run."""

    kind: str
    """"oom_kill", "segfault" or "xid"."""
    pid: int | None
    """The pid the line names (None when it names none, e.g. an Xid with pid=<unknown>)."""
    text: str
    """The message, capped."""
    xid: int | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "pid": self.pid, "text": self.text}
        if self.xid is not None:
            out["xid"] = self.xid
        return out


def strip_record(raw: str) -> str:
    """A /dev/kmsg record ("6,1234,5678,-;message\\n continuation") or a dmesg line ("[ 12.3] message") →
    the message."""
    head, sep, msg = raw.partition(";")
    if sep and re.fullmatch(r"\d+,\d+,\d+,[^;]*", head):
        raw = msg
    raw = raw.split("\n", 1)[0]
    return re.sub(r"^\[\s*\d+\.\d+\]\s*", "", raw).strip()


def parse_line(line: str) -> KernelEvent | None:
    """The event a kernel-log line reports, if it is one we use."""
    msg = strip_record(line)[:LINE_CAP]
    m = _KILLED.search(msg)
    if m:
        return KernelEvent("oom_kill", int(m.group(1)), msg)
    m = _OOM_KILL.search(msg)
    if m:
        return KernelEvent("oom_kill", int(m.group(1)), msg)
    m = _SEGV.search(msg)
    if m:
        return KernelEvent("segfault", int(m.group(2)), msg)
    m = _XID.search(msg)
    if m:
        pid = m.group(3)
        return KernelEvent("xid", int(pid) if pid and pid.isdigit() else None, msg, int(m.group(2)))
    return None


def concerns(ev: KernelEvent, pids: set[int]) -> bool:
    """Whether a line concerns the run: it names one of its pids, or it is an Xid (a GPU fault hits every user
    of that GPU, whichever pid the driver names)."""
    return ev.kind == "xid" or (ev.pid is not None and ev.pid in pids)


class KernelLog:
    """Follows /dev/kmsg from now on. `readable` and `reason` say whether it could be read."""

    def __init__(self, path: str = "/dev/kmsg") -> None:
        self.path = path
        self.fd: int | None = None
        self.readable = False
        self.reason = ""
        self.events: list[KernelEvent] = []
        self.dropped = 0
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            self.reason = f"cannot read the kernel log ({path}: {exc.strerror or exc})"
            return
        try:
            os.lseek(fd, 0, os.SEEK_END)
        except OSError:
            pass
        self.fd = fd
        self.readable = True

    def poll(self, pids: set[int]) -> list[KernelEvent]:
        """The new lines since the last poll that concern `pids` (at most MAX_RECORDS_PER_POLL records read)."""
        if self.fd is None:
            return []
        new: list[KernelEvent] = []
        for _ in range(MAX_RECORDS_PER_POLL):
            try:
                raw = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # records overwritten before we read them: go on from the next
                    continue
                self.reason = f"kernel log read failed: {exc.strerror or exc}"
                self.close()
                break
            if not raw:
                break
            ev = parse_line(raw.decode("utf-8", "replace"))
            if ev is not None and concerns(ev, pids):
                new.append(ev)
        if len(self.events) + len(new) > MAX_KEPT:
            keep = max(0, MAX_KEPT - len(self.events))
            self.dropped += len(new) - keep
            new = new[:keep]
        self.events.extend(new)
        return new

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
