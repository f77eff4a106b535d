"""Fakes for the doctor's probe boundaries: real implementations of the interfaces, not mock.patch trees.

- FakeNvml: a pynvml-like object serving recorded NVML values (tests/data/doctor/nvml/*.json), or failing the way
  the real library fails (NVMLError with .value = the NVML return code), or hanging.
- DeniedFS: a HostFS whose reads of chosen paths raise PermissionError (root bypasses chmod, so tests cannot rely
  on file modes).
- fake executables (nvidia-smi, nvcc, dmesg, a fake `python`) written into a temporary PATH.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol

from compat.probes.host import HostFS


class FakeBin(Protocol):
    """The `fake_bin` fixture: make(name, script) writes an executable into `dir` (first on the env's PATH)."""

    dir: Path

    def __call__(self, name: str, script: str) -> Path: ...


ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "doctor"

NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
GPU_IS_LOST = 15
LIB_RM_VERSION_MISMATCH = 18

_MESSAGES = {
    NOT_SUPPORTED: "Not Supported",
    NO_PERMISSION: "Insufficient Permissions",
    DRIVER_NOT_LOADED: "Driver Not Loaded",
    LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
    GPU_IS_LOST: "GPU is lost",
    LIB_RM_VERSION_MISMATCH: "RM has detected an NVML/RM version mismatch.",
}


class FakeNVMLError(Exception):
    """Shaped like pynvml.NVMLError: the NVML return code in .value."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _MESSAGES.get(self.value, f"NVML error {self.value}")


def data(*parts: str) -> str:
    return (DATA.joinpath(*parts)).read_text(encoding="utf-8")


class FakeNvml:
    """Serves one recorded machine. Fields the recording lacks answer NVML_ERROR_NOT_SUPPORTED, as a GeForce does."""

    def __init__(
        self,
        doc: dict[str, Any] | None = None,
        *,
        init_error: BaseException | None = None,
        hang: threading.Event | None = None,
        device_error: dict[str, int] | None = None,
    ) -> None:
        self.doc = doc or {"devices": []}
        self.init_error = init_error
        self.hang = hang
        self.device_error = device_error or {}
        self.shutdowns = 0

    @classmethod
    def recorded(cls, name: str, **kw: Any) -> FakeNvml:
        return cls(json.loads(data("nvml", name)), **kw)

    # -- system
    def nvmlInit(self) -> None:
        if self.hang is not None:
            self.hang.wait(60)  # a wedged driver; released by the test
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def _sys(self, key: str) -> Any:
        if key not in self.doc:
            raise FakeNVMLError(NOT_SUPPORTED)
        return self.doc[key]

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self._sys("driver_version"))

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self._sys("cuda_driver_version"))

    def nvmlSystemGetNVMLVersion(self) -> str:
        return str(self._sys("nvml_version"))

    def nvmlDeviceGetCount(self) -> int:
        return len(self.doc["devices"])

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        if "handle" in self.device_error:
            raise FakeNVMLError(self.device_error["handle"])
        return i

    # -- devices
    def _d(self, h: int, key: str) -> Any:
        if key in self.device_error:
            raise FakeNVMLError(self.device_error[key])
        dev = self.doc["devices"][h]
        if key not in dev:
            raise FakeNVMLError(NOT_SUPPORTED)
        return dev[key]

    def nvmlDeviceGetName(self, h: int) -> bytes:
        return str(self._d(h, "name")).encode()  # old bindings return bytes

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return str(self._d(h, "uuid"))

    def nvmlDeviceGetPciInfo(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(busId=self._d(h, "pci_bus_id"))

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        cc = self._d(h, "cc")
        return int(cc[0]), int(cc[1])

    def nvmlDeviceGetMemoryInfo(self, h: int) -> SimpleNamespace:
        m = self._d(h, "memory")
        return SimpleNamespace(total=m.get("total"), used=m.get("used"), free=m.get("free"))

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(pid=p["pid"], usedGpuMemory=p.get("used")) for p in self._d(h, "processes")]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return [
            SimpleNamespace(pid=p["pid"], usedGpuMemory=p.get("used"))
            for p in self._d(h, "graphics_processes")
        ]

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return int(self._d(h, "persistence_mode"))

    def nvmlDeviceGetMigMode(self, h: int) -> list[int]:
        return list(self._d(h, "mig_mode"))

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return int(self._d(h, "temperature"))

    def nvmlDeviceGetTemperatureThreshold(self, h: int, which: int) -> int:
        return int(self._d(h, "temperature_slowdown"))

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return int(self._d(h, "clocks_event_reasons"))

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return int(self._d(h, "power_usage"))

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return int(self._d(h, "power_limit"))

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h: int) -> int:
        return int(self._d(h, "power_default_limit"))

    def nvmlDeviceGetTotalEccErrors(self, h: int, error_type: int, counter: int) -> int:
        return int(self._d(h, "ecc_volatile" if counter == 0 else "ecc_aggregate"))

    def nvmlDeviceGetRetiredPages(self, h: int, cause: int) -> list[int]:
        return list(self._d(h, "retired_sbe" if cause == 0 else "retired_dbe"))

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h: int) -> int:
        return int(self._d(h, "retired_pending"))

    def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
        r = self._d(h, "remapped_rows")
        return int(r[0]), int(r[1]), int(r[2]), int(r[3])

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return int(self._d(h, "pcie")[0])

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return int(self._d(h, "pcie")[1])

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return int(self._d(h, "pcie")[2])

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return int(self._d(h, "pcie")[3])


class DeniedFS(HostFS):
    """The host's files, except that reading (or listing) the given paths is refused as for an unprivileged user."""

    def __init__(self, root: str = "/", denied: tuple[str, ...] = ()) -> None:
        super().__init__(root)
        self.denied = denied

    def _check(self, path: str) -> None:
        if any(path == d or path.startswith(d.rstrip("/") + "/") for d in self.denied):
            raise PermissionError(13, "Permission denied", path)

    def read_text(self, path: str, limit: int = 1 << 20) -> str:
        self._check(path)
        return super().read_text(path, limit)

    def listdir(self, path: str) -> list[str]:
        self._check(path)
        return super().listdir(path)

    def open_kmsg(self, path: str = "/dev/kmsg") -> int:
        self._check(path)
        return super().open_kmsg(path)


def write_exe(directory: Path, name: str, script: str) -> Path:
    """An executable shell script `name` in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    p = directory / name
    p.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return p


def env_with(path_first: Path | None = None, *, only: bool = False, **extra: str) -> dict[str, str]:
    """A clean environment for a probe: PATH is `path_first` (alone with only=True) then /usr/bin:/bin."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CUDA_", "LD_LIBRARY", "NVIDIA_", "COMPAT_OVERRIDE"))
    }
    base = "" if only else "/usr/bin:/bin"
    env["PATH"] = ":".join(p for p in ((str(path_first) if path_first else ""), base) if p)
    env.update(extra)
    return env


