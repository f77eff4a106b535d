"""JSON Schemas of the matrix files, for editors (yaml-language-server) and CI; built from the row definitions.

The loader's own validation (parse_nvidia, parse_frameworks) stays the authority: it checks what a schema
cannot (versions that parse, cross-file agreement, unique names) and lists every problem at once. The schemas
describe the same shapes so an editor flags a typo as it is typed. `python -m compat.matrix.schema DIR` writes
them; tests check that docs/schema/matrix/ and the copies shipped in the wheel match this module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://github.com/compat/compat/raw/main/docs/schema/matrix/"

_VERSION = {"type": "string", "pattern": r"^\d+(\.\d+)*$"}
_PY = {"type": "string", "pattern": r"^\d\.\d{1,2}t?$"}
_DRIVER = {"type": "string", "pattern": r"^\d+(\.\d+){1,2}$"}
_CC = {"type": "string", "pattern": r"^\d+\.\d+$"}
_ARCH = {"type": "string", "pattern": r"^(sm|compute)_\d+[af]?$"}
_SOURCE = {
    "type": "string",
    "minLength": 1,
    "description": "URL of the official table, release note or artifact",
}
_NA = {
    "description": 'The source lists no value ("N/A"); null means unknown.',
    "oneOf": [
        {"const": "N/A"},
        {
            "type": "object",
            "properties": {"na": {"type": "string"}},
            "required": ["na"],
            "additionalProperties": False,
        },
    ],
}
_UPDATED = {"type": "string", "format": "date", "description": "YYYY-MM-DD"}


def _or_na(schema: dict[str, Any], *, null: bool = True) -> dict[str, Any]:
    alts: list[dict[str, Any]] = [schema, {"$ref": "#/$defs/na"}]
    if null:
        alts.append({"type": "null"})
    return {"anyOf": alts}


def _drivers(na: bool = True) -> dict[str, Any]:
    value = _or_na(_DRIVER) if na else {"anyOf": [_DRIVER, {"type": "null"}]}
    return {"type": "object", "properties": {"linux": value, "windows": value}, "additionalProperties": False}


def _doc(file: str, title: str, rows: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + file.replace(".yaml", ".schema.json"),
        "title": title,
        "type": "object",
        "required": ["updated", *rows],
        "properties": {"updated": _UPDATED, **{k: {"type": "array", "items": v} for k, v in rows.items()}},
        "$defs": {"na": _NA},
    }


def _row(required: list[str], props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": [*required, "source"], "properties": {**props, "source": _SOURCE}}


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> its JSON Schema."""
    cuda = _doc(
        "cuda.yaml",
        "compat matrix: CUDA toolkit releases",
        {
            "releases": _row(
                ["version", "min_driver"],
                {"version": _VERSION, "name": {"type": "string"}, "min_driver": _drivers()},
            ),
            "minor_compat": _row(
                ["major"],
                {"major": {"type": "integer"}, "linux": _or_na(_DRIVER), "windows": _or_na(_DRIVER)},
            ),
            "compute_capabilities": _row(
                ["cc"],
                {
                    "cc": _CC,
                    "added": _or_na(_VERSION),
                    "deprecated": _or_na(_VERSION),
                    "removed": _or_na(_VERSION),
                    "last_driver": _or_na({"type": "string", "pattern": r"^\d{1,6}$"}),
                    "last_driver_source": _SOURCE,
                },
            ),
        },
    )
    cuda["properties"]["minor_compat"]["items"]["required"] = ["major", "source"]
    gpus = _doc(
        "gpus.yaml",
        "compat matrix: GPUs and compute capabilities",
        {
            "gpus": _row(
                ["name", "cc", "architecture"],
                {
                    "name": {"type": "string"},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                    "cc": _CC,
                    "architecture": {"type": "string"},
                    "segment": {
                        "enum": ["datacenter", "workstation", "geforce", "jetson", "mobile", "embedded"]
                    },
                },
            )
        },
    )
    package = {
        "type": "object",
        "required": ["cuda_major"],
        "properties": {
            "cuda_major": {"type": "integer"},
            "cuda_min": _or_na(_VERSION),
            "cuda_max": _or_na(_VERSION),
            "min_driver": {"anyOf": [_drivers(), {"$ref": "#/$defs/na"}, {"type": "null"}]},
            "cc_min": _or_na(_CC),
            "cc_max": _or_na(_CC),
        },
    }
    cudnn = _doc(
        "cudnn.yaml",
        "compat matrix: cuDNN releases",
        {
            "releases": _row(
                ["version", "packages"],
                {"version": _VERSION, "packages": {"type": "array", "minItems": 1, "items": package}},
            )
        },
    )
    variant = {
        "type": "object",
        "required": ["tag"],
        "properties": {
            "tag": {"type": "string"},
            "cuda": {"anyOf": [_VERSION, {"type": "null"}]},
            "cudnn": _or_na(_VERSION),
            "archs": _or_na({"type": "array", "items": _ARCH}),
            "index_url": {"type": "string"},
        },
    }
    pins = {"type": "object", "additionalProperties": {"type": "string"}}
    torch = _doc(
        "pytorch.yaml",
        "compat matrix: PyTorch releases",
        {
            "releases": _row(
                ["version", "python", "variants"],
                {
                    "version": {"type": "string"},
                    "python": {"type": "array", "minItems": 1, "items": _PY},
                    "pypi_default": {"type": ["string", "null"]},
                    "pypi_default_windows": {"type": "string"},
                    "pypi_requires": pins,
                    "variants": {"type": "array", "items": variant},
                },
            )
        },
    )
    torch["properties"]["pypi_default_windows"] = {"type": "string"}
    torch["properties"]["cxx11_abi"] = {
        "type": "array",
        "items": _row(
            ["torch", "cxx11"],
            {
                "torch": {"type": "string", "description": "PEP 440 specifier of the torch releases"},
                "variants": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                "cxx11": {
                    "type": "boolean",
                    "description": "_GLIBCXX_USE_CXX11_ABI of the Linux x86_64 wheels",
                },
            },
        ),
    }
    tf = _doc(
        "tensorflow.yaml",
        "compat matrix: TensorFlow releases",
        {
            "releases": _row(
                ["version", "python"],
                {
                    "version": {"type": "string"},
                    "python": {"type": "array", "minItems": 1, "items": _PY},
                    "cuda": _or_na(_VERSION),
                    "cudnn": _or_na(_VERSION),
                    "and_cuda": pins,
                    "and_cuda_broken": {
                        "type": "object",
                        "required": ["why", "use", "source"],
                        "properties": {
                            "why": {"type": "string"},
                            "use": {"type": "string"},
                            "source": _SOURCE,
                        },
                    },
                    "windows_gpu": {"type": ["boolean", "null"]},
                    "compute_capabilities": _or_na({"type": "array", "items": _ARCH}),
                    "compiler": _or_na({"type": "string"}),
                    "build_tool": _or_na({"type": "string"}),
                },
            )
        },
    )
    known = _doc(
        "known_issues.yaml",
        "compat matrix: known bad combinations",
        {
            "issues": _row(
                ["id", "title", "when", "message"],
                {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "when": {
                        "type": "object",
                        "minProperties": 1,
                        "additionalProperties": {"type": "string"},
                    },
                    "severity": {"enum": ["error", "warning", "info"]},
                    "message": {"type": "string"},
                    "requires": {"type": "array", "items": {"enum": ["tf_and_cuda"]}},
                    "fix": {
                        "type": "object",
                        "properties": {"text": {"type": "string"}, "command": {"type": "string"}},
                    },
                },
            )
        },
    )
    return {
        "cuda.yaml": cuda,
        "gpus.yaml": gpus,
        "cudnn.yaml": cudnn,
        "pytorch.yaml": torch,
        "tensorflow.yaml": tf,
        "known_issues.yaml": known,
    }


def schema_file_name(file: str) -> str:
    return file.replace(".yaml", ".schema.json")


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for file, schema in schemas().items():
        path = directory / schema_file_name(file)
        path.write_text(render(schema), encoding="utf-8")
        out.append(path)
    return out


def shipped_dir() -> Path:
    """Where the wheel carries the schemas (package data next to this module)."""
    return Path(__file__).resolve().parent / "schemas"


if __name__ == "__main__":
    for target in sys.argv[1:] or [str(shipped_dir())]:
        for p in write_all(Path(target)):
            sys.stdout.write(f"{p}\n")
