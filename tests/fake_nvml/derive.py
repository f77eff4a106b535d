"""Derive an NVML profile (tests/data/nvml_profiles/*.json) from a public nvidia-smi capture of a real GPU.

nvidia-smi reads NVML, so what it prints is what NVML returned, in display units. Two capture formats:
- `nvidia-smi -q -x` XML (Telegraf's plugins/inputs/nvidia_smi/testdata);
- nvidia_gpu_exporter's capture files (internal/captures/*.txt): the `--query-gpu=... --format=csv` section, plus
  the "CUDA Version" line of its `nvidia-smi -q` section.
MiB become bytes (x 1048576), W become mW (x 1000); "N/A" and "[N/A]" become NOT_SUPPORTED, "[Insufficient
Permissions]" NO_PERMISSION, "[GPU is lost]" GPU_IS_LOST. A value the capture does not show is left out (the fake then
answers NOT_SUPPORTED). nvidia-smi prints retired-page counts, not addresses: the addresses are synthesised (the count
is what compat reads). The -q XML has no compute capability: it is taken from compat's matrix/gpus.yaml (NVIDIA's CUDA
GPUs page), and the profile says so.

    python -m tests.fake_nvml.derive xml CAPTURE.xml --source 'repo@commit:path' > profile.json
    python -m tests.fake_nvml.derive exporter CAPTURE.txt --source 'repo@commit:path' > profile.json
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import xml.etree.ElementTree as ET  # noqa: S405 - local, trusted capture files
from typing import Any

MIB = 1 << 20
# The --query-gpu fields compat's nvidia-smi fallback asks for (compat/probes/nvidia_smi.py FIELDS).
SMI_FIELDS = (
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
REDACTED_UUID = "GPU-00000000-0000-0000-0000-{:012d}"

_ERRORS = {
    "n/a": "NOT_SUPPORTED",
    "[n/a]": "NOT_SUPPORTED",
    "[not supported]": "NOT_SUPPORTED",
    "not supported": "NOT_SUPPORTED",
    "[insufficient permissions]": "NO_PERMISSION",
    "insufficient permissions": "NO_PERMISSION",
    "[gpu is lost]": "GPU_IS_LOST",
    "[unknown error]": "UNKNOWN",
    "[requested functionality has been deprecated]": "NOT_SUPPORTED",
}
# nvmlClocksEventReason* bits (nvml.h) by the XML element suffix / CSV column suffix.
_REASON_BITS = {
    "gpu_idle": 0x1,
    "applications_clocks_setting": 0x2,
    "sw_power_cap": 0x4,
    "hw_slowdown": 0x8,
    "sync_boost": 0x10,
    "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40,
    "hw_power_brake_slowdown": 0x80,
    "display_clocks_setting": 0x100,
}


def _err(text: str | None) -> dict[str, str] | None:
    if text is None:
        return None
    return {"error": _ERRORS[text.strip().lower()]} if text.strip().lower() in _ERRORS else None


def _num(text: str) -> float:
    m = re.match(r"^\s*(-?\d+(?:\.\d+)?)", text)
    if m is None:
        raise ValueError(f"not a number: {text!r}")
    return float(m.group(1))


def _value(text: str | None, conv: Any) -> Any:
    """`conv(text)`, or the NVML error the display text stands for; None when absent."""
    if text is None:
        return None
    e = _err(text)
    if e is not None:
        return e
    return conv(text.strip())


def _mib(t: str) -> int:
    return int(_num(t)) * MIB


def _mw(t: str) -> int:
    return round(_num(t) * 1000)


def _int(t: str) -> int:
    return int(_num(t))


def _enabled(t: str) -> int:
    return 1 if t.strip().lower() in ("enabled", "yes", "active") else 0


def _cuda_int(v: str) -> int:
    major, minor = (int(x) for x in v.split(".")[:2])
    return 1000 * major + 10 * minor


def _pages(t: str) -> list[int]:
    return [0x1000 * (i + 1) for i in range(int(_num(t)))]


def _put(dev: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        dev[key] = value


def _cc_from_matrix(name: str) -> list[int] | None:
    from compat.matrix import load_matrix

    row = load_matrix().gpu(name)
    if row is None:
        return None
    major, minor = str(row.cc).split(".")
    return [int(major), int(minor)]


# ------------------------------------------------------------------ nvidia-smi -q -x


def from_xml(text: str) -> dict[str, Any]:
    root = ET.fromstring(text)  # noqa: S314 - a local capture file

    def t(node: ET.Element | None, path: str) -> str | None:
        if node is None:
            return None
        el = node.find(path)
        return el.text.strip() if el is not None and el.text is not None else None

    system: dict[str, Any] = {}
    _put(system, "nvmlSystemGetDriverVersion", t(root, "driver_version"))
    cuda = t(root, "cuda_version")
    if cuda and _err(cuda) is None:
        system["nvmlSystemGetCudaDriverVersion"] = _cuda_int(cuda)
    devices = []
    notes = []
    smi: list[dict[str, Any]] = []
    for i, gpu in enumerate(root.findall("gpu")):
        d: dict[str, Any] = {}
        name = t(gpu, "product_name") or ""
        d["nvmlDeviceGetName"] = name
        d["nvmlDeviceGetUUID"] = REDACTED_UUID.format(i)
        _put(d, "nvmlDeviceGetPciInfo", {"bus_id": gpu.get("id") or t(gpu, "pci/pci_bus_id")})
        cc = _cc_from_matrix(name)
        if cc is not None:
            d["nvmlDeviceGetCudaComputeCapability"] = cc
            notes.append(f"GPU {i}: compute capability from matrix/gpus.yaml ({name})")
        mem = gpu.find("fb_memory_usage")
        if mem is not None:
            total, used, free = (_value(t(mem, k), _mib) for k in ("total", "used", "free"))
            reserved = _value(t(mem, "reserved"), _mib)
            if all(isinstance(v, int) for v in (total, used, free)):
                d["nvmlDeviceGetMemoryInfo"] = {
                    "total": total,
                    "free": free,
                    "used": used,
                    "reserved": reserved if isinstance(reserved, int) else 0,
                }
        _put(d, "nvmlDeviceGetPersistenceMode", _value(t(gpu, "persistence_mode"), _enabled))
        cur, pend = t(gpu, "mig_mode/current_mig"), t(gpu, "mig_mode/pending_mig")
        if cur is not None:
            d["nvmlDeviceGetMigMode"] = _err(cur) or [_enabled(cur), _enabled(pend or cur)]
        _put(d, "nvmlDeviceGetTemperature:0", _value(t(gpu, "temperature/gpu_temp"), _int))
        _put(
            d,
            "nvmlDeviceGetTemperatureThreshold:1",
            _value(t(gpu, "temperature/gpu_temp_slow_threshold"), _int),
        )
        reasons = gpu.find("clocks_event_reasons")
        prefix = "clocks_event_reason_"
        if reasons is None:
            reasons, prefix = gpu.find("clocks_throttle_reasons"), "clocks_throttle_reason_"
        if reasons is not None:
            mask, seen = 0, False
            for el in reasons:
                key = el.tag.removeprefix(prefix)
                if key in _REASON_BITS and el.text and _err(el.text) is None:
                    seen = True
                    if el.text.strip().lower() == "active":
                        mask |= _REASON_BITS[key]
            if seen:
                d["nvmlDeviceGetCurrentClocksEventReasons"] = mask
        power = gpu.find("gpu_power_readings")
        if power is None:
            power = gpu.find("power_readings")
        draw = t(power, "power_draw") or t(power, "instant_power_draw")
        _put(d, "nvmlDeviceGetPowerUsage", _value(draw, _mw))
        _put(d, "nvmlDeviceGetEnforcedPowerLimit", _value(t(power, "enforced_power_limit"), _mw))
        _put(d, "nvmlDeviceGetPowerManagementDefaultLimit", _value(t(power, "default_power_limit"), _mw))
        for counter, where in ((0, "volatile"), (1, "aggregate")):
            unc = t(gpu, f"ecc_errors/{where}/dram_uncorrectable") or t(
                gpu, f"ecc_errors/{where}/double_bit/total"
            )
            _put(d, f"nvmlDeviceGetTotalEccErrors:1:{counter}", _value(unc, _int))
        _put(
            d,
            "nvmlDeviceGetRetiredPages:0",
            _value(t(gpu, "retired_pages/multiple_single_bit_retirement/retired_count"), _pages),
        )
        _put(
            d,
            "nvmlDeviceGetRetiredPages:1",
            _value(t(gpu, "retired_pages/double_bit_retirement/retired_count"), _pages),
        )
        _put(
            d,
            "nvmlDeviceGetRetiredPagesPendingStatus",
            _value(t(gpu, "retired_pages/pending_retirement"), _enabled),
        )
        rr = gpu.find("remapped_rows")
        if rr is not None:
            vals = [
                t(rr, k)
                for k in (
                    "remapped_row_corr",
                    "remapped_row_unc",
                    "remapped_row_pending",
                    "remapped_row_failure",
                )
            ]
            if any(v is not None and _err(v) for v in vals) or not all(vals):
                d["nvmlDeviceGetRemappedRows"] = {"error": "NOT_SUPPORTED"}
            else:
                d["nvmlDeviceGetRemappedRows"] = [
                    _int(vals[0] or ""),
                    _int(vals[1] or ""),
                    _enabled(vals[2] or ""),
                    _enabled(vals[3] or ""),
                ]
        link = gpu.find("pci/pci_gpu_link_info")
        _put(d, "nvmlDeviceGetCurrPcieLinkGeneration", _value(t(link, "pcie_gen/current_link_gen"), _int))
        _put(d, "nvmlDeviceGetMaxPcieLinkGeneration", _value(t(link, "pcie_gen/max_link_gen"), _int))
        _put(d, "nvmlDeviceGetCurrPcieLinkWidth", _value(t(link, "link_widths/current_link_width"), _int))
        _put(d, "nvmlDeviceGetMaxPcieLinkWidth", _value(t(link, "link_widths/max_link_width"), _int))
        procs = []
        for p in gpu.findall("processes/process_info"):
            if (t(p, "type") or "C").upper().find("C") >= 0:
                used = _value(t(p, "used_memory"), _mib)
                procs.append(
                    {"pid": _int(t(p, "pid") or "0"), "used_memory": used if isinstance(used, int) else None}
                )
        d["nvmlDeviceGetComputeRunningProcesses"] = procs
        devices.append(d)
        smi.append(
            {
                "index": str(i),
                "name": name,
                "uuid": d["nvmlDeviceGetUUID"],
                "driver_version": system.get("nvmlSystemGetDriverVersion"),
                "memory.total": t(mem, "total"),
                "memory.used": t(mem, "used"),
                "memory.free": t(mem, "free"),
                "persistence_mode": t(gpu, "persistence_mode"),
                "temperature.gpu": t(gpu, "temperature/gpu_temp"),
                "power.draw": draw,
                "power.limit": t(power, "power_limit") or t(power, "current_power_limit"),
                "pci.bus_id": gpu.get("id"),
            }
        )
    return {"system": system, "devices": devices, "notes": notes, "smi": smi}


# ------------------------------------------------------------------ nvidia_gpu_exporter captures


def _section(text: str, title: str) -> str | None:
    """The body of the first `# <title>` section of an nvidia_gpu_exporter capture file."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# ") and line[2:].strip() == title:
            body = []
            j = i + 1
            while j < len(lines) and (lines[j].startswith("# $") or lines[j].startswith("####")):
                j += 1
            while j < len(lines) and not lines[j].startswith("####"):
                body.append(lines[j])
                j += 1
            return "\n".join(body).strip("\n")
    return None


