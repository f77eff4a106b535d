"""The sampling loop: one thread that reads the host, the cgroup, the kernel log and the GPU sampler about once
per interval into a RunRecord. A failure here is noted in the record and never reaches the run itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from compat.record import host
from compat.record.document import RunRecord
from compat.record.gpu import GpuSampler
from compat.record.kmsg import KernelLog
from compat.record.timeline import GpuSample, Sample, Timeline

FINAL_KMSG_DELAY = 0.3
"""The kernel logs an OOM kill as it happens; a last read after the end picks up the lines of the final moment."""


class Recorder:
    """Records the process tree under `pid` into `record` until `stop()` (or, with `poll_alive`, until it ends)."""

    def __init__(
        self,
        record: RunRecord,
        pid: int,
        *,
        interval: float = 1.0,
        gpu: bool = True,
        kernel_log: bool = True,
        gpu_argv: Sequence[str] | None = None,
        kmsg_path: str = "/dev/kmsg",
        on_sample: Callable[[Sample], None] | None = None,
    ) -> None:
        self.record = record
        self.pid = pid
        self.interval = max(0.05, interval)
        self.tree = host.ProcessTree(pid)
        self.timeline = Timeline()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._gpu_enabled = gpu
        self._gpu_argv = gpu_argv
        self._kmsg_enabled = kernel_log
        self._kmsg_path = kmsg_path
        self.gpu: GpuSampler | None = None
        self.kmsg: KernelLog | None = None
        self._cg: host.CgroupRef | None = None
        self._cg_base: int | None = None
        self._cg_seen: dict[str, tuple[int | None, int | None]] = {}
        self._mounts: dict[str, str] | None = None
        self._failures: set[str] = set()
        self.on_sample = on_sample
        record.interval_s = interval

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self._guard("start", self._setup)
        self._thread = threading.Thread(target=self._loop, name="compat-recorder", daemon=True)
        self._thread.start()

    def _setup(self) -> None:
        mi = host.read_meminfo()
        shm = host.shm_usage()
        self.record.host = {
            "mem_total": mi.get("MemTotal"),
            "swap_total": mi.get("SwapTotal"),
            "shm_total": shm[1] if shm else None,
        }
        if self._kmsg_enabled:
            self.kmsg = KernelLog(self._kmsg_path)
            if not self.kmsg.readable:
                self.record.kernel_log["reason"] = self.kmsg.reason + "; the cgroup counters decide instead"
            self.record.kernel_log["readable"] = self.kmsg.readable
        else:
            self.record.kernel_log["reason"] = "not read (--no-kernel-log)"
        if self._gpu_enabled:
            self.gpu = GpuSampler(self.interval, self._gpu_argv)
        else:
            self.record.gpu = {"available": False, "reason": "not sampled (--no-gpu)", "gpus": []}
        self._read_cgroup()

    def stop(self) -> None:
        """Stop sampling and take the final readings (cgroup counters, the kernel log's last lines)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 3 * self.interval))
        time.sleep(FINAL_KMSG_DELAY)
        self._guard("final reading", self._final)

    def _final(self) -> None:
        self._read_cgroup(resolve=self._cg is None)
        if self.kmsg is not None:
            t = round(time.time() - self.record.started, 2)
            for e in self.kmsg.poll(self.tree.ever):
                self.record.kernel_log.setdefault("events", []).append({**e.to_json(), "t": t})
            self.kmsg.close()
        if self.gpu is not None:
            self.gpu.wait_ready(3.0)  # a short run may end before the sampler child has answered
            self._gpu_meta()
            for x in self.gpu.xids:
                self.record.xid_events.append({**x, "t": round(float(x["t"]) - self.record.started, 2)})
            self.gpu.close()
        self.record.samples = list(self.timeline.samples)
        self.record.processes = dict(self.tree.names)

    def _gpu_meta(self) -> None:
        assert self.gpu is not None
        if self.gpu.available:
            self.record.gpu = {"available": True, "reason": "", "gpus": [g.to_json() for g in self.gpu.info]}
        else:
            reason = self.gpu.reason or "the GPU sampler gave no answer"
            self.record.gpu = {"available": False, "reason": reason, "gpus": []}

    def _guard(self, what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as exc:  # the recorder must never take the run down with it
            key = f"{what}: {type(exc).__name__}"
            if key not in self._failures and len(self._failures) < 20:
                self._failures.add(key)
                self.record.notes.append(f"recorder {what} failed: {type(exc).__name__}: {exc}"[:300])

    # ------------------------------------------------------------------ sampling

    def _loop(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            self._guard("sample", self.sample_once)
            next_t += self.interval
            delay = next_t - time.monotonic()
            if delay < 0:  # fell behind (a suspended laptop, a loaded host): do not burst to catch up
                next_t = time.monotonic()
                delay = 0
            self._stop.wait(delay)

    def sample_once(self) -> Sample:
        pids = self.tree.refresh()
        rss = (self.tree.rss() or None) if pids else None
        cg = self._read_cgroup()
        mi = host.read_meminfo()
        swap = mi["SwapTotal"] - mi["SwapFree"] if "SwapTotal" in mi and "SwapFree" in mi else None
        shm = host.shm_usage()
        gpus: tuple[GpuSample, ...] = ()
        if self.gpu is not None:
            rows = self.gpu.take()
            if rows:
                gpus = tuple(_gpu_sample(r, pids) for r in rows)
        t = time.time() - self.record.started
        if self.kmsg is not None:
            new = self.kmsg.poll(self.tree.ever)
            for e in new:
                self.record.kernel_log.setdefault("events", []).append({**e.to_json(), "t": round(t, 2)})
        s = Sample(t, rss, len(pids), cg, swap, shm[0] if shm else None, gpus)
        self.timeline.add(s)
        if self.on_sample is not None:
            self.on_sample(s)
        return s

    def _read_cgroup(self, resolve: bool = True) -> int | None:
        if self._mounts is None:
            self._mounts = host.parse_mountinfo(host.read_text("/proc/self/mountinfo", 256 * 1024) or "")
        # An exited process (a zombie) shows the root cgroup: keep the one it lived in.
        text = host.read_text(f"/proc/{self.pid}/cgroup") if resolve and host.pid_alive(self.pid)[0] else None
        if text is not None:
            ref = host.resolve_cgroup(host.parse_proc_cgroup(text), self._mounts)
            # A process on its way out is shown in the root cgroup before it is a zombie: never follow it there.
            if ref is not None and not (ref.path == "/" and self._cg is not None):
                self._cg = ref
        if self._cg is None:
            if not self.record.cgroup:
                self.record.cgroup = {"reason": "no memory cgroup found for the process"}
            return None
        r = host.read_cgroup(self._cg)
        key = self._cg.dir
        if key not in self._cg_seen:
            if self._cg_seen:  # the process moved to another cgroup: the old one's readings are not its own
                self.timeline.samples = [replace(s, cgroup=None) for s in self.timeline.samples]
                self.record.notes.append(f"the process moved to the memory cgroup {self._cg.path}")
            self._cg_seen[key] = (r.oom_kill, r.oom)
        base_kill, base_oom = self._cg_seen[key]
        prev = self.record.cgroup
        self.record.cgroup = {
            "version": self._cg.version,
            "path": self._cg.path,
            "limit": r.limit,
            "peak": _max(r.peak, r.current, prev.get("peak") if prev.get("path") == self._cg.path else None),
            "oom_kill_before": base_kill,
            "oom_kill_after": r.oom_kill,
            "oom_kill_delta": (r.oom_kill - base_kill)
            if r.oom_kill is not None and base_kill is not None
            else None,
            "oom_events_delta": (r.oom - base_oom) if r.oom is not None and base_oom is not None else None,
        }
        return r.current


def _gpu_sample(r: dict[str, Any], pids: set[int]) -> GpuSample:
    own = None
    procs = r.get("procs") or []
    mine = [m for p, m in procs if p in pids and isinstance(m, int)] if isinstance(procs, list) else []
    if mine:
        own = sum(mine)
    throttle = r.get("throttle")
    return GpuSample(
        int(r.get("i", 0)),
        r.get("used") if isinstance(r.get("used"), int) else None,
        own,
        r.get("util") if isinstance(r.get("util"), int) else None,
        r.get("temp") if isinstance(r.get("temp"), int) else None,
        float(r["power"]) if isinstance(r.get("power"), (int, float)) else None,
        tuple(str(x) for x in throttle) if isinstance(throttle, list) else (),
        r.get("ecc") if isinstance(r.get("ecc"), int) else None,
    )


def _max(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None
