"""Regenerate the doctor reports under tests/data/fleet/ (see README.md). Not a test; run by hand:

    cd /work/main && .venv/bin/python tests/data/fleet/make_reports.py

Each report is what `compat doctor --json` prints, produced by the doctor's own code path: gather_facts() with the
fake NVML backend of tests/doctor/fakes.py serving the recorded H100 (tests/data/doctor/nvml/h100-580.159.04.json,
here as eight boards) plus COMPAT_OVERRIDE_* for the rest of the stack, the kernel-log parser on a recorded log,
check_stack() with the doctor's checks, and the smoke job's own smoke_findings(). Only the machine-specific noise of the
generating host is replaced (its kernel log, which has nothing to do with these nodes).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT)]

from compat.checks.doctor import doctor_checks  # noqa: E402
from compat.findings import Fix, Skip  # noqa: E402
from compat.matrix import get_matrix  # noqa: E402
from compat.pipeline.check import check_stack  # noqa: E402
from compat.probes import gather_facts  # noqa: E402
from compat.probes.health import parse_log  # noqa: E402
from compat.render import dumps  # noqa: E402
from compat.smoke import SmokeResult, smoke_findings  # noqa: E402
from tests.doctor.fakes import FakeNvml, data, env_with  # noqa: E402

H100 = json.loads(data("nvml", "h100-580.159.04.json"))
XID79_LOG = data("kernel_log", "xid79-rtx5080.txt")  # Xid 79 on PCI 0000:2b:00
BUSES = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]  # an HGX H100 board's PCI buses (8 GPUs)
STACK = {
    "COMPAT_OVERRIDE_CUDA": "12.8",
    "COMPAT_OVERRIDE_CUDNN": "9.10.2",
    "COMPAT_OVERRIDE_TORCH": "2.8.0",
    "COMPAT_OVERRIDE_TENSORFLOW": "",
}
HOT = 0x40  # NVML clocks-event reason: hw_thermal_slowdown


def nvml_doc(
    driver: str = "580.159.04", xid_gpu: Optional[int] = None, hot_gpu: Optional[int] = None
) -> dict[str, Any]:
    dev0 = H100["devices"][0]
    devices = []
    for i, bus in enumerate(BUSES):
        d = copy.deepcopy(dev0)
        # The GPU the recorded Xid 79 names sits on bus 2b; the others keep the board's layout.
        d["pci_bus_id"] = f"00000000:{'2B' if i == xid_gpu else bus}:00.0"
        d["uuid"] = f"GPU-{i:08x}-0000-0000-0000-000000000000"
        d["memory"] = {
            "total": dev0["memory"]["total"],
            "used": 4 * 2**20,
            "free": dev0["memory"]["total"] - 4 * 2**20,
        }
        d["temperature"] = 91 if i == hot_gpu else 34
        d["temperature_slowdown"] = 87
        d["clocks_event_reasons"] = HOT if i == hot_gpu else 0x1
        d["ecc_volatile"] = 0
        d["ecc_aggregate"] = 0
        d["pcie"] = [5, 5, 16, 16]
        devices.append(d)
    return {**{k: v for k, v in H100.items() if k != "devices"}, "driver_version": driver, "devices": devices}


def report(
    host: str,
    *,
    driver: str = "580.159.04",
    cudnn: str = "9.10.2",
    xid_gpu: Optional[int] = None,
    hot_gpu: Optional[int] = None,
    smoke: Optional[SmokeResult] = None,
) -> dict[str, Any]:
    env = env_with(**{**STACK, "COMPAT_OVERRIDE_CUDNN": cudnn})  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
    facts = gather_facts(environ=env, nvml=FakeNvml(nvml_doc(driver, xid_gpu, hot_gpu)), frameworks=False)
    log = XID79_LOG if xid_gpu is not None else ""
    probes = dict(facts.probes)
    probes["health"] = {"status": "ok", "source": "dmesg", "tried": [], **parse_log(log)}
    from dataclasses import replace

    facts = replace(facts, probes=probes)
    m = get_matrix(str(ROOT / "matrix"))
    rep = check_stack(facts, m, extra_checks=doctor_checks)
    if smoke is None:
        rep.skipped.append(Skip("smoke", "--no-smoke"))
    else:
        rep.findings.extend(smoke_findings(smoke))
        rep.extra["smoke"] = smoke.to_json()
    rep.extra["host"] = host
    rep.extra["probes"] = dict(facts.probes)
    rep.extra["gpus"] = None if facts.gpus is None else [g.to_json() for g in facts.gpus]
    return rep.to_json()


def crashed_smoke() -> SmokeResult:
    return SmokeResult(
        verdict="crashed",
        framework="torch",
        framework_version="2.8.0",
        device="cuda",
        device_name="NVIDIA H100 80GB HBM3",
        steps=0,
        seconds=6.2,
        signal="SIGSEGV",
        cause="segfault",
        message="the smoke child died of SIGSEGV during first_step",
        fixes=(
            Fix(
                "See where it crashed: Python's fault handler prints the stack on a native crash",
                "python -X faulthandler your_training_script.py",
            ),
        ),
        details={
            "requested_framework": "auto",
            "requested_device": "auto",
            "stage": "first_step",
            "exit_code": -11,
            "diagnosis": {
                "category": "segfault",
                "title": "The training process crashed in native code (SIGSEGV)",
                "evidence": None,
                "explanation": None,
                "source": "signal",
            },
        },
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    cluster = HERE / "cluster-a"
    nodes: dict[str, dict[str, Any]] = {
        "gpu-a01": {},
        "gpu-a02": {"xid_gpu": 3},
        "gpu-a03": {"hot_gpu": 5},
        "gpu-a04": {"driver": "570.172.08"},
        "gpu-a05": {"xid_gpu": 1},
        "gpu-a06": {"cudnn": "9.1.0"},
        "gpu-a07": {"smoke": crashed_smoke()},
        "gpu-a08": {},
    }
    for host, kw in nodes.items():
        write(cluster / f"{host}.json", dumps(report(host, **kw)) + "\n")
    # srun without --output=%N: every node's report concatenated into one file.
    write(HERE / "srun-all.json", "".join(dumps(report(h)) + "\n" for h in ("gpu-b01", "gpu-b02")))
    # JSON lines (a log shipper, `jq -c`).
    write(
        HERE / "nodes.jsonl",
        "".join(json.dumps(report(h), sort_keys=True) + "\n" for h in ("gpu-c01", "gpu-c02")),
    )
    # A report from a doctor that did not record the host: named after its file.
    doc = report("unused")
    del doc["host"]
    write(HERE / "no-host" / "rack7-node3.json", dumps(doc) + "\n")
    # The same node reported twice (a re-run): a different report with the same host.
    write(HERE / "dup" / "gpu-a01-rerun.json", dumps(report("gpu-a01", driver="570.172.08")) + "\n")


if __name__ == "__main__":
    main()
