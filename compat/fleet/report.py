"""The fleet report: many nodes' doctor reports grouped by stack, drift from the majority, sick GPUs, failed smokes.

Pure: build_fleet(nodes) takes what each node answered (a doctor document, or why there is none) and returns the
`compat fleet --json` document; render_text() prints it. Ray and file reading live elsewhere (compat.fleet.ray,
compat.fleet.merge), so both sources give the same report by construction.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import IO, Any, Optional

from compat._valueclass import valueclass
from compat.schema_version import SCHEMA_VERSION

FINGERPRINT_FACTS = (
    "driver",
    "cuda",
    "cudnn",
    "python",
    "torch",
    "torch_cuda",
    "torch_cudnn",
    "tensorflow",
    "tf_cuda",
    "tf_cudnn",
    "jax",
    "jaxlib",
)
"""Scalar facts that make a node's stack fingerprint (with "gpu", the GPU models). driver_cuda is left out: it
follows from the driver, so it would only repeat a driver drift."""
FINGERPRINT_KEYS = FINGERPRINT_FACTS + ("gpu",)

STATUSES = ("reported", "unreachable", "failed")
"""reported: the doctor answered; unreachable: the node did not answer in time (or its task was lost);
failed: the node answered but the doctor gave no report (not installed, crashed, exit 2 with one line)."""


@valueclass
class NodeInput:
    """What one node gave: a doctor document, or the reason there is none."""

    name: str
    """Host name (or the report's file name); unique within a fleet."""
    source: str
    """Where the report came from: a file path, or "ray:<node id>"."""
    status: str = "reported"
    """One of STATUSES."""
    doc: Optional[Mapping[str, Any]] = None
    """The `compat doctor --json` document (status "reported")."""
    reason: Optional[str] = None
    """Why there is no document (status "unreachable" or "failed")."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Extra keys shown with the node (Ray node id, address, seconds the doctor took)."""


# ------------------------------------------------------------------------------------------------ one node


def _obj(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _fact(facts: Mapping[str, Any], name: str) -> tuple[Optional[str], Optional[str]]:
    """(value to compare, raw to show); (None, None) when missing."""
    f = facts.get(name)
    if not isinstance(f, Mapping) or f.get("missing") or f.get("raw") is None:
        return None, None
    raw = str(f["raw"])
    value = f.get("value")
    return (str(value) if value is not None else raw), raw


def _gpu_models(doc: Mapping[str, Any]) -> Optional[str]:
    """ "8x NVIDIA A100-SXM4-80GB", "2x NVIDIA A10 + 1x NVIDIA T4", "none", or None when unknown."""
    facts = _obj(doc.get("facts"))
    gpus = facts.get("gpus", doc.get("gpus"))
    if gpus is None or not isinstance(gpus, list):
        return None
    if not gpus:
        return "none"
    names = Counter(
        str(g.get("name") or "unknown GPU") if isinstance(g, Mapping) else "unknown GPU" for g in gpus
    )
    return " + ".join(f"{n}x {name}" for name, n in sorted(names.items()))


def fingerprint(doc: Mapping[str, Any]) -> tuple[dict[str, Optional[str]], dict[str, Optional[str]]]:
    """(values compared, raw strings shown) for FINGERPRINT_KEYS."""
    facts = _obj(doc.get("facts"))
    values: dict[str, Optional[str]] = {}
    shown: dict[str, Optional[str]] = {}
    for name in FINGERPRINT_FACTS:
        values[name], shown[name] = _fact(facts, name)
    values["gpu"] = shown["gpu"] = _gpu_models(doc)
    return values, shown


def _summary(f: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(f.get("id")),
        "title": str(f.get("title")),
        "group": str(f.get("group") or "stack"),
    }
    if isinstance(f.get("facts"), Mapping):
        out["facts"] = dict(f["facts"])
    return out


def _findings(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [f for f in doc.get("findings") or [] if isinstance(f, Mapping)]


def unhealthy_gpus(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The doctor's GPU health findings (group "health", ids gpu.*): Xid, ECC, retired pages, thermal, throttling,
    power cap, PCIe link."""
    out: list[dict[str, Any]] = []
    for f in _findings(doc):
        fid = str(f.get("id") or "")
        if f.get("group") != "health" or not fid.startswith("gpu."):
            continue
        facts = _obj(f.get("facts"))
        gpu = facts.get("gpu")
        out.append(
            {
                "id": fid,
                "severity": str(f.get("severity")),
                "title": str(f.get("title")),
                "gpu": gpu if isinstance(gpu, int) else None,
                "pci": list(facts["pci"]) if isinstance(facts.get("pci"), list) else None,
            }
        )
    out.sort(
        key=lambda g: (
            {"error": 0, "warning": 1}.get(g["severity"], 2),
            g["gpu"] if g["gpu"] is not None else -1,
            g["id"],
        )
    )
    return out


def smoke_outcome(doc: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The node's smoke run (None when the doctor ran none)."""
    s = doc.get("smoke")
    if not isinstance(s, Mapping):
        return None
    status = str(s.get("status"))
    return {
        "status": status,
        "failed": status in ("failed", "crashed", "timed_out"),
        "cause": s.get("cause"),
        "signal": s.get("signal"),
        "message": s.get("message"),
        "framework": s.get("framework"),
        "device": s.get("device"),
    }


# ------------------------------------------------------------------------------------------------ the fleet


def _key(values: Mapping[str, Optional[str]]) -> tuple[Optional[str], ...]:
    return tuple(values.get(k) for k in FINGERPRINT_KEYS)


def _drift(
    reported: Sequence[tuple[str, dict[str, Optional[str]], dict[str, Optional[str]]]],
) -> list[dict[str, Any]]:
    """Per fact: the majority value and the nodes that differ from it. A tie has no majority: every node of the
    fact is then listed as differing."""
    out = []
    for name in FINGERPRINT_KEYS:
        by_value: dict[Optional[str], list[str]] = {}
        shown: dict[Optional[str], Optional[str]] = {}
        for node, values, raw in reported:
            v = values.get(name)
            by_value.setdefault(v, []).append(node)
            shown.setdefault(v, raw.get(name))
        if len(by_value) < 2:
            continue
        ranked = sorted(by_value.items(), key=lambda kv: (-len(kv[1]), kv[0] is None, str(kv[0])))
        top = len(ranked[0][1])
        has_majority = len(ranked[1][1]) < top
        majority = ranked[0][0]
        drifted = sorted(n for v, ns in ranked for n in ns if not has_majority or v != majority)
        out.append(
            {
                "fact": name,
                "majority": shown[majority] if has_majority else None,
                "has_majority": has_majority,
                "majority_count": top if has_majority else 0,
                "values": [
                    {"value": shown[v], "missing": v is None, "nodes": sorted(ns)} for v, ns in ranked
                ],
                "nodes": drifted,
            }
        )
    return out


def _verdict(nodes: Sequence[Mapping[str, Any]], drift: Sequence[Any], duplicates: Sequence[Any]) -> str:
    if drift or any(n["status"] != "reported" or n["errors"] for n in nodes):
        return "error"
    if duplicates or any(n["warnings"] for n in nodes):
        return "warning"
    return "ok"


def build_fleet(
    inputs: Sequence[NodeInput],
    *,
    source: str,
    duplicates: Sequence[Mapping[str, Any]] = (),
    extra: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """The `compat fleet --json` document. `inputs` must have unique names (merge sorts duplicates out first)."""
    nodes: list[dict[str, Any]] = []
    reported: list[tuple[str, dict[str, Optional[str]], dict[str, Optional[str]]]] = []
    for n in sorted(inputs, key=lambda x: x.name):
        entry: dict[str, Any] = {
            "name": n.name,
            "source": n.source,
            "status": n.status,
            "reason": n.reason,
            "verdict": None,
            "group": None,
            "fingerprint": None,
            "drift": [],
            "errors": [],
            "warnings": [],
            "unhealthy_gpus": [],
            "smoke": None,
        }
        entry.update({k: n.meta[k] for k in sorted(n.meta)})
        if n.status == "reported" and n.doc is not None:
            values, shown = fingerprint(n.doc)
            reported.append((n.name, values, shown))
            entry["verdict"] = n.doc.get("verdict")
            entry["fingerprint"] = shown
            entry["_key"] = _key(values)
            entry["errors"] = [_summary(f) for f in _findings(n.doc) if f.get("severity") == "error"]
            entry["warnings"] = [_summary(f) for f in _findings(n.doc) if f.get("severity") == "warning"]
            entry["unhealthy_gpus"] = unhealthy_gpus(n.doc)
            entry["smoke"] = smoke_outcome(n.doc)
            entry["matrix_updated"] = (
                (n.doc.get("matrix") or {}).get("updated")
                if isinstance(n.doc.get("matrix"), Mapping)
                else None
            )
        nodes.append(entry)

    # Groups: one per distinct fingerprint, the largest first.
    members: dict[tuple[Optional[str], ...], list[dict[str, Any]]] = {}
    for e in nodes:
        if "_key" in e:
            members.setdefault(e["_key"], []).append(e)
    ordered = sorted(members.items(), key=lambda kv: (-len(kv[1]), kv[1][0]["name"]))
    groups = []
    for i, (_, es) in enumerate(ordered):
        for e in es:
            e["group"] = i
        groups.append(
            {
                "id": i,
                "size": len(es),
                "nodes": [e["name"] for e in es],
                "fingerprint": dict(es[0]["fingerprint"]),
            }
        )
    for e in nodes:
        e.pop("_key", None)

    drift = _drift(reported)
    by_name = {e["name"]: e for e in nodes}
    for d in drift:
        for name in d["nodes"]:
            by_name[name]["drift"].append(d["fact"])
    sick = [{"node": e["name"], **g} for e in nodes for g in e["unhealthy_gpus"]]
    smoke_failed = [
        {"node": e["name"], **{k: v for k, v in e["smoke"].items() if k != "failed"}}
        for e in nodes
        if e["smoke"] and e["smoke"]["failed"]
    ]
    counts = Counter(e["status"] for e in nodes)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "verdict": _verdict(nodes, drift, duplicates),
        "source": source,
        "summary": {
            "nodes": len(nodes),
            "reported": counts["reported"],
            "unreachable": counts["unreachable"],
            "failed": counts["failed"],
            "groups": len(groups),
            "drift": len(drift),
            "nodes_with_errors": sum(1 for e in nodes if e["errors"]),
            "nodes_with_warnings": sum(1 for e in nodes if e["warnings"]),
            "unhealthy_gpus": len(sick),
            "smoke_failed": len(smoke_failed),
            "duplicates": len(duplicates),
        },
        "nodes": nodes,
        "groups": groups,
        "drift": drift,
        "unhealthy_gpus": sick,
        "smoke_failed": smoke_failed,
        "unreachable": [
            {"node": e["name"], "reason": e["reason"]} for e in nodes if e["status"] == "unreachable"
        ],
        "failed": [{"node": e["name"], "reason": e["reason"]} for e in nodes if e["status"] == "failed"],
        "duplicates": [dict(d) for d in duplicates],
    }
    for k in sorted(extra or {}):
        doc[k] = (extra or {})[k]
    return doc


def at_or_above(doc: Mapping[str, Any], level: str) -> bool:
    rank = {"ok": 0, "warning": 1, "error": 2}
    return rank.get(str(doc.get("verdict")), 2) >= rank[level]


# ------------------------------------------------------------------------------------------------ text


def _fp_line(fp: Mapping[str, Any], highlight: Sequence[str] = ()) -> str:
    parts = []
    for k in FINGERPRINT_KEYS:
        v = fp.get(k)
        if v is None and k not in highlight:
            continue
        text = f"{k} {v if v is not None else 'missing'}"
        parts.append(f"{text} (drift)" if k in highlight else text)
    return " · ".join(parts) or "no facts"


def render_text(doc: Mapping[str, Any], stream: Optional[IO[str]] = None) -> str:
    """`compat fleet` without --json."""
    from compat._text import sanitize_tree
    from compat.render import Style, use_color

    doc = sanitize_tree(doc)  # host names and reasons come from other machines: no control codes of theirs
    out = stream or sys.stdout
    st = Style(use_color(out))
    s = doc["summary"]
    verdict = str(doc["verdict"])
    parts = [f"{s['nodes']} node{'s' if s['nodes'] != 1 else ''}: {s['reported']} reported"]
    for key, label in (("unreachable", "unreachable"), ("failed", "without a report")):
        if s[key]:
            parts.append(f"{s[key]} {label}")
    extra = []
    for key, label in (
        ("drift", "drifting fact"),
        ("unhealthy_gpus", "unhealthy GPU"),
        ("smoke_failed", "failed smoke run"),
        ("duplicates", "duplicate report"),
    ):
        if s[key]:
            extra.append(f"{s[key]} {label}{'s' if s[key] != 1 else ''}")
    head = f"compat fleet: {st(verdict.upper(), 'ok' if verdict == 'ok' else verdict)}  ({', '.join(parts)}"
    lines = [head + ("; " + ", ".join(extra) if extra else "") + ")"]
    mark = {"error": st("✗", "error"), "warning": st("!", "warning"), "ok": st("✓", "ok")}

    drift_by_node = {e["name"]: e["drift"] for e in doc["nodes"]}
    if doc["groups"]:
        lines += [
            "",
            st(f"Stacks ({len(doc['groups'])} group{'s' if len(doc['groups']) != 1 else ''})", "bold"),
        ]
        for g in doc["groups"]:
            names = g["nodes"]
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            lines.append(f"  [{g['id'] + 1}] {g['size']} node{'s' if g['size'] != 1 else ''}: {shown}")
            lines.append(st(f"      {_fp_line(g['fingerprint'], drift_by_node.get(names[0], []))}", "dim"))
    if doc["drift"]:
        lines += ["", st("Drift from the majority", "bold")]
        for d in doc["drift"]:
            others = d["values"][1:] if d["has_majority"] else d["values"]
            desc = "; ".join(
                f"{', '.join(v['nodes'][:6])}{' …' if len(v['nodes']) > 6 else ''} "
                f"{'has' if len(v['nodes']) == 1 else 'have'} {v['value'] if not v['missing'] else 'none'}"
                for v in others
            )
            if d["has_majority"]:
                maj = d["majority"] if d["majority"] is not None else "missing"
                lines.append(
                    f"  {mark['error']} {d['fact']}: {maj} on {d['majority_count']} of {s['reported']} nodes; "
                    f"{desc}"
                )
            else:
                lines.append(f"  {mark['error']} {d['fact']}: no majority; {desc}")
    if doc["unhealthy_gpus"]:
        lines += ["", st("Unhealthy GPUs", "bold")]
        for g in doc["unhealthy_gpus"]:
            lines.append(f"  {mark.get(g['severity'], '!')} {g['node']}: {g['title']} [{g['id']}]")
    if doc["smoke_failed"]:
        lines += ["", st("Smoke runs that failed", "bold")]
        for f in doc["smoke_failed"]:
            why = f" ({f['cause']})" if f.get("cause") else ""
            lines.append(
                f"  {mark['error']} {f['node']}: {str(f['status']).replace('_', ' ')}{why}: {f.get('message') or ''}"
            )
    missing = [e for e in doc["nodes"] if e["status"] != "reported"]
    if missing:
        lines += ["", st("No report", "bold")]
        for e in missing:
            lines.append(f"  {mark['error']} {e['name']}: {e['status']}: {e['reason']}")
    if doc["duplicates"]:
        lines += ["", st("Duplicate reports (the first one is used)", "bold")]
        for d in doc["duplicates"]:
            lines.append(f"  {mark['warning']} {d['name']}: {', '.join(d['sources'])}")
    reported = [e for e in doc["nodes"] if e["status"] == "reported"]
    if reported:
        lines += ["", st("Nodes", "bold")]
        for e in reported:
            v = str(e["verdict"])
            n_err, n_warn = len(e["errors"]), len(e["warnings"])
            counts = ", ".join(
                x
                for x in (
                    f"{n_err} error{'s' if n_err != 1 else ''}" if n_err else "",
                    f"{n_warn} warning{'s' if n_warn != 1 else ''}" if n_warn else "",
                )
                if x
            )
            grp = f"stack [{e['group'] + 1}]" if e["group"] is not None else ""
            lines.append(
                f"  {mark.get(v, '?')} {e['name']}: {st(v.upper(), 'ok' if v == 'ok' else v)}"
                f"{'  ' + counts if counts else ''}  {st(grp, 'dim')}".rstrip()
            )
            for f in e["errors"]:
                lines.append(f"      {mark['error']} {f['title']} [{f['id']}]")
            for f in e["warnings"]:
                lines.append(f"      {mark['warning']} {f['title']} [{f['id']}]")
    return "\n".join(lines) + "\n"


__all__ = [
    "FINGERPRINT_KEYS",
    "STATUSES",
    "NodeInput",
    "at_or_above",
    "build_fleet",
    "fingerprint",
    "render_text",
    "smoke_outcome",
    "unhealthy_gpus",
]
