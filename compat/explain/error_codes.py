"""matrix/error_codes.yaml: one signature per CUDA, cuDNN, cuBLAS, NCCL, NVML or XLA status code."""

from __future__ import annotations

import re
from typing import Any

from compat.errors import MatrixError
from compat.explain.categories import CATEGORIES
from compat.explain.signature import Catalogue, Signature, trie_pattern

CODES_FILE = "error_codes.yaml"
ENUMS = (
    "cudaError_t",
    "CUresult",
    "cudnnStatus_t",
    "cublasStatus_t",
    "ncclResult_t",
    "nvmlReturn_t",
    "absl::StatusCode",
)
_CODE_KEYS = {"enum", "name", "value", "category", "confidence", "meaning", "message", "source", "header"}


MIN_MESSAGE_WORDS = 3
"""A code's message matches on its own only with this many words: ncclGetErrorString's "timeout" and
"invalid argument" are words any program prints ("Timeout waiting for RPC from GSP!", "CUDA error: invalid
argument"); those codes still match by name, and "NCCL error in: ..., invalid argument" by its own row."""


def _own_message(message: str | None) -> str | None:
    """The part of a code's message that identifies it, or None when it is too generic to match alone."""
    if not message:
        return None
    text = message.split(" (run with")[0]
    return text if len(text.split()) >= MIN_MESSAGE_WORDS else None


def _short_nvml(name: str) -> str:
    """NVML_ERROR_DRIVER_NOT_LOADED -> NVML_DRIVER_NOT_LOADED."""
    return "NVML_" + name[len("NVML_ERROR_") :]


_FAMILY_KEYWORD = {
    "cudaError_t": "cudaerror",
    "CUresult": "cuda_error_",
    "cudnnStatus_t": "cudnn_status_",
    "cublasStatus_t": "cublas_status_",
    "nvmlReturn_t": "nvml_error_",
}


def validate_codes(doc: Any) -> list[str]:
    """Every problem in an error_codes.yaml document (registered in compat.matrix.EXTRA_VALIDATORS)."""
    return _codes(doc)[2]


def _code_pattern(enum: str, name: str, message: str | None) -> str:
    names = [re.escape(name)]
    if enum == "nvmlReturn_t" and name.startswith("NVML_ERROR_"):
        # pynvml raises NVMLError_<CamelCase> (NVMLError_LibRmVersionMismatch)
        names.append("NVMLError_" + "".join(w.capitalize() for w in name[len("NVML_ERROR_") :].split("_")))
        # bindings that drop the "ERROR_" (go-nvml's String(), Mojo): NVML_DRIVER_NOT_LOADED
        names.append(_short_nvml(name))
    if enum == "absl::StatusCode":
        # XLA/TF print the status as "CODE: message" ("RESOURCE_EXHAUSTED: Out of memory ...") and older
        # TensorFlow as "Resource exhausted: ..."; only RESOURCE_EXHAUSTED is read outside an XlaRuntimeError.
        spaced = re.escape(name.replace("_", " ").capitalize())
        if name == "RESOURCE_EXHAUSTED":
            return rf"\b(?:{names[0]}|{spaced}):"
        return rf"XlaRuntimeError: (?:{names[0]}|{spaced})\b"
    alt = "|".join(names)
    own = _own_message(message)
    if own:
        alt += "|" + re.escape(own)
    return rf"(?<![A-Za-z0-9_])(?:{alt})(?![A-Za-z0-9_])"


def _codes(doc: Any) -> tuple[list[Signature], dict[int, Signature], list[str]]:
    problems: list[str] = []
    sigs: list[Signature] = []
    by_value: dict[int, Signature] = {}
    if not isinstance(doc, dict) or not isinstance(doc.get("codes"), list) or not doc["codes"]:
        return [], {}, ["the document must be a mapping with 'updated' and a non-empty 'codes' list"]
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(doc["codes"]):
        where = f"codes[{i}]"
        if not isinstance(row, dict):
            problems.append(f"{where}: must be a mapping")
            continue
        n0 = len(problems)
        enum, name, value = row.get("enum"), row.get("name"), row.get("value")
        where = f"{where} ({enum} {name})"
        if set(row) - _CODE_KEYS:
            problems.append(f"{where}: unknown keys {sorted(set(row) - _CODE_KEYS)}")
        if enum not in ENUMS:
            problems.append(f"{where}: 'enum' must be one of {', '.join(ENUMS)}")
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            problems.append(f"{where}: 'name' must be an identifier")
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{where}: 'value' must be an integer")
        if (str(enum), str(name)) in seen:
            problems.append(f"{where}: duplicate")
        seen.add((str(enum), str(name)))
        cat = row.get("category")
        if cat not in CATEGORIES:
            problems.append(f"{where}: unknown category {cat!r}")
        conf = row.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 < float(conf) <= 1.0:
            problems.append(f"{where}: 'confidence' must be a number in (0, 1]")
        for key in ("meaning", "source", "header"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                problems.append(f"{where}: missing '{key}'")
        if isinstance(row.get("source"), str) and not row["source"].startswith("https://"):
            problems.append(f"{where}: 'source' must be a URL")
        msg = row.get("message")
        if msg is not None and not isinstance(msg, str):
            problems.append(f"{where}: 'message' must be a string")
        if len(problems) > n0:
            continue
        # One keyword per family (its common prefix), not one per code: the pre-filter's automaton stays
        # small (fast), and the few lines holding a prefix are checked against each row's exact name.
        kws = [_FAMILY_KEYWORD.get(str(enum), str(name).lower())]
        if enum == "nvmlReturn_t" and str(name).startswith("NVML_ERROR_"):
            kws.extend(["nvmlerror_", _short_nvml(str(name)).lower()])
        if enum == "absl::StatusCode":
            kws = (
                ["resource_exhausted:", "resource exhausted:"]
                if name == "RESOURCE_EXHAUSTED"
                else ["xlaruntimeerror: "]
            )
        own = _own_message(msg)
        if own:
            kws.append(own.lower())
        title = None if cat != "gpu_error" else f"{enum} {name}"
        sig = Signature(
            f"code-{str(enum).replace('::', '-').lower()}-{str(name).lower()}",
            str(cat),
            tuple(dict.fromkeys(kws)),
            re.compile(_code_pattern(str(enum), str(name), msg), re.IGNORECASE),
            float(row["confidence"]),
            f"{enum} {name} ({value}): " + " ".join(str(row["meaning"]).split()),
            title,
            {"error_code": str(name)},
            (),
            str(row["source"]),
        )
        sigs.append(sig)
        if enum == "cudaError_t":
            by_value[int(row["value"])] = sig
    return sigs, by_value, problems


def with_codes(cat: Catalogue, doc: Any) -> Catalogue:
    """The catalogue plus one signature per error code of an error_codes.yaml document (lazily loaded)."""
    if doc is None:
        return cat
    sigs, by_value, problems = _codes(doc)
    if problems:
        raise MatrixError([f"{CODES_FILE}: {p}" for p in problems])
    have = {s.id for s in cat.all_rows}
    new = tuple(s for s in sigs if s.id not in have)
    words = cat.keywords | {k for s in new for k in s.keywords}
    return Catalogue(
        cat.updated,
        cat.categories,
        cat.signatures + new,
        cat.extractors,
        re.compile(trie_pattern(sorted(words))),
        cat.deaths,
        by_value,
    )
