"""The parent side of the GPU sampler child: starts it, reads its JSON lines (bounded), keeps the latest sample."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from compat._valueclass import valueclass
from compat.record import _spawn

LINE_CAP = 256 * 1024
START_TIMEOUT = 20.0


@valueclass
class RecordedGpu:
    """A GPU as NVML names it (read once)."""

    index: int
    name: str
    uuid: str
    mem_total: int | None
    power_limit_w: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "mem_total": self.mem_total,
            "power_limit_w": self.power_limit_w,
        }


def sampler_argv(interval: float) -> list[str]:
    return [sys.executable, "-m", "compat.record.gpu_sampler", str(interval)]


class GpuSampler:
    """Runs the sampler child. `available` is None until it has answered, then True or False with `reason`."""

    def __init__(self, interval: float, argv: Sequence[str] | None = None) -> None:
        self.available: bool | None = None
        self.reason = ""
        self.info: list[RecordedGpu] = []
        self.latest: list[dict[str, Any]] | None = None
        self.xids: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self.proc = None
        try:
            self.proc = _spawn.spawn_reader(list(argv) if argv is not None else sampler_argv(interval))
        except OSError as exc:
            self._set_unavailable(f"the GPU sampler did not start: {exc}")
            return
        self._thread = threading.Thread(target=self._read, name="compat-gpu-reader", daemon=True)
        self._thread.start()

    def _set_unavailable(self, reason: str) -> None:
        self.available = False
        self.reason = reason
        self._ready.set()

    def wait_ready(self, timeout: float = START_TIMEOUT) -> bool | None:
        self._ready.wait(timeout)
        if self.available is None:
            self.reason = f"the GPU sampler gave no answer in {timeout:.0f} s"
        return self.available

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while True:
                line = out.readline(LINE_CAP)
                if not line:
                    break
                self.feed(line)
        except (OSError, ValueError):
            pass
        if self.available is None:
            self._set_unavailable("the GPU sampler ended without an answer")

    def feed(self, line: bytes | str) -> None:
        """One line from the sampler (public for tests: a recorded stream can be fed directly)."""
        try:
            obj = json.loads(line)
        except ValueError:
            return
        if not isinstance(obj, dict):
            return
        if "unavailable" in obj:
            self._set_unavailable(str(obj["unavailable"])[:300])
        elif "info" in obj:
            self.info = [
                RecordedGpu(
                    int(g.get("index", i)),
                    str(g.get("name", "unknown"))[:200],
                    str(g.get("uuid", ""))[:100],
                    _int(g.get("mem_total")),
                    _float(g.get("power_limit_w")),
                )
                for i, g in enumerate(obj["info"])
                if isinstance(g, dict)
            ][:64]
            self.available = True
            self._ready.set()
        elif "s" in obj and isinstance(obj["s"], list):
            with self._lock:
                self.latest = [r for r in obj["s"] if isinstance(r, dict)][:64]
        elif "xid" in obj:
            with self._lock:
                if len(self.xids) < 100:
                    self.xids.append(
                        {
                            "t": _float(obj.get("t")) or time.time(),
                            "xid": _int(obj["xid"]),
                            "gpu": _int(obj.get("gpu")),
                        }
                    )

    def take(self) -> list[dict[str, Any]] | None:
        with self._lock:
            return self.latest

    def close(self) -> None:
        if self.proc is not None:
            _spawn.stop(self.proc)
            self._thread.join(timeout=2.0)
            if self.proc.stdout is not None and not self._thread.is_alive():
                self.proc.stdout.close()


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
