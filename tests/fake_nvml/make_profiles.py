"""Regenerate tests/data/nvml_profiles/*.json from public nvidia-smi captures (see that folder's README.md).

    python -m tests.fake_nvml.make_profiles CAPTURE_DIR

CAPTURE_DIR holds the capture files named as in CAPTURES, checked out at the cited commits (both repositories are
MIT-licensed; the captures themselves are not copied into this repository, only the values derived from them).
Edits on top of a capture (an A100 with MIG turned off, a degraded GPU, an old driver's missing functions) are
listed in each profile's "edits" with the reason and the evidence.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from tests.fake_nvml.derive import from_exporter, from_xml

TG = "influxdata/telegraf"
EX = "utkuozdemir/nvidia_gpu_exporter"
TG_V13 = "58ff61d01be05ec0d4c2f57c8c89031e026fa0b9"
OUT = Path(__file__).resolve().parents[1] / "data" / "nvml_profiles"

# name -> (kind, file, repo, commit, path in the repo, description)
CAPTURES: dict[str, tuple[str, str, str, str, str, str]] = {
    "geforce-rtx-3090": (
        "xml",
        "3090-v13.xml",
        TG,
        TG_V13,
        "plugins/inputs/nvidia_smi/testdata/3090-v13.xml",
        "GeForce RTX 3090, driver 590.44.01: ECC, MIG, remapped rows and retired pages read N/A",
    ),
    "geforce-rtx-4080-super": (
        "exporter",
        "linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05.txt",
        EX,
        "0eee0d3187e2f014f1ba6736fd729a195e13a8c8",
        "internal/captures/linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05.txt",
        "GeForce RTX 4080 SUPER, driver 595.71.05",
    ),
    "rtx-4000-sff-ada": (
        "xml",
        "rtx-4000-sff-ada-v13.xml",
        TG,
        "ffe7345fca193ef46cba1690be8fc77c629eaa3b",
        "plugins/inputs/nvidia_smi/testdata/rtx-4000-sff-ada-v13.xml",
        "workstation card RTX 4000 SFF Ada, driver 595.84, ECC off, PCIe link idling at gen 1",
    ),
    "rtx-a5000-x2": (
        "xml",
        "dual_a5000-v13.xml",
        TG,
        TG_V13,
        "plugins/inputs/nvidia_smi/testdata/dual_a5000-v13.xml",
        "two workstation RTX A5000, driver 590.44.01",
    ),
    "t4": (
        "xml",
        "tesla-t4.xml",
        TG,
        "cd535165d06debedae7b5caed1816f3a6275a6da",
        "plugins/inputs/nvidia_smi/testdata/tesla-t4.xml",
        "Tesla T4, driver 515.105.01, one process, PCIe link at x8 of x16",
    ),
    "a100-sxm4-80gb-mig": (
        "xml",
        "a100-sxm4-v12.xml",
        TG,
        "6f6d5b5be846be5f5c26804c9412ba72a8dc7a27",
        "plugins/inputs/nvidia_smi/testdata/a100-sxm4-v12.xml",
        "A100-SXM4-80GB with MIG enabled, driver 535.54.03 (remapped rows read N/A in MIG mode)",
    ),
    "h100-80gb-hbm3": (
        "exporter",
        "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt",
        EX,
        "f6977bb790011483824091c916da991ae7ca97cf",
        "internal/captures/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt",
        "H100 80GB HBM3, driver 590.48.01",
    ),
    "h100-mig": (
        "exporter",
        "linux-x86_64__nvidia-h100-mig__590.48.01.txt",
        EX,
        "f6977bb790011483824091c916da991ae7ca97cf",
        "internal/captures/linux-x86_64__nvidia-h100-mig__590.48.01.txt",
        "H100 80GB HBM3 with MIG enabled, driver 590.48.01",
    ),
    "h200": (
        "exporter",
        "linux-x86_64__nvidia-h200__590.48.01.txt",
        EX,
        "0eee0d3187e2f014f1ba6736fd729a195e13a8c8",
        "internal/captures/linux-x86_64__nvidia-h200__590.48.01.txt",
        "H200, driver 590.48.01",
    ),
    "h200-mig": (
        "exporter",
        "linux-x86_64__nvidia-h200-mig__590.48.01.txt",
        EX,
        "0eee0d3187e2f014f1ba6736fd729a195e13a8c8",
        "internal/captures/linux-x86_64__nvidia-h200-mig__590.48.01.txt",
        "H200 with MIG enabled, driver 590.48.01",
    ),
    "l40s": (
        "exporter",
        "linux-x86_64__nvidia-l40s__595.80.txt",
        EX,
        "0eee0d3187e2f014f1ba6736fd729a195e13a8c8",
        "internal/captures/linux-x86_64__nvidia-l40s__595.80.txt",
        "L40S, driver 595.80",
    ),
    "rtx-pro-6000-blackwell-maxq": (
        "xml",
        "pro-6000-maxq-blackwell-v13.xml",
        TG,
        TG_V13,
        "plugins/inputs/nvidia_smi/testdata/pro-6000-maxq-blackwell-v13.xml",
        "RTX PRO 6000 Blackwell Max-Q Workstation Edition, driver 590.44.01, 64 GiB in use",
    ),
    "quadro-p400-driver-418": (
        "xml",
        "quadro-p400.xml",
        TG,
        TG_V13,
        "plugins/inputs/nvidia_smi/testdata/quadro-p400.xml",
        "Quadro P400 on driver 418.43: an NVML that lacks the newer functions pynvml calls",
    ),
}

# Evidence for the functions an old libnvidia-ml.so does not export (pynvml then raises FunctionNotFound).
EVENT_REASONS_EVIDENCE = (
    "the R525 NVML API reference (docs.nvidia.com/deploy/nvml-api, 'vR525') documents only "
    "nvmlDeviceGetCurrentClocksThrottleReasons; nvmlDeviceGetCurrentClocksEventReasons first appears in the R535/R550 "
    "reference, and this capture's nvidia-smi still prints <clocks_throttle_reasons>"
)
PROCS_EVIDENCE = (
    "drivers 430 and 440.59 export no nvmlDeviceGetComputeRunningProcesses_v2 "
    "(github.com/gpuopenanalytics/pynvml/issues/43, github.com/NVIDIA/k8s-device-plugin/issues/331), so no _v3 either"
)
R418_EVIDENCE = (
    "nvidia-smi 418.43 prints no <mig_mode> and no <remapped_rows> section (both came with the A100, R450)"
)


def _proc_version(driver: str) -> str:
    # The layout of /proc/driver/nvidia/version as recorded in tests/data/doctor/proc_version/ (550.54.15-ubuntu20.txt);
    # the version is the capture's driver; the build date and GCC line are placeholders and are never read as facts.
    return f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  Thu Jan  1 00:00:00 UTC 2026\nGCC version:  gcc version 12.2.0\n"


def _host(doc: dict[str, Any]) -> dict[str, Any]:
    n = len(doc["devices"])
    driver = doc["system"].get("nvmlSystemGetDriverVersion")
    return {
        "proc_version": _proc_version(driver) if isinstance(driver, str) else None,
        "dev_nodes": ["nvidiactl", "nvidia-uvm", *(f"nvidia{i}" for i in range(n))],
    }


def _rename(dev: dict[str, Any], old: str, new: str) -> None:
    if old in dev:
        dev[new] = dev.pop(old)


def build(cap_dir: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, (kind, fname, repo, commit, path, desc) in CAPTURES.items():
        text = (cap_dir / fname).read_text(encoding="utf-8")
        got = from_xml(text) if kind == "xml" else from_exporter(text)
        doc: dict[str, Any] = {
            "schema_version": 1,
            "name": name,
            "description": desc,
            "sources": [
                {
                    "repo": repo,
                    "commit": commit,
                    "path": path,
                    "license": "MIT",
                    "format": "nvidia-smi -q -x" if kind == "xml" else "nvidia-smi --query-gpu csv and -q",
                }
            ],
            "notes": got["notes"],
            "edits": [],
            "missing_functions": [],
            "system": got["system"],
            "devices": got["devices"],
            # What nvidia-smi printed for the --query-gpu fields compat asks for (the fake nvidia-smi replays it).
            "nvidia_smi": {"query_gpu": got["smi"]},
        }
        if name == "t4":
            doc["missing_functions"] = ["nvmlDeviceGetCurrentClocksEventReasons"]
            doc["edits"].append(
                {"what": "clocks event reasons under the older function name", "why": EVENT_REASONS_EVIDENCE}
            )
            for d in doc["devices"]:
                _rename(
                    d, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"
                )
        if name == "quadro-p400-driver-418":
            doc["missing_functions"] = [
                "nvmlDeviceGetCurrentClocksEventReasons",
                "nvmlDeviceGetComputeRunningProcesses_v2",
                "nvmlDeviceGetComputeRunningProcesses_v3",
                "nvmlDeviceGetGraphicsRunningProcesses_v2",
                "nvmlDeviceGetGraphicsRunningProcesses_v3",
                "nvmlDeviceGetRemappedRows",
                "nvmlDeviceGetMigMode",
            ]
            doc["edits"] += [
                {"what": "no nvmlDeviceGetCurrentClocksEventReasons", "why": EVENT_REASONS_EVIDENCE},
                {"what": "no _v2/_v3 running-process functions", "why": PROCS_EVIDENCE},
                {"what": "no nvmlDeviceGetRemappedRows, no nvmlDeviceGetMigMode", "why": R418_EVIDENCE},
            ]
            for d in doc["devices"]:
                _rename(
                    d, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"
                )
            # An nvidia-smi this old rejects the field (tests/data/doctor/nvidia_smi/failed-compute-cap-field.txt).
            doc["nvidia_smi"]["invalid_fields"] = ["compute_cap"]
        doc["host"] = _host(doc)
        out[name] = doc
    # A100 without MIG: no public capture of one was found; the A100 capture with MIG switched off, nothing else.
    nomig = copy.deepcopy(out["a100-sxm4-80gb-mig"])
    nomig["name"] = "a100-sxm4-80gb"
    nomig["description"] = (
        "A100-SXM4-80GB, MIG disabled (the MIG capture with MIG mode off; no public capture found)"
    )
    nomig["edits"] = [
        {
            "what": "nvmlDeviceGetMigMode [1, 1] -> [0, 0]",
            "why": "no public nvidia-smi capture of an A100 with MIG disabled was found; only the mode is changed",
        }
    ]
    for d in nomig["devices"]:
        d["nvmlDeviceGetMigMode"] = [0, 0]
    out["a100-sxm4-80gb"] = nomig
    # A node of four H100s, GPU 2 degraded: the H100 capture's values, with the faults injected on GPU 2.
    base = out["h100-80gb-hbm3"]
    node = copy.deepcopy(base)
    node["name"] = "h100-x4-one-degraded"
    node["description"] = (
        "four H100 80GB HBM3 (the H100 capture x4); GPU 2 degraded: uncorrectable ECC, pending row remap, PCIe x8, HW slowdown"
    )
    node["devices"] = []
    for i in range(4):
        d = copy.deepcopy(base["devices"][0])
        d["nvmlDeviceGetUUID"] = f"GPU-00000000-0000-0000-0000-{i:012d}"
        d["nvmlDeviceGetPciInfo"] = {"bus_id": f"00000000:{0x18 + 0x20 * i:02X}:00.0"}
        node["devices"].append(d)
    bad = node["devices"][2]
    bad["nvmlDeviceGetTotalEccErrors:1:0"] = 3
    bad["nvmlDeviceGetTotalEccErrors:1:1"] = 3
    bad["nvmlDeviceGetRemappedRows"] = [0, 2, 1, 0]
    bad["nvmlDeviceGetCurrPcieLinkWidth"] = 8
    bad["nvmlDeviceGetCurrentClocksEventReasons"] = 0x8
    rows = node["nvidia_smi"]["query_gpu"]
    node["nvidia_smi"]["query_gpu"] = [
        {
            **rows[0],
            "index": str(i),
            "uuid": node["devices"][i]["nvmlDeviceGetUUID"],
            "pci.bus_id": node["devices"][i]["nvmlDeviceGetPciInfo"]["bus_id"],
        }
        for i in range(4)
    ]
    node["edits"] = [
        {
            "what": "GPU 2: 3 uncorrectable volatile/aggregate ECC errors, remapped rows (0, 2, pending, no failure), "
            "PCIe width 8 of 16, clocks event reason HW slowdown (0x8); bus ids and redacted UUIDs per GPU",
            "why": "an injected fault scenario on real base values; the kernel-log side of a row remap is "
            "tests/data/doctor/kernel_log/xid63-row-remap.txt",
        }
    ]
    node["host"] = _host(node)
    out["h100-x4-one-degraded"] = node
    return out


def main() -> None:
    cap_dir = Path(sys.argv[1])
    OUT.mkdir(parents=True, exist_ok=True)
    for name, doc in sorted(build(cap_dir).items()):
        (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(name)


if __name__ == "__main__":
    main()
