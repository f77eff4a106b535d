"""What the crash-signature catalogue holds: categories, signatures, deaths, and the facts they extract."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.findings import Fix

# Facts a signature may extract (named regex groups) or set; documented in the JSON "facts" of a diagnosis.
FACT_NAMES = frozenset(
    {
        "driver",
        "driver_cuda",
        "cudnn_built",
        "cudnn_runtime",
        "torch_build",
        "gpu",
        "gpu_index",
        "arch",
        "cc",
        "min_cc",
        "supported_archs",
        "requested",
        "capacity",
        "free",
        "shape",
        "library",
        "symbol",
        "xid",
        "sxid",
        "pci_bus",
        "nvml_error",
        "nvml_version",
        "exit_code",
        "signal",
        "pid",
        "process",
        "nccl_version",
        "nccl_error",
        "nccl_warning",
        "nccl_result",
        "op",
        "seq",
        "timeout_ms",
        "stuck_s",
        "assertion",
        "error_code",
        "cuda_required",
    }
)

_SIGNALS = {
    "segmentation fault": "11",
    "sigsegv": "11",
    "bus error": "7",
    "sigbus": "7",
    "killed": "9",
    "sigkill": "9",
    "aborted": "6",
    "sigabrt": "6",
    "terminated": "15",
    "sigterm": "15",
}


def _cuda_int(raw: str) -> str:
    """CUDA's integer version (driver API): 11040 -> 11.4, 12080 -> 12.8, 6050 -> 6.5."""
    n = int(raw)
    return f"{n // 1000}.{(n % 1000) // 10}"


def _cudnn_int(raw: str) -> str:
    """cuDNN's integer version: 7605 -> 7.6.5; cuDNN 9 uses major*10000: 90100 -> 9.1.0."""
    n = int(raw)
    if n >= 10000:
        return f"{n // 10000}.{(n % 10000) // 100}.{n % 100}"
    return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"


def _tuple(raw: str) -> str:
    """A Python tuple as printed: "8, 9, 2" -> 8.9.2."""
    return ".".join(p.strip() for p in raw.split(",") if p.strip())


def _signame(raw: str) -> str:
    return _SIGNALS.get(raw.strip().lower(), raw.strip())


CONVERTERS: dict[str, Callable[[str], str]] = {
    "cuda_int": _cuda_int,
    "cudnn_int": _cudnn_int,
    "tuple": _tuple,
    "signame": _signame,
}

MAX_FACT_LEN = 200


@valueclass
class Category:
    """One root-cause category: what it means, how to fix it, and how it ranks against others."""

    name: str
    title: str
    explanation: str
    rank: int
    """Lower is closer to the root cause (a driver problem explains a missing GPU, not the reverse)."""
    suppresses: frozenset[str]
    fixes: tuple[Fix, ...]
    confirm: Fix | None = None
    """The command that confirms (or rules out) this cause on the machine that failed."""
    confirm_for: tuple[tuple[str, Fix], ...] = ()
    """Framework-specific confirm commands (`jax`, `tensorflow`), used when the evidence names that framework."""

    def confirm_in(self, evidence: tuple[str, ...] | list[str]) -> Fix | None:
        """The confirm command for a diagnosis with these evidence lines: a JAX/XLA or TensorFlow log gets that
        framework's command, anything else the category's default (a PyTorch one where it is framework-bound)."""
        if self.confirm_for:
            text = "\n".join(evidence)
            for framework, fix in self.confirm_for:
                if FRAMEWORK_WORDS[framework].search(text):
                    return fix
        return self.confirm


FRAMEWORK_WORDS: dict[str, re.Pattern[str]] = {
    # JAX by name, its plugin modules, and its Bazel path for XLA (external/xla/...; TensorFlow's is external/local_xla)
    "jax": re.compile(r"\b(?:jax|jaxlib|pjrt)\b|jax_plugins|xla_bridge|external/xla/", re.IGNORECASE),
    # TensorFlow's own names, its source paths (tensorflow/..., TF >= 2.16 logs XLA as external/local_xla) and the
    # messages only its runtime prints (gpu_device.cc "Ignoring visible gpu device", the XLA stream executor's
    # "Loaded runtime CuDNN library: ... but source was compiled with", which JAX prints too: JAX is tried first).
    "tensorflow": re.compile(
        r"\b(?:tensorflow|keras)\b|tensorflow/|tf\.keras|local_xla|stream_executor|ignoring (?:visible )?gpu device"
        r"|source was compiled with",
        re.IGNORECASE,
    ),
}
"""The words that tie a log to a framework, in the order they are tried (JAX before TensorFlow: XLA logs of
TensorFlow mention both, and a JAX log never says tensorflow)."""


@valueclass
class Death:
    """A line that shows a process died without naming why; its suspects are ranked, most likely first."""

    id: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    suspects: tuple[str, ...]
    meaning: str
    source: str = ""


@valueclass
class Signature:
    """One known error message: its pre-filter keywords, compiled regex and what it reveals."""

    id: str
    category: str | None
    """None for context extractors (facts only, never a diagnosis)."""
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    confidence: float
    meaning: str
    title: str | None = None
    set_facts: Mapping[str, str] = field(default_factory=dict)
    fixes: tuple[Fix, ...] = ()
    source: str = ""

    def facts_from(self, m: re.Match[str]) -> dict[str, str]:
        """The facts a match reveals: named groups (converted) plus the row's constant facts."""
        out: dict[str, str] = {}
        for key, val in m.groupdict().items():
            if val is None:
                continue
            name, _, conv = key.partition("__")
            text = val.strip().rstrip(".").strip()
            if not text:
                continue
            if conv:
                try:
                    text = CONVERTERS[conv](text)
                except (ValueError, KeyError):
                    continue
            out[name] = text[:MAX_FACT_LEN]
        for k, v in self.set_facts.items():
            out.setdefault(k, v)
        return out


@valueclass
class Catalogue:
    """The loaded catalogue: categories, signatures (and context extractors) and the keyword pre-filter."""

    updated: str
    categories: Mapping[str, Category]
    signatures: tuple[Signature, ...]
    extractors: tuple[Signature, ...]
    prefilter: re.Pattern[str]
    """One regex of every keyword: a line is only matched against signatures if this finds something."""
    deaths: tuple[Death, ...] = ()
    codes_by_value: Mapping[int, Signature] = field(default_factory=dict)
    """cudaError_t value -> its error-code signature ("cuda runtime error (N)", "CUDA error N")."""

    @property
    def all_rows(self) -> tuple[Signature, ...]:
        return self.signatures + self.extractors

    @property
    def keywords(self) -> frozenset[str]:
        """Every keyword of every row (signatures, extractors, deaths): the byte-level pre-filter's words."""
        return frozenset(
            [k for s in self.all_rows for k in s.keywords] + [k for d in self.deaths for k in d.keywords]
        )


def trie_pattern(words: set[str] | list[str]) -> str:
    """One regex matching any of `words`, shaped as a trie.

    A flat alternation makes Python's regex engine try every keyword at every position (~9 MB/s on a
    training log); sharing prefixes tries one branch per first character and is several times faster.
    """
    trie: dict[str, Any] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if list(node) == [""]:
            return ""
        optional = "" in node
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(node) if ch]
        if len(alts) == 1 and not optional:
            return alts[0]
        body = "(?:" + "|".join(alts) + ")"
        return body + "?" if optional else body

    return emit(trie) if trie else "(?!)"
