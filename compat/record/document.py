"""The record of one run (run.json): what ran, how it ended, the timeline, the evidence and the verdict."""

from __future__ import annotations

import signal
import time
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.record.timeline import Sample
from compat.schema_version import SCHEMA_VERSION


def signal_name(sig: int | None) -> str | None:
    if sig is None:
        return None
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


@valueclass
class ExitInfo:
    """How the process ended."""

    status: str
    """"exited", "signaled", "vanished" (a watched process gone, its status unknown) or "running"."""
    code: int | None = None
    signal: int | None = None
    core_dumped: bool = False
    core_file: str | None = None
    source: str = "wait"
    """Where the status came from: "wait" (our child), "zombie" (/proc/PID/stat of a watched process),
    "faulthandler" (the notebook kernel's own fatal-error report) or "none"."""

    @classmethod
    def from_wait_status(cls, status: int, source: str = "wait") -> ExitInfo:
        import os

        if os.WIFSIGNALED(status):
            return cls("signaled", None, os.WTERMSIG(status), os.WCOREDUMP(status), None, source)
        return cls(
            "exited", os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, None, False, None, source
        )

    @property
    def shell_code(self) -> int:
        """The code a shell would report: the exit code, or 128 + the signal."""
        if self.status == "signaled" and self.signal is not None:
            return 128 + self.signal
        return self.code if self.code is not None else 1

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "code": self.code,
            "signal": self.signal,
            "signal_name": signal_name(self.signal),
            "core_dumped": self.core_dumped,
            "core_file": self.core_file,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ExitInfo:
        return cls(
            str(d["status"]),
            d.get("code"),
            d.get("signal"),
            bool(d.get("core_dumped")),
            d.get("core_file"),
            str(d.get("source", "wait")),
        )


@valueclass(frozen=False)
class RunRecord:
    """Filled in by the recorder while the run goes on; `verdict` is set at the end by compat.record.verdict."""

    kind: str
    """"run", "watch" or "notebook"."""
    pid: int
    command: list[str] | None = None
    started: float = field(default_factory=time.time)
    wall_s: float | None = None
    interval_s: float = 1.0
    exit: ExitInfo = field(default_factory=lambda: ExitInfo("running", source="none"))
    host: dict[str, Any] = field(default_factory=dict)
    """mem_total, swap_total, shm_total (bytes)."""
    cgroup: dict[str, Any] = field(default_factory=dict)
    """version, path, limit, peak, oom_kill_before, oom_kill_after, oom_kill_delta; or reason."""
    gpu: dict[str, Any] = field(
        default_factory=lambda: {"available": False, "reason": "not sampled", "gpus": []}
    )
    kernel_log: dict[str, Any] = field(
        default_factory=lambda: {"readable": False, "reason": "", "events": []}
    )
    xid_events: list[dict[str, Any]] = field(default_factory=list)
    """Xid events from NVML's event set: {t (seconds into the run), xid, gpu}."""
    samples: list[Sample] = field(default_factory=list)
    output_tail: list[str] = field(default_factory=list)
    output_lines: int = 0
    processes: dict[int, str] = field(default_factory=dict)
    """Every pid seen in the process tree, with its name."""
    notes: list[str] = field(default_factory=list)
    """What the recorder could not do (each a sentence)."""
    kernel_id: str | None = None
    fault_report: list[str] = field(default_factory=list)
    """The notebook kernel's own faulthandler output (first lines), when it wrote one."""
    verdict: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "pid": self.pid,
            "command": self.command,
            "started": round(self.started, 3),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "wall_s": round(self.wall_s, 3) if self.wall_s is not None else None,
            "interval_s": self.interval_s,
            "exit": self.exit.to_json(),
            "host": dict(sorted(self.host.items())),
            "cgroup": dict(sorted(self.cgroup.items())),
            "gpu": self.gpu,
            "kernel_log": self.kernel_log,
            "xid_events": self.xid_events,
            "samples": [s.to_json() for s in self.samples],
            "output_tail": self.output_tail,
            "output_lines": self.output_lines,
            "processes": {str(k): v for k, v in sorted(self.processes.items())},
            "notes": self.notes,
            "kernel_id": self.kernel_id,
            "fault_report": self.fault_report,
            "verdict": self.verdict,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunRecord:
        return cls(
            kind=str(d["kind"]),
            pid=int(d["pid"]),
            command=d.get("command"),
            started=float(d.get("started") or 0.0),
            wall_s=d.get("wall_s"),
            interval_s=float(d.get("interval_s") or 1.0),
            exit=ExitInfo.from_json(d["exit"]),
            host=dict(d.get("host") or {}),
            cgroup=dict(d.get("cgroup") or {}),
            gpu=dict(d.get("gpu") or {}),
            kernel_log=dict(d.get("kernel_log") or {}),
            xid_events=list(d.get("xid_events") or []),
            samples=[Sample.from_json(s) for s in d.get("samples") or []],
            output_tail=list(d.get("output_tail") or []),
            output_lines=int(d.get("output_lines") or 0),
            processes={int(k): str(v) for k, v in (d.get("processes") or {}).items()},
            notes=list(d.get("notes") or []),
            kernel_id=d.get("kernel_id"),
            fault_report=list(d.get("fault_report") or []),
            verdict=d.get("verdict"),
        )
