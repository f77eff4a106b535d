"""`nvidia-smi --query-gpu=... --format=csv,noheader,nounits`: the fallback when NVML cannot be used from Python.

Never the banner: its layout changes between driver releases. The CSV fields are documented by
`nvidia-smi --help-query-gpu`; `compute_cap` only exists in newer releases, so it is retried without.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping
from typing import Any

from compat._proc import CmdResult, tail
from compat._proc import run as run_command

FIELDS = (
    "index",
    "name",
    "uuid",
    "driver_version",
    "memory.total",
    "memory.used",
    "memory.free",
    "compute_cap",
    "persistence_mode",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "pci.bus_id",
)

_NA = {
    "",
    "n/a",
    "[n/a]",
    "[not supported]",
    "not supported",
    "[unknown error]",
    "[insufficient permissions]",
    "[gpu is lost]",
}
_LIB_VERSION_RE = re.compile(r"NVML library version:\s*([0-9.]+)")
_BAD_FIELD_RE = re.compile(r'Field "([^"]+)" is not a valid field to query')

# Messages nvidia-smi prints instead of data, and what they mean.
FAILURES = (
    ("couldn't communicate with the NVIDIA driver", "no-driver"),
    ("couldn\u2018t communicate with the NVIDIA driver", "no-driver"),
    ("Driver/library version mismatch", "version-mismatch"),
    ("Failed to initialize NVML: Unknown Error", "nvml-unknown"),
    ("Insufficient Permissions", "no-permission"),
    ("No devices were found", "no-devices"),
    ("Unable to determine the device handle", "gpu-lost"),
    ("GPU is lost", "gpu-lost"),
)


def query_argv(fields: tuple[str, ...] = FIELDS) -> list[str]:
    return ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]


def _val(text: str) -> str | None:
    t = text.strip()
    return None if t.lower() in _NA else t


_NUM_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def _float(text: str | None) -> float | None:
    """ "176.98" or, without nounits, "81559 MiB" / "17.05 W"; None for what is no finite number."""
    m = _NUM_RE.match(text or "")
    if m is None:
        return None
    f = float(m.group(1))
    return f if math.isfinite(f) else None


def _int(text: str | None) -> int | None:
    f = _float(text)
    return int(f) if f is not None else None


def classify_failure(text: str) -> str | None:
    for needle, kind in FAILURES:
        if needle.lower() in text.lower():
            return kind
    return None


def parse_csv(text: str, fields: tuple[str, ...] = FIELDS) -> list[dict[str, Any]] | None:
    """The rows of a `--format=csv,noheader,nounits` answer; None when the text is not that (garbage, a banner)."""
    rows = []
    import csv  # only when nvidia-smi answered

    try:
        records = list(csv.reader(io.StringIO(text), skipinitialspace=True))
    except csv.Error:  # binary junk: a carriage return or a NUL inside a field
        return None
    for n, rec in enumerate(records):
        if not rec or not any(c.strip() for c in rec):
            continue
        if len(rec) != len(fields):
            return None
        if n == 0 and rec[0].strip().split(" [")[0] == fields[0]:
            continue  # a header row (--format=csv without noheader)
        item = dict(zip(fields, (_val(c) for c in rec), strict=False))
        if "index" in fields and _int(item.get("index")) is None:
            return None
        rows.append(item)
    return rows or None


def to_gpus(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CSV rows (MiB, W, °C) -> the same shape nvml_parse.parse() gives (bytes, W)."""
    out = []
    mib = 1024 * 1024
    for r in rows:

        def mem(key: str, r: dict[str, Any] = r) -> int | None:
            v = _int(r.get(key))
            return v * mib if v is not None else None

        cc = r.get("compute_cap")
        pm = (r.get("persistence_mode") or "").lower()
        out.append(
            {
                "index": _int(r.get("index")),
                "name": r.get("name"),
                "cc": cc if cc and re.match(r"^\d+\.\d$", cc) else None,
                "details": {
                    "uuid": r.get("uuid"),
                    "pci_bus_id": r.get("pci.bus_id"),
                    "memory_total": mem("memory.total"),
                    "memory_used": mem("memory.used"),
                    "memory_free": mem("memory.free"),
                    "persistence_mode": {"enabled": True, "disabled": False}.get(pm),
                    "health": {
                        "temperature": _int(r.get("temperature.gpu")),
                        "power_usage_w": _float(r.get("power.draw")),
                        "power_limit_w": _float(r.get("power.limit")),
                    },
                },
            }
        )
    return out


def parse(result: Mapping[str, Any]) -> dict[str, Any]:
    """A probe() record -> {"ok", "driver", "gpus"} or {"ok": False, "kind", "message"}."""
    status = result.get("status")
    text = str(result.get("output") or "")
    if status in ("not-found", "timeout", "crashed", "error"):
        return {
            "ok": False,
            "kind": {"not-found": "missing", "timeout": "hang"}.get(str(status), str(status)),
            "message": str(result.get("describe")),
        }
    kind = classify_failure(text)
    if kind is not None:
        m = _LIB_VERSION_RE.search(text)
        return {
            "ok": False,
            "kind": kind,
            "message": text.strip().splitlines()[0] if text.strip() else kind,
            "library_version": m.group(1) if m else None,
        }
    fields = tuple(result.get("fields") or FIELDS)
    rows = parse_csv(str(result.get("stdout") or ""), fields) if status == "ok" else None
    if rows is None:
        return {
            "ok": False,
            "kind": "garbage" if status == "ok" else "failed",
            "message": f"unexpected output from nvidia-smi: {tail(text, 200)!r}",
        }
    gpus = to_gpus(rows)
    drivers = sorted({r["driver_version"] for r in rows if r.get("driver_version")})
    return {"ok": True, "driver": drivers[0] if drivers else None, "gpus": gpus}


def probe(timeout: float = 5.0, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run the CSV query (retrying without fields an older nvidia-smi rejects); the raw answer, not parsed."""
    fields: tuple[str, ...] = FIELDS
    res: CmdResult = run_command(query_argv(fields), timeout, environ=environ)
    for _ in range(3):
        m = _BAD_FIELD_RE.search(res.output)
        if res.status != "failed" or m is None or m.group(1) not in fields:
            break
        fields = tuple(f for f in fields if f != m.group(1))
        res = run_command(query_argv(fields), timeout, environ=environ)
    return {
        "status": res.status,
        "returncode": res.returncode,
        "fields": list(fields),
        "stdout": res.stdout[:65536],
        "output": tail(res.output),
        "describe": res.describe(),
    }
