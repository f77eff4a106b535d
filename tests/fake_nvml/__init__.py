"""The fake NVML library (fake_nvml.c): build it, turn a JSON profile into the flat form it reads, and the
environment that makes the real pynvml load it in a child process.

A JSON profile (tests/data/nvml_profiles/*.json, or what `compat record` writes) holds, per call, either the value
NVML returned or {"error": "NOT_SUPPORTED"} (a name from nvml.h without NVML_ERROR_, or the number). Keys are the
NVML function name, with the call's enum arguments after colons ("nvmlDeviceGetTemperature:0",
"nvmlDeviceGetTotalEccErrors:1:0"). A call the profile does not list answers NOT_SUPPORTED.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "fake_nvml.c"

ERRORS = {
    "SUCCESS": 0,
    "UNINITIALIZED": 1,
    "INVALID_ARGUMENT": 2,
    "NOT_SUPPORTED": 3,
    "NO_PERMISSION": 4,
    "ALREADY_INITIALIZED": 5,
    "NOT_FOUND": 6,
    "INSUFFICIENT_SIZE": 7,
    "INSUFFICIENT_POWER": 8,
    "DRIVER_NOT_LOADED": 9,
    "TIMEOUT": 10,
    "IRQ_ISSUE": 11,
    "LIBRARY_NOT_FOUND": 12,
    "FUNCTION_NOT_FOUND": 13,
    "CORRUPTED_INFOROM": 14,
    "GPU_IS_LOST": 15,
    "RESET_REQUIRED": 16,
    "OPERATING_SYSTEM": 17,
    "LIB_RM_VERSION_MISMATCH": 18,
    "IN_USE": 19,
    "MEMORY": 20,
    "NO_DATA": 21,
    "ARGUMENT_VERSION_MISMATCH": 25,
    "UNKNOWN": 999,
}

STRING_FUNCS = {
    "nvmlSystemGetDriverVersion",
    "nvmlSystemGetNVMLVersion",
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetSerial",
}


class ProfileError(ValueError):
    """A profile the fake cannot serve."""


def error_code(value: Any) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.upper() in ERRORS:
        return ERRORS[value.upper()]
    raise ProfileError(f"unknown NVML error {value!r}")


def _hex(value: Any) -> str:
    if isinstance(value, dict) and "hex" in value:
        raw = bytes.fromhex(str(value["hex"]))
    elif isinstance(value, str):
        raw = value.encode("utf-8")
    else:
        raise ProfileError(f"expected a string, got {value!r}")
    return raw.hex() or "-"


def _ints(func: str, value: Any) -> list[int]:
    if isinstance(value, bool):
        return [int(value)]
    if isinstance(value, int):
        return [value]
    if func == "nvmlDeviceGetMemoryInfo" and isinstance(value, dict):
        return [int(value[k]) for k in ("total", "free", "used")] + [int(value.get("reserved", 0))]
    if func.endswith("RunningProcesses") and isinstance(value, list):
        out: list[int] = []
        for p in value:
            used = p.get("used_memory")
            out += [int(p["pid"]), (1 << 64) - 1 if used is None else int(used)]
        return out
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return [int(v) for v in value]
    raise ProfileError(f"{func}: cannot encode {value!r}")


def _record(dev: int, key: str, value: Any) -> str:
    func = key.split(":")[0]
    if isinstance(value, dict) and set(value) >= {"error"}:
        return f"v {dev} {key} {error_code(value['error'])} n"
    if func == "nvmlDeviceGetPciInfo":
        bus = value.get("bus_id") if isinstance(value, dict) else value
        return f"v {dev} {key} 0 s {_hex(bus)}"
    if func in STRING_FUNCS:
        return f"v {dev} {key} 0 s {_hex(value)}"
    return f"v {dev} {key} 0 i " + " ".join(str(v) for v in _ints(func, value))


def flatten(doc: Mapping[str, Any]) -> str:
    """A JSON profile -> the flat text fake_nvml.c reads."""
    if not isinstance(doc, Mapping) or doc.get("schema_version") != 1:
        raise ProfileError("not an NVML profile (schema_version 1)")
    lines = [f"init {error_code(doc.get('init', 'SUCCESS'))}"]
    for key, value in (doc.get("system") or {}).items():
        lines.append(_record(-1, key, value))
    for i, dev in enumerate(doc.get("devices") or []):
        for key, value in dev.items():
            lines.append(_record(i, key, value))
    faults = doc.get("faults") or {}
    for dev, n in (faults.get("lost_after") or {}).items():
        lines.append(f"lost_after {int(dev)} {int(n)}")
    for fn in faults.get("hang") or []:
        lines.append(f"hang {fn}")
    for fn in faults.get("crash") or []:
        lines.append(f"crash {fn}")
    for ev in doc.get("xid_events") or []:
        lines.append(f"xid {int(ev['device'])} {int(ev['xid'])}")
    return "\n".join(lines) + "\n"


def compiler() -> str | None:
    for name in (os.environ.get("CC") or "", "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def build(out_dir: Path, omit: tuple[str, ...] = ()) -> Path:
    """Compile fake_nvml.c into out_dir/<key>/libnvidia-ml.so.1 (once per set of left-out symbols); its directory."""
    cc = compiler()
    if cc is None:
        raise RuntimeError("no C compiler (cc, gcc or clang) on PATH")
    key = hashlib.sha256((SOURCE.read_text() + "|" + ",".join(sorted(omit))).encode()).hexdigest()[:12]
    d = out_dir / key
    lib = d / "libnvidia-ml.so.1"
    if lib.exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    # An exact name in a version script wins over the wildcard: the symbols an old driver lacks stay local.
    local = "".join(f" {s};" for s in sorted(omit))
    (d / "exports.map").write_text("{ global: *;" + (f" local:{local}" if local else "") + " };\n")
    argv = [
        cc,
        "-shared",
        "-fPIC",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-o",
        str(lib),
        str(SOURCE),
        f"-Wl,--version-script={d / 'exports.map'}",
        "-Wl,-soname,libnvidia-ml.so.1",
    ]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"building the fake NVML library failed:\n{res.stderr[-4000:]}")
    return d


def load(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise ProfileError(f"{path}: not a JSON object")
    return doc


class FakeNvmlLib:
    """The built library directory for a profile, and the environment that makes pynvml load it."""

    def __init__(self, build_dir: Path) -> None:
        self.build_dir = build_dir

    def env(
        self, doc: Mapping[str, Any], work: Path, base: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """Environment for a child: LD_LIBRARY_PATH to the build, FAKE_NVML_PROFILE to the flat profile."""
        lib_dir = build(self.build_dir, tuple(doc.get("missing_functions") or ()))
        work.mkdir(parents=True, exist_ok=True)
        flat = work / "profile.txt"
        flat.write_text(flatten(doc))
        env = dict(os.environ if base is None else base)
        env["LD_LIBRARY_PATH"] = str(lib_dir) + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""
        )
        env["FAKE_NVML_PROFILE"] = str(flat)
        env["FAKE_NVML_TRACE"] = str(work / "trace.txt")
        return env
