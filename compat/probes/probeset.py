"""All of one run's probe results: ProbeSet, what compat.facts.Facts.probes holds, and the probe names it knows.

As a Mapping it reads as its JSON form (the keys of "probes" in `compat doctor --json`), for the readers that predate
the typed model; checks read its typed attributes (`ctx.probes.health`). Encoded and decoded through
compat.probes.codec like every record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any

from compat._valueclass import valueclass
from compat.probes.codec import ProbeFailed, ProbeResult, is_failure, to_json
from compat.probes.model import (
    Cudnn,
    DriverState,
    Environment,
    Frameworks,
    Health,
    Meta,
    NvidiaSmi,
    NvmlState,
    Resources,
    Toolchain,
    Toolkits,
)

SUBJECTS: dict[str, type[ProbeResult]] = {
    "nvml": NvmlState,
    "nvidia_smi": NvidiaSmi,
    "driver": DriverState,
    "toolkits": Toolkits,
    "cudnn": Cudnn,
    "frameworks": Frameworks,
    "resources": Resources,
    "health": Health,
    "environment": Environment,
    "toolchain": Toolchain,
    "meta": Meta,
}
"""Probe name -> its record type (the keys of Facts.probes and of "probes" in `compat doctor --json`)."""

# Records whose "failure" is a state they carry themselves (nvidia-smi's ok/kind), not a ProbeFailed.
_STATEFUL = ("nvidia_smi", "meta")


@valueclass
class ProbeSet(Mapping[str, Any]):
    """Every probe's result (or ProbeFailed; None when the probe did not run), what Facts.probes holds.

    As a Mapping it reads as the JSON form (`facts.probes["nvml"]["kind"]`), for the readers that predate the
    model (the smoke job, explain's cross-check, fleet reports); checks use the typed attributes.
    """

    nvml: NvmlState | ProbeFailed | None = None
    nvidia_smi: NvidiaSmi | None = None
    driver: DriverState | ProbeFailed | None = None
    toolkits: Toolkits | ProbeFailed | None = None
    cudnn: Cudnn | ProbeFailed | None = None
    frameworks: Frameworks | ProbeFailed | None = None
    resources: Resources | ProbeFailed | None = None
    health: Health | ProbeFailed | None = None
    environment: Environment | ProbeFailed | None = None
    toolchain: Toolchain | ProbeFailed | None = None
    meta: Meta | None = None
    others: Mapping[str, Any] = field(default_factory=dict)
    """Probe names this compat does not know (a newer compat's snapshot): kept and written back."""

    @classmethod
    def from_json(cls, doc: Any) -> ProbeSet:
        """Decode Facts.probes / a snapshot's "probes"; never raises."""
        if isinstance(doc, ProbeSet):
            return doc
        if not isinstance(doc, Mapping):
            return cls()
        kwargs: dict[str, Any] = {}
        others: dict[str, Any] = {}
        for name, value in doc.items():
            rec = SUBJECTS.get(name)
            if rec is None:
                others[name] = value
            elif not isinstance(value, Mapping):
                others[name] = value  # not an object: kept for the writer, unknown to the checks
            elif name == "frameworks" and value.get("status") == "error" and "python_executable" in value:
                kwargs[name] = rec.from_json(value)  # a broken --python interpreter: a finding of its own
            elif name not in _STATEFUL and is_failure(value):
                kwargs[name] = ProbeFailed.decode(value)
            else:
                kwargs[name] = rec.from_json(value)
        return cls(**kwargs, others=others)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in SUBJECTS:
            v = getattr(self, name)
            if v is not None:
                out[name] = to_json(v)
        out.update({k: v for k, v in self.others.items() if k not in out})
        return out

    def malformed(self) -> dict[str, list[str]]:
        """Probe name -> the keys whose value had an unexpected type (a hand-edited or foreign snapshot)."""
        out: dict[str, list[str]] = {}
        for name in SUBJECTS:
            v = getattr(self, name)
            paths = v.malformed_paths() if isinstance(v, ProbeResult) else []
            if paths:
                out[name] = paths
        return out

    def failed(self, name: str) -> ProbeFailed | None:
        v = getattr(self, name, None) if name in SUBJECTS else None
        return v if isinstance(v, ProbeFailed) else None

    # Mapping: the JSON form, key by key.
    def _names(self) -> list[str]:
        names = [n for n in SUBJECTS if getattr(self, n) is not None]
        return names + [k for k in self.others if k not in names]

    def __getitem__(self, key: str) -> Any:
        v = getattr(self, key) if key in SUBJECTS else None
        if v is not None:
            return to_json(v)
        return self.others[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProbeSet):
            return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(self))
        if isinstance(other, Mapping):
            return self.to_json() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def probe_set(probes: Any) -> ProbeSet:
    """Facts.probes as a ProbeSet (decoded when it is a plain mapping: hand-built Facts, old callers)."""
    return probes if isinstance(probes, ProbeSet) else ProbeSet.from_json(probes)


__all__ = ["SUBJECTS", "ProbeSet", "probe_set"]