def from_exporter(text: str, phase: str = "idle") -> dict[str, Any]:
    q = _section(text, f"{phase} :: query (-q)") or ""
    cuda = re.search(r"^CUDA Version\s*:\s*(\d+\.\d+)", q, re.MULTILINE)
    body = _section(text, f"{phase} :: query-gpu (csv, what the exporter parses)")
    if body is None:
        raise ValueError("no query-gpu section")
    rows = list(csv.reader(io.StringIO(body), skipinitialspace=True))
    header = [h.split(" [")[0].strip() for h in rows[0]]
    system: dict[str, Any] = {}
    devices = []
    smi: list[dict[str, Any]] = []
    for i, rec in enumerate(r for r in rows[1:] if r):
        f = dict(zip(header, (c.strip() for c in rec), strict=False))
        system["nvmlSystemGetDriverVersion"] = f["driver_version"]
        if cuda:
            system["nvmlSystemGetCudaDriverVersion"] = _cuda_int(cuda.group(1))
        d: dict[str, Any] = {"nvmlDeviceGetName": f["name"], "nvmlDeviceGetUUID": REDACTED_UUID.format(i)}
        d["nvmlDeviceGetPciInfo"] = {"bus_id": f["pci.bus_id"]}
        cc = f.get("compute_cap")
        if cc and _err(cc) is None:
            d["nvmlDeviceGetCudaComputeCapability"] = [int(x) for x in cc.split(".")]
        total, used, free = (_value(f.get(k), _mib) for k in ("memory.total", "memory.used", "memory.free"))
        reserved = _value(f.get("memory.reserved"), _mib)
        if all(isinstance(v, int) for v in (total, used, free)):
            d["nvmlDeviceGetMemoryInfo"] = {
                "total": total,
                "free": free,
                "used": used,
                "reserved": reserved if isinstance(reserved, int) else 0,
            }
        _put(d, "nvmlDeviceGetPersistenceMode", _value(f.get("persistence_mode"), _enabled))
        cur = f.get("mig.mode.current")
        if cur is not None:
            d["nvmlDeviceGetMigMode"] = _err(cur) or [
                _enabled(cur),
                _enabled(f.get("mig.mode.pending") or cur),
            ]
        _put(d, "nvmlDeviceGetTemperature:0", _value(f.get("temperature.gpu"), _int))
        active = f.get("clocks_event_reasons.active") or f.get("clocks_throttle_reasons.active")
        _put(d, "nvmlDeviceGetCurrentClocksEventReasons", _value(active, lambda s: int(s, 16)))
        _put(d, "nvmlDeviceGetPowerUsage", _value(f.get("power.draw.instant") or f.get("power.draw"), _mw))
        _put(d, "nvmlDeviceGetEnforcedPowerLimit", _value(f.get("enforced.power.limit"), _mw))
        _put(d, "nvmlDeviceGetPowerManagementDefaultLimit", _value(f.get("power.default_limit"), _mw))
        _put(
            d, "nvmlDeviceGetTotalEccErrors:1:0", _value(f.get("ecc.errors.uncorrected.volatile.total"), _int)
        )
        _put(
            d,
            "nvmlDeviceGetTotalEccErrors:1:1",
            _value(f.get("ecc.errors.uncorrected.aggregate.total"), _int),
        )
        _put(d, "nvmlDeviceGetRetiredPages:0", _value(f.get("retired_pages.single_bit_ecc.count"), _pages))
        _put(d, "nvmlDeviceGetRetiredPages:1", _value(f.get("retired_pages.double_bit.count"), _pages))
        _put(d, "nvmlDeviceGetRetiredPagesPendingStatus", _value(f.get("retired_pages.pending"), _enabled))
        rr = [f.get(f"remapped_rows.{k}") for k in ("correctable", "uncorrectable", "pending", "failure")]
        if all(v is not None for v in rr):
            if any(_err(v) for v in rr if v is not None):
                d["nvmlDeviceGetRemappedRows"] = {"error": "NOT_SUPPORTED"}
            else:
                d["nvmlDeviceGetRemappedRows"] = [
                    _int(rr[0] or ""),
                    _int(rr[1] or ""),
                    _enabled(rr[2] or ""),
                    _enabled(rr[3] or ""),
                ]
        _put(d, "nvmlDeviceGetCurrPcieLinkGeneration", _value(f.get("pcie.link.gen.current"), _int))
        _put(d, "nvmlDeviceGetMaxPcieLinkGeneration", _value(f.get("pcie.link.gen.max"), _int))
        _put(d, "nvmlDeviceGetCurrPcieLinkWidth", _value(f.get("pcie.link.width.current"), _int))
        _put(d, "nvmlDeviceGetMaxPcieLinkWidth", _value(f.get("pcie.link.width.max"), _int))
        d["nvmlDeviceGetComputeRunningProcesses"] = []
        devices.append(d)
        row = {k: f[k] for k in SMI_FIELDS if k in f}
        row["uuid"] = d["nvmlDeviceGetUUID"]
        smi.append(row)
    apps = _section(text, f"{phase} :: query-compute-apps (per-process)") or ""
    for rec in csv.reader(io.StringIO(apps), skipinitialspace=True):
        if len(rec) >= 3 and rec[0].strip().isdigit():
            pass  # per-process rows name the GPU by UUID (masked): not attributable, left out
    symbols = _section(text, "capabilities :: nvml-symbols")
    return {"system": system, "devices": devices, "notes": [], "symbols": symbols, "smi": smi}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=("xml", "exporter"))
    ap.add_argument("capture")
    ap.add_argument("--source", required=True, help="repo@commit:path of the capture")
    ap.add_argument("--name", required=True)
    ap.add_argument("--phase", default="idle")
    args = ap.parse_args(argv)
    with open(args.capture, encoding="utf-8") as fh:
        text = fh.read()
    got = from_xml(text) if args.kind == "xml" else from_exporter(text, args.phase)
    doc = {
        "schema_version": 1,
        "name": args.name,
        "sources": [{"capture": args.source, "license": "MIT", "derived_with": "tests/fake_nvml/derive.py"}],
        "notes": got["notes"],
        "system": got["system"],
        "devices": got["devices"],
    }
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
