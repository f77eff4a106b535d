"""Finding ids: each declared once in the registry, documented in the README, and produced by some stack."""

from __future__ import annotations

import re
from typing import Optional

import pytest

import compat.resolver  # noqa: F401  (registers the resolver's checks)
from compat.checks.registry import REGISTRY, RegistryError, check, declared_ids
from compat.facts import make_fact
from compat.findings import Report
from compat.resolver import CHECK_IDS, resolve
from tests.conftest import ROOT
from tests.solver.sweep import facts_of

# One stack per resolver id that produces it (the README's "Checks (stable ids)" list names each).
PRODUCERS: dict[str, dict[str, Optional[str]]] = {
    # JAX (matrix/jax.yaml): one stack per jax.* id.
    "jax.unknown-version": {"jax": "9.9.9+cuda12"},
    "jax.python": {"jax": "0.10.2+cuda12", "python": "3.10"},
    "jax.cuda-build": {"jax": "0.6.2+cuda13"},
    "jax.driver": {"jax": "0.10.2+cuda13", "driver": "550.54.15"},
    "jax.arch": {"jax": "0.10.2+cuda13", "driver": "580.65.06", "gpu": "GTX 1080"},
    "jax.windows-gpu": {"jax": "0.10.2+cuda12", "os": "windows"},
    "jax.cpu-build": {"jax": "0.10.2", "gpu": "A100"},
    "jax.jaxlib": {"jax": "0.10.2+cuda12", "jaxlib": "0.9.2"},
    "jax.cudnn": {"jax": "0.10.2+cuda12", "cudnn": "9.1.0"},
    "driver.cuda": {"torch": "2.1.0+cu121", "driver": "470.82.01"},
    "driver.gpu-support": {"driver": "535.104.05", "gpu": "Tesla K80"},
    "driver.gpu-too-new": {"driver": "470.82.01", "gpu": "H100"},
    "driver.branch": {"driver": "535"},
    "toolkit.arch": {"cuda": "11.7", "gpu": "RTX 4090"},
    "wheel.arch": {"torch": "2.15.0", "gpu": "GTX 1080"},
    "python.framework": {"torch": "2.4.0", "python": "3.13"},
    "tensorflow.cuda": {"tensorflow": "2.15.0", "cuda": "11.8"},
    "tensorflow.cudnn": {"tensorflow": "2.15.0", "cuda": "12.2", "cudnn": "8.6.0"},
    "tensorflow.windows-gpu": {"tensorflow": "2.16.1", "os": "windows", "cc": "8.6"},
    "torch.variant": {"torch": "2.4.0"},
    "cudnn.cuda": {"cudnn": "9.1.0", "cuda": "10.2"},
    "cudnn.arch": {"cudnn": "9.10.2", "cuda": "12.4", "cc": "12.0", "driver": "570.86.15"},
    "cudnn.driver": {"cudnn": "9.10.2", "cuda": "12.8", "cc": "12.0", "driver": "560.35.03"},
    "framework.cpu-build": {"torch": "2.4.0+cpu", "gpu": "RTX 4090"},
    "matrix.unknown-version": {"torch": "9.0.0"},
    "gpu.unknown": {"gpu": "Imaginary GPU 9000"},
    "gpu.required": {"gpu": ""},
}


def _report(matrix, flags: dict[str, Optional[str]]) -> Report:  # type: ignore[no-untyped-def]
    f = dict(flags)
    os_name = f.pop("os", None) or "linux"
    return resolve(facts_of(os=os_name, **f), matrix, require_gpu="gpu" in f and f["gpu"] == "")


def test_every_id_is_declared_once() -> None:
    ids = declared_ids()
    assert set(CHECK_IDS) <= set(ids), set(CHECK_IDS) - set(ids)
    assert "known." in ids
    # The registry refuses a second declaration of an id.
    with pytest.raises(RegistryError):
        check("test.duplicate-of-driver-cuda", ids=("driver.cuda",))(lambda ctx: iter(()))
    assert "test.duplicate-of-driver-cuda" not in REGISTRY


def test_every_declared_id_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z0-9]+(?:\.[a-z0-9<>-]+)+)`", readme))
    missing = [i for i in declared_ids() if (i[:-1] + ".<id>" if i.endswith(".") else i) not in documented]
    assert missing == [], f"ids without a README line: {missing}"


@pytest.mark.parametrize("fid", sorted(PRODUCERS))
def test_every_resolver_id_is_reachable(matrix, fid: str) -> None:  # type: ignore[no-untyped-def]
    rep = _report(matrix, PRODUCERS[fid])
    assert fid in {f.id for f in rep.findings}, [f.id for f in rep.findings]


def test_producers_cover_every_resolver_id() -> None:
    assert set(PRODUCERS) == set(CHECK_IDS)


def _satisfying(matrix, key: str, spec) -> Optional[str]:  # type: ignore[no-untyped-def]
    from packaging.version import Version

    pools = {
        "torch": [r.raw for r in matrix.torch],
        "tensorflow": [r.raw for r in matrix.tensorflow],
        "cudnn": [r.raw for r in matrix.cudnn],
        "cuda": sorted({".".join(r.raw.split(".")[:2]) for r in matrix.cuda_releases}),
        "python": ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"],
        "driver": sorted({d for r in matrix.cuda_releases for d in r.min_driver.values() if d}),
        "cc": sorted({str(r.cc) for r in matrix.ccs}),
    }
    for raw in pools.get(key, []):
        if Version(raw) in spec:
            return raw
    return None


def test_every_known_issue_row_is_reachable(matrix) -> None:  # type: ignore[no-untyped-def]
    unreachable = []
    for issue in matrix.known_issues:
        if "os" in issue.when:
            continue  # matched by the dockerfile/doctor layers, not by `compat check`
        flags = {k: _satisfying(matrix, k, spec) for k, spec in issue.when.items()}
        if any(v is None for v in flags.values()):
            unreachable.append(issue.id)
            continue
        facts = facts_of(**{k: v for k, v in flags.items()})  # type: ignore[arg-type]  # mypy: a **dict could name a typed keyword
        facts = facts.with_values({r: make_fact(r, "true", "test") for r in issue.requires})
        # Rows that restate a core check's cause are reported when the core check passes: the doctor measures
        # TensorFlow's own cuDNN and compiled archs (tf_cudnn, tf_archs), the known issue is what remains.
        measured = {}
        if "tensorflow" in flags and flags.get("cudnn"):
            measured["tf_cudnn"] = make_fact("tf_cudnn", flags["cudnn"], "doctor")
        if "tensorflow" in flags and flags.get("cc"):
            sm = "sm_" + str(flags["cc"]).replace(".", "")
            measured["tf_archs"] = make_fact("tf_archs", sm, "doctor")
        found = set()
        for stack in (facts, facts.with_values(measured)):
            found |= {f.id for f in resolve(stack, matrix).findings}
        if f"known.{issue.id}" not in found:
            unreachable.append(issue.id)
    assert unreachable == []
