"""Write the JSON Schemas (draft 2020-12) of compat's output documents to compat/schema/ and docs/schema/.

    python tools/output_schemas.py

The schemas are the public contract of `--json` / `--format json`: required keys are the keys every document of
that kind has today; more keys may be added (additionalProperties stays open), none removed. The tests in
tests/output/ validate every command's real output against them and check that both folders are identical.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASE = "https://compat.invalid/schema/"  # an identifier, not a download location
SV = 1  # compat.schema_version.SCHEMA_VERSION (checked by tests/output/test_schema.py)

STR_NULL = {"type": ["string", "null"]}
INT_NULL = {"type": ["integer", "null"]}
NUM_NULL = {"type": ["number", "null"]}
BOOL_NULL = {"type": ["boolean", "null"]}
OBJ = {"type": "object"}
INTERPRETER = {
    "type": "object",
    "description": "The interpreter whose environment was inspected, and why (README: Which Python is inspected)",
    "required": ["python", "reason"],
    "properties": {
        "python": {"type": "string"},
        "reason": {"type": "string"},
        "rule": {
            "description": "The rule's step that chose it",
            "enum": [
                "--python",
                "python -m compat",
                "$VIRTUAL_ENV",
                "$CONDA_PREFIX",
                "compat's own environment",
                "python3 on PATH",
            ],
        },
        "note": {"type": "string", "description": "Another interpreter has a framework this one may lack"},
    },
}
STRS = {"type": "array", "items": {"type": "string"}}

FIX = {
    "type": "object",
    "required": ["text", "command", "kind", "changes"],
    "properties": {
        "text": {"type": "string"},
        "command": STR_NULL,
        "kind": {"enum": ["shell", "python", "config", "manual"]},
        "changes": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
FINDING = {
    "type": "object",
    "required": ["id", "severity", "title", "message", "fixes", "group"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "severity": {"enum": ["error", "warning", "info"]},
        "title": {"type": "string"},
        "message": {"type": "string"},
        "fixes": {"type": "array", "items": {"$ref": "#/$defs/fix"}},
        "group": {"type": "string"},
        "facts": OBJ,
        "line": {"type": "integer", "minimum": 1},
    },
}
SKIP = {
    "type": "object",
    "required": ["id", "reason"],
    "properties": {"id": {"type": "string"}, "reason": {"type": "string"}},
}
DEFS = {"fix": FIX, "finding": FINDING, "skip": SKIP}


def doc(
    name: str, title: str, props: dict[str, Any], required: list[str], defs: bool = True
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{BASE}{name}.schema.json",
        "title": title,
        "type": "object",
        "required": ["schema_version", *required] if "schema_version" in props else required,
        "properties": props,
    }
    if defs:
        out["$defs"] = DEFS
    return out


SV_PROP = {"schema_version": {"const": SV}}
REPORT_PROPS = {
    **SV_PROP,
    "verdict": {"enum": ["ok", "warning", "error"]},
    "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
    "skipped": {"type": "array", "items": {"$ref": "#/$defs/skip"}},
    "facts": OBJ,
    "matrix": {"type": "object", "required": ["updated"], "properties": {"updated": {"type": "string"}}},
}
REPORT_REQ = ["verdict", "findings", "skipped", "facts", "matrix"]

SMOKE_PROPS = {
    **SV_PROP,
    "status": {"enum": ["passed", "failed", "crashed", "timed_out", "skipped"]},
    "framework": STR_NULL,
    "framework_version": STR_NULL,
    "device": STR_NULL,
    "device_name": STR_NULL,
    "steps": {"type": "integer", "minimum": 0},
    "loss_first": NUM_NULL,
    "loss_last": NUM_NULL,
    "seconds": {"type": "number", "minimum": 0},
    "samples_per_second": NUM_NULL,
    "peak_memory_bytes": INT_NULL,
    "cudnn_used": BOOL_NULL,
    "max_batch": INT_NULL,
    "signal": STR_NULL,
    "cause": STR_NULL,
    "message": {"type": "string"},
    "fixes": {"type": "array", "items": {"$ref": "#/$defs/fix"}},
}
SMOKE_REQ = [k for k in SMOKE_PROPS if k != "schema_version"]

PICK = {
    "oneOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["version", "variant", "command", "reason", "kind", "changes", "wheel", "warnings"],
            "properties": {
                "version": {"type": "string"},
                "variant": STR_NULL,
                "command": {"type": "string"},
                "reason": {"type": "string"},
                "kind": {"const": "shell"},
                "changes": {"type": "object", "additionalProperties": {"type": "string"}},
                "wheel": STR_NULL,
                "warnings": STRS,
                "installer": {"type": "string"},
            },
        },
    ]
}
MINMAX = {"type": "object", "required": ["min", "max"], "properties": {"min": STR_NULL, "max": STR_NULL}}

SCHEMAS: dict[str, dict[str, Any]] = {
    "report": doc(
        "report",
        "compat check --json (a stack checked against the matrix)",
        REPORT_PROPS,
        REPORT_REQ,
    ),
    "doctor": doc(
        "doctor",
        "compat doctor --json (this machine probed)",
        {
            **REPORT_PROPS,
            "host": {"type": "string"},
            "interpreter": INTERPRETER,
            "probes": OBJ,
            "gpus": {"type": ["array", "null"], "items": OBJ},
            "smoke": OBJ,
        },
        [*REPORT_REQ, "host", "probes", "gpus"],
    ),
    "dockerfile": doc(
        "dockerfile",
        "compat dockerfile --json",
        {
            **REPORT_PROPS,
            "stages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "index", "line", "base", "from_stage", "facts"],
                    "properties": {
                        "name": STR_NULL,
                        "index": {"type": "integer"},
                        "line": {"type": "integer"},
                        "base": STR_NULL,
                        "from_stage": {"type": ["string", "integer", "null"]},
                        "facts": OBJ,
                    },
                },
            },
        },
        [*REPORT_REQ, "stages"],
    ),
    "compose": doc(
        "compose",
        "compat compose --json",
        {
            **REPORT_PROPS,
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["file", "services"],
                    "properties": {"file": {"type": "string"}, "services": STRS},
                },
            },
        },
        [*REPORT_REQ, "files"],
    ),
    "k8s": doc(
        "k8s",
        "compat k8s --json",
        {
            **REPORT_PROPS,
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["file", "workloads"],
                    "properties": {"file": {"type": "string"}, "workloads": STRS},
                },
            },
        },
        [*REPORT_REQ, "files"],
    ),
    "explain": doc(
        "explain",
        "compat explain --json (the diagnoses of a crash log, most likely first)",
        {
            **SV_PROP,
            "status": {"enum": ["diagnosed", "inconclusive", "nothing-found"]},
            "diagnoses": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "category",
                        "confidence",
                        "title",
                        "evidence",
                        "explanation",
                        "facts",
                        "fixes",
                        "confirm",
                        "evidence_lines",
                        "suspected",
                    ],
                    "properties": {
                        "category": {"type": "string"},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "title": {"type": "string"},
                        "evidence": STRS,
                        "explanation": {"type": "string"},
                        "facts": OBJ,
                        "fixes": {"type": "array", "items": {"$ref": "#/$defs/fix"}},
                        "confirm": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/fix"}]},
                        "evidence_lines": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["line", "text", "before", "after"],
                                "properties": {
                                    "line": {"type": "integer", "minimum": 1},
                                    "text": {"type": "string"},
                                    "before": STRS,
                                    "after": STRS,
                                },
                            },
                        },
                        "suspected": {"type": "boolean"},
                    },
                },
            },
        },
        ["status", "diagnoses"],
    ),
    "smoke": doc(
        "smoke",
        "compat smoke --json (one training run)",
        {**SMOKE_PROPS, "interpreter": INTERPRETER},
        SMOKE_REQ,
    ),
    "smoke-distributed": doc(
        "smoke-distributed",
        "compat smoke --distributed --json (DDP across local GPUs, or 2 CPU ranks)",
        {
            **SMOKE_PROPS,
            "world_size": {"type": ["integer", "null"]},
            "backend": STR_NULL,
            "ranks": {"type": "array", "items": OBJ},
            "interpreter": INTERPRETER,
        },
        SMOKE_REQ,
    ),
    "fleet": doc(
        "fleet",
        "compat fleet --json and compat fleet merge --json",
        {
            **SV_PROP,
            "verdict": {"enum": ["ok", "warning", "error"]},
            "source": {"enum": ["ray", "files"]},
            "summary": {
                "type": "object",
                "required": [
                    "nodes",
                    "reported",
                    "unreachable",
                    "failed",
                    "groups",
                    "drift",
                    "nodes_with_errors",
                    "nodes_with_warnings",
                    "unhealthy_gpus",
                    "smoke_failed",
                    "duplicates",
                ],
                "additionalProperties": {"type": "integer", "minimum": 0},
            },
            "nodes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "name",
                        "source",
                        "status",
                        "reason",
                        "verdict",
                        "group",
                        "fingerprint",
                        "drift",
                        "errors",
                        "warnings",
                        "unhealthy_gpus",
                        "smoke",
                    ],
                    "properties": {
                        "name": {"type": "string"},
                        "source": {"type": "string"},
                        "status": {"enum": ["reported", "unreachable", "failed"]},
                        "reason": STR_NULL,
                        "verdict": STR_NULL,
                        "group": INT_NULL,
                        "fingerprint": {"type": ["object", "null"]},
                        "drift": STRS,
                        "errors": {"type": "array", "items": OBJ},
                        "warnings": {"type": "array", "items": OBJ},
                        "unhealthy_gpus": {"type": "array", "items": OBJ},
                        "smoke": {"type": ["object", "null"]},
                    },
                },
            },
            "groups": {
                "type": "array",
                "items": {"type": "object", "required": ["id", "size", "nodes", "fingerprint"]},
            },
            "drift": {
                "type": "array",
                "items": {"type": "object", "required": ["fact", "nodes", "values"]},
            },
            "unhealthy_gpus": {"type": "array", "items": {"type": "object", "required": ["node", "id"]}},
            "smoke_failed": {"type": "array", "items": {"type": "object", "required": ["node", "status"]}},
            "unreachable": {"type": "array", "items": {"type": "object", "required": ["node", "reason"]}},
            "failed": {"type": "array", "items": {"type": "object", "required": ["node", "reason"]}},
            "duplicates": {"type": "array", "items": OBJ},
        },
        [
            "verdict",
            "source",
            "summary",
            "nodes",
            "groups",
            "drift",
            "unhealthy_gpus",
            "smoke_failed",
            "unreachable",
            "failed",
            "duplicates",
        ],
    ),
    "suggestion": doc(
        "suggestion",
        "compat suggest --json (what to install here)",
        {
            **SV_PROP,
            "torch": PICK,
            "tensorflow": PICK,
            "jax": PICK,
            "blocked": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["what", "why"],
                    "properties": {"what": {"type": "string"}, "why": {"type": "string"}},
                },
            },
            "unavailable": {"type": "object", "additionalProperties": {"type": "string"}},
            "manual": {"type": "object", "additionalProperties": {"type": "string"}},
            "facts": OBJ,
            "interpreter": INTERPRETER,
        },
        ["torch", "tensorflow", "jax", "blocked", "unavailable", "manual", "facts"],
    ),
    "matrix-cuda": doc(
        "matrix-cuda",
        "compat matrix cuda KEY --json",
        {
            "version": {"type": "string"},
            "name": STR_NULL,
            "min_driver": OBJ,
            "minor_compat_floor": OBJ,
            "compute_capabilities": MINMAX,
            "not_listed": OBJ,
            "source": {"type": ["string", "object", "array", "null"]},
        },
        [
            "version",
            "name",
            "min_driver",
            "minor_compat_floor",
            "compute_capabilities",
            "not_listed",
            "source",
        ],
        defs=False,
    ),
    "matrix-gpu": doc(
        "matrix-gpu",
        "compat matrix gpu KEY --json",
        {
            "name": {"type": "string"},
            "aliases": STRS,
            "compute_capability": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+$"},
            "architecture": STR_NULL,
            "segment": STR_NULL,
            "source": {"type": ["string", "object", "array", "null"]},
        },
        ["name", "aliases", "compute_capability", "architecture", "segment", "source"],
        defs=False,
    ),
    "matrix-cudnn": doc(
        "matrix-cudnn",
        "compat matrix cudnn KEY --json",
        {
            "version": {"type": "string"},
            "cuda": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["major", "min", "max", "compute_capabilities"],
                    "properties": {"compute_capabilities": MINMAX},
                },
            },
            "min_driver": OBJ,
            "not_listed": OBJ,
            "source": {"type": ["string", "object", "array", "null"]},
        },
        ["version", "cuda", "min_driver", "not_listed", "source"],
        defs=False,
    ),
    "matrix-torch": doc(
        "matrix-torch",
        "compat matrix torch KEY --json",
        {
            "version": {"type": "string"},
            "python": STRS,
            "pypi_default": STR_NULL,
            "pypi_requires": OBJ,
            "variants": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["tag", "cuda", "cudnn", "archs", "index_url"],
                    "properties": {
                        "tag": {"type": "string"},
                        "cuda": STR_NULL,
                        "cudnn": STR_NULL,
                        "archs": {"type": ["array", "null"], "items": {"type": "string"}},
                        "index_url": STR_NULL,
                    },
                },
            },
            "source": {"type": ["string", "object", "array", "null"]},
        },
        ["version", "python", "pypi_default", "pypi_requires", "variants", "source"],
        defs=False,
    ),
    "matrix-tensorflow": doc(
        "matrix-tensorflow",
        "compat matrix tensorflow KEY --json",
        {
            "version": {"type": "string"},
            "python": STRS,
            "cuda": STR_NULL,
            "cudnn": STR_NULL,
            "and_cuda": OBJ,
            "windows_gpu": {"type": ["boolean", "null"]},
            "compute_capabilities": {"type": ["array", "null"], "items": {"type": "string"}},
            "compiler": STR_NULL,
            "build_tool": STR_NULL,
            "not_listed": OBJ,
            "source": {"type": ["string", "object", "array", "null"]},
        },
        [
            "version",
            "python",
            "cuda",
            "cudnn",
            "and_cuda",
            "windows_gpu",
            "compute_capabilities",
            "compiler",
            "build_tool",
            "not_listed",
            "source",
        ],
        defs=False,
    ),
    "matrix-jax": doc(
        "matrix-jax",
        "compat matrix jax KEY --json",
        {
            "version": {"type": "string"},
            "released": STR_NULL,
            "python": STRS,
            "requires_python": STR_NULL,
            "jaxlib": STR_NULL,
            "minimum_jaxlib": STR_NULL,
            "extras": STRS,
            "cuda_extra": {"type": ["string", "integer", "null"]},
            "cuda": {"type": "array", "items": {"type": "object", "required": ["major", "kind", "extras"]}},
            "source": {"type": ["string", "object", "array", "null"]},
            "doc": STR_NULL,
        },
        ["version", "python", "jaxlib", "extras", "cuda", "source"],
        defs=False,
    ),
    "run-verdict": doc(
        "run-verdict",
        "compat explain --last --json (the verdict of the last recorded run)",
        {
            **SV_PROP,
            "record": {"type": "string"},
            "kind": STR_NULL,
            "pid": INT_NULL,
            "started_at": STR_NULL,
            "verdict": OBJ,
        },
        ["record", "kind", "pid", "started_at", "verdict"],
        defs=False,
    ),
    "snapshot": doc(
        "snapshot",
        "compat doctor --save-snapshot FILE (read by compat check --snapshot)",
        {**SV_PROP, "facts": OBJ, "probes": OBJ},
        ["facts"],
        defs=False,
    ),
}


COPIED = {"run": ROOT / "compat" / "record" / "run.schema.json"}
"""Schemas kept beside the code that writes the document, copied here unchanged (run.json: compat run / watch)."""


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    for folder in (ROOT / "compat" / "schema", ROOT / "docs" / "schema"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, schema in SCHEMAS.items():
            (folder / f"{name}.schema.json").write_text(render(schema), encoding="utf-8")
        for name, src in COPIED.items():
            (folder / f"{name}.schema.json").write_bytes(src.read_bytes())
    print(f"wrote {len(SCHEMAS) + len(COPIED)} schemas to compat/schema/ and docs/schema/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
