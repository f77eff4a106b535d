"""matrix/error_codes.yaml: one signature per CUDA, cuDNN, cuBLAS, NCCL, NVML or XLA status code."""

from __future__ import annotations

import re
from typing import Any

from compat.errors import MatrixError
from compat.explain.categories import CATEGORIES
from compat.explain.signature import Catalogue, Signature, trie_pattern
from compat.matrixfiles import (
    document,
    integer,
    items,
    mapping,
    number,
    problems,
    register_side_file,
    text,
    url,
)

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


SHAPE = document(
    {
        "codes": items(
            mapping(
                {
                    "enum": text(enum=ENUMS),
                    "name": text(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", form="an identifier"),
                    "value": integer(),
                    "category": text(enum=CATEGORIES),
                    "confidence": number(gt=0, le=1),
                    "meaning": text(),
                    "message": text(blank=True),
                    "source": url(),
                    "header": text(),
                },
                required=("enum", "name", "value", "category", "confidence", "meaning", "source", "header"),
                closed=True,
            ),
            nonempty=True,
            label=("enum", "name"),
            unique=("enum", "name"),
        )
    },
    required=("codes",),
)


def validate_codes(doc: Any) -> list[str]:
    """Every problem in an error_codes.yaml document (empty when valid)."""
    return problems(SHAPE, doc)


register_side_file(CODES_FILE, validate_codes)


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


def _codes(doc: Any) -> tuple[list[Signature], dict[int, Signature]]:
    """One signature per code of a validated document, and the cudaError_t ones by value."""
    sigs: list[Signature] = []
    by_value: dict[int, Signature] = {}
    for row in doc["codes"]:
        enum, name, value, msg = str(row["enum"]), str(row["name"]), row["value"], row.get("message")
        cat = str(row["category"])
        # One keyword per family (its common prefix), not one per code: the pre-filter's automaton stays
        # small (fast), and the few lines holding a prefix are checked against each row's exact name.
        kws = [_FAMILY_KEYWORD.get(enum, name.lower())]
        if enum == "nvmlReturn_t" and name.startswith("NVML_ERROR_"):
            kws.extend(["nvmlerror_", _short_nvml(name).lower()])
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
            f"code-{enum.replace('::', '-').lower()}-{name.lower()}",
            cat,
            tuple(dict.fromkeys(kws)),
            re.compile(_code_pattern(enum, name, msg), re.IGNORECASE),
            float(row["confidence"]),
            f"{enum} {name} ({value}): " + " ".join(str(row["meaning"]).split()),
            title,
            {"error_code": name},
            (),
            str(row["source"]),
        )
        sigs.append(sig)
        if enum == "cudaError_t":
            by_value[int(value)] = sig
    return sigs, by_value


def with_codes(cat: Catalogue, doc: Any) -> Catalogue:
    """The catalogue plus one signature per error code of an error_codes.yaml document (lazily loaded)."""
    if doc is None:
        return cat
    found = validate_codes(doc)
    if found:
        raise MatrixError([f"{CODES_FILE}: {p}" for p in found])
    sigs, by_value = _codes(doc)
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