def fake_python(directory: Path, torch_behaviour: str, *, meta: dict[str, Any] | None = None) -> Path:
    """A fake interpreter for `--python`: answers the child's "meta" mode with a canned JSON document (torch
    installed) and, asked to import torch, behaves as told: "segv" (killed by SIGSEGV), "hang", "import-error"."""
    doc = meta or {
        "stage": "done",
        "python": "3.10.12",
        "executable": str(directory / "python"),
        "distributions": {"torch": "2.5.1"},
        "requires": {"torch": []},
        "static": {},
        "stamps": {},
    }
    behaviour = {
        "segv": 'echo "Fatal Python error: Segmentation fault" >&2; kill -SEGV $$',
        "hang": "sleep 60",
        "import-error": (
            'printf \'%s\' \'{"stage": "import", "mode": "torch", "error": "ImportError: libcudnn.so.9: '
            'cannot open shared object file: No such file or directory", "traceback": "Traceback ...\\\\n'
            'ImportError: libcudnn.so.9: cannot open shared object file"}\' > "$3"; exit 1'
        ),
    }[torch_behaviour]
    script = f"""mode="$2"
if [ "$mode" = "meta" ]; then
  cat > "$3" <<'EOF'
{json.dumps(doc)}
EOF
  exit 0
fi
{behaviour}
"""
    return write_exe(directory, "python", script)
