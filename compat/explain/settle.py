"""Settling an inconclusive answer (a bare death) from what the doctor's probes read on the machine: the
kernel log's OOM kills and Xid events, and the cgroup's memory.events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compat.explain.diagnosis import Diagnosis, Evidence


def _events(probes: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], Any, bool]:
    """(OOM kills, Xid events, cgroup oom_kill count, whether the kernel log was read) from the probes."""
    health = probes.get("health")
    ooms: list[Mapping[str, Any]] = []
    xids: list[Mapping[str, Any]] = []
    read = False
    if isinstance(health, Mapping) and health.get("status") not in ("timeout", "error"):
        read = isinstance(health.get("oom"), list) or isinstance(health.get("xid"), list)
        ooms = [e for e in health.get("oom") or [] if isinstance(e, Mapping)]
        xids = [e for e in health.get("xid") or [] if isinstance(e, Mapping)]
    res = probes.get("resources")
    cg = res.get("cgroup") if isinstance(res, Mapping) else None
    kills = cg.get("oom_kills") if isinstance(cg, Mapping) else None
    return ooms, xids, kills if isinstance(kills, int) and not isinstance(kills, bool) else None, read


def settle_suspects(diags: list[Diagnosis], probes: Mapping[str, Any]) -> list[Diagnosis]:
    """Reorder an inconclusive answer by what the machine saw: an OOM kill (kernel log or the cgroup's
    memory.events) names host_oom, an Xid names hardware_xid; the latest event wins when both are there."""
    from dataclasses import replace

    ooms, xids, kills, read = _events(probes)
    found: dict[str, tuple[str, str]] = {}
    if ooms:
        o = ooms[-1]
        found["host_oom"] = (
            str(o.get("time") or ""),
            f"kernel log: the OOM killer killed {o.get('process')} (pid {o.get('pid')})"
            + (f" at {o.get('time')}" if o.get("time") else "")
            + (" at a cgroup (container) limit" if o.get("cgroup") else "")
            + f"; {len(ooms)} OOM kill(s) in the log",
        )
    elif kills:
        found["host_oom"] = ("", f"cgroup memory.events: oom_kill {kills} (this cgroup hit its memory limit)")
    if xids:
        x = xids[-1]
        found["hardware_xid"] = (
            str(x.get("time") or ""),
            f"kernel log: Xid {x.get('code')} on {x.get('pci')}"
            + (f" at {x.get('time')}" if x.get("time") else "")
            + (f" ({x.get('process')})" if x.get("process") else "")
            + f": {str(x.get('message') or '')[:120]}",
        )
    if not found:
        if not read:
            return diags
        note = "the kernel log shows no OOM kill and no Xid"
        rest = [d for d in diags if d.category not in ("host_oom", "hardware_xid")]
        ruled = [
            replace(d, confidence=round(d.confidence * 0.5, 2), facts={**d.facts, "doctor": note})
            for d in diags
            if d.category in ("host_oom", "hardware_xid")
        ]
        return [replace(d, facts={**d.facts, "doctor": note}) for d in rest] + ruled
    named = sorted(found, key=lambda c: found[c][0], reverse=True)
    out: list[Diagnosis] = []
    for i, c in enumerate(named):
        d = next((x for x in diags if x.category == c), None)
        if d is None:
            continue
        ev = found[c][1]
        out.append(
            replace(
                d,
                confidence=0.85 if i == 0 else 0.6,
                title=d.title.removeprefix("Suspected: "),
                evidence=(*d.evidence, ev),
                evidence_at=(*d.evidence_at, Evidence(0, ev)),
                explanation=f"The machine confirms it - {ev}. " + d.explanation,
                facts={**d.facts, "doctor": ev},
                suspected=False,
            )
        )
    return out + [d for d in diags if d.category not in found]
