"""Generated text reads well: every finding, diagnosis and fix text in the goldens, in a sweep over the matrix
(every GPU × drivers × framework stacks, each GPU also by its short name and by its compute capability alone) and
for every explain signature and recorded log passes `tests.text_rules` (issue 31, item 3)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Optional

import pytest

from compat.explain.catalogue import default_catalogue
from compat.explain.engine import Scanner, finish
from compat.facts import Facts, load_snapshot
from compat.findings import Finding, Fix
from compat.matrix import Matrix, get_matrix
from compat.pipeline.check import check_stack
from tests.conftest import ROOT
from tests.explain.helpers import DATA as EXPLAIN_DATA
from tests.explain.helpers import cases
from tests.solver.sweep import facts_of
from tests.text_rules import expected_article, problems

PROSE_KEYS = {"title", "message", "text", "explanation", "reason", "why", "what"}

# Framework stacks for the sweep: old and new torch (with cuDNN and a toolkit), a CPU build, TensorFlow, JAX.
STACKS: dict[str, dict[str, str]] = {
    "torch-old": {"torch": "1.13.1+cu117", "python": "3.10"},
    "torch-new": {"torch": "2.5.1+cu124", "cudnn": "8.9.7", "cuda": "12.4"},
    "torch-cpu": {"torch": "2.4.0+cpu"},
    "torch-rocm": {"torch": "2.5.1+rocm6.2", "tensorflow": "2.15.0"},
    "torch-xpu": {"torch": "2.5.0+xpu", "python": "3.9"},
    "tensorflow": {"tensorflow": "2.15.0", "cudnn": "9.1.0", "cuda": "11.8"},
    "jax": {"jax": "0.4.30+cuda12", "cudnn": "8.6.0"},
}
DRIVERS = ("470.82.01", "535.104.05", "580.65.06")


@lru_cache(maxsize=1)
def _matrix() -> Matrix:
    return get_matrix(None)


def _finding_texts(f: Finding) -> Iterator[str]:
    yield f.title
    yield f.message
    for fix in f.fixes:
        yield fix.text


def _fix_texts(fixes: Iterable[Fix]) -> Iterator[str]:
    for fix in fixes:
        yield fix.text


def _bad(texts: dict[str, str]) -> list[str]:
    """'where: problem' for every text with a problem (one line each)."""
    return [f"{where}: {p}  <<{text}>>" for text, where in texts.items() for p in problems(text)]


# ------------------------------------------------------------------ the rules catch what the issue saw


@pytest.mark.parametrize(
    "text",
    [
        "5090 has compute capability 12.0: no SASS in the build runs on it.",
        "A GPU with compute capability 12.0 has compute capability 12.0.",
        "cuDNN 9.1 supports compute capability 5.0 and newer; a GPU with compute capability 3.5 is 3.5.",
        "A ALLREDUCE collective did not finish in time on this rank.",
        "Install the the driver.",
        "TensorFlow loads cuDNN at run time. It must match. TensorFlow loads cuDNN at run time.",
        "TensorFlow was built with cuDNN 8.1.0 but loaded cuDNN 8.0.4. TensorFlow was built with cuDNN 8.1.0 but "
        "loaded cuDNN 8.0.4 (the head of the line may be wrapped away).",
        "Enable a NVIDIA driver.",
        "an GPU is needed",
        "a ECC error",
        "an NCCL error",
        "a error was found",
        "A 8.00 GiB allocation failed.",
        "torch 2.5.0+xpu is a XPU (Intel GPU) build",
    ],
)
def test_the_rules_reject(text: str) -> None:
    assert problems(text), text


@pytest.mark.parametrize(
    "text",
    [
        "GeForce RTX 5090 has compute capability 12.0: no SASS in the build runs on it.",
        "The GPU has compute capability 12.0.",
        "An ALLREDUCE collective did not finish in time. A NCCL error, an NVML error, a GPU, an SM, an Xid 79.",
        "an NVIDIA driver, a CUDA error, a SIGKILL, an OOM kill, a PTX JIT, an hour, a user, a one-off, an error",
        "Then run it. Then run it again.",
        "An allocation of 8.00 GiB failed; a 1.5 GiB block, an 11 GiB card, a 110 MiB buffer, an 80 GB A100.",
    ],
)
def test_the_rules_accept(text: str) -> None:
    assert problems(text) == []


def test_articles_follow_pronunciation() -> None:
    assert [
        expected_article(w) for w in ("GPU", "NVML", "SM", "ALLREDUCE", "NCCL", "MIG", "ECC", "PTX", "XID")
    ] == [
        "a",
        "an",
        "an",
        "an",
        "a",
        "a",
        "an",
        "a",
        "an",
    ]


# ------------------------------------------------------------------ goldens


def _strings(doc: Any, key: str = "") -> Iterator[str]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _strings(v, k)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v, key)
    elif isinstance(doc, str) and key in PROSE_KEYS:
        yield doc


def test_golden_texts_read_well() -> None:
    texts: dict[str, str] = {}
    goldens = [ROOT / "tests" / "output" / "golden", ROOT / "tests" / "data" / "nvml_profiles" / "golden"]
    goldens.append(ROOT / "tests" / "data" / "doctor_keys")
    for path in sorted(p for d in goldens for p in d.glob("*.json")):
        for s in _strings(json.loads(path.read_text(encoding="utf-8"))):
            texts.setdefault(s, path.name)
    assert len(texts) > 50
    assert _bad(texts) == []


# ------------------------------------------------------------------ the sweep over the matrix


def _short_name(m: Matrix, name: str) -> Optional[str]:
    """The model number alone ("5090" for "GeForce RTX 5090") when the matrix finds the GPU by it."""
    last = name.split()[-1]
    row = m.gpu(last)
    return last if last != name and row is not None and row.name == name else None


def _runs(stack: str) -> Iterator[tuple[str, Facts, Optional[tuple[str, str]]]]:
    """Every GPU of the matrix by name (by its short name where the matrix knows that: the texts must use the full
    one) with an old and a new driver, and every compute capability alone with each driver."""
    m = _matrix()
    for drv in (DRIVERS[0], DRIVERS[-1]):
        for g in m.gpus:
            short = _short_name(m, g.name)
            given = short or g.name
            alias = (short, g.name) if short else None
            yield f"{stack} {drv} --gpu {given!r}", facts_of(gpu=given, driver=drv, **STACKS[stack]), alias
    for drv in DRIVERS:
        for cc in sorted({str(g.cc) for g in m.gpus}):
            yield f"{stack} {drv} --cc {cc}", facts_of(cc=cc, driver=drv, **STACKS[stack]), None


def _stack_texts(stack: str) -> tuple[dict[str, str], list[str], int]:
    m = _matrix()
    texts: dict[str, str] = {}
    misnamed: list[str] = []
    n = 0
    for where, facts, alias in _runs(stack):
        n += 1
        for f in check_stack(facts, m).findings:
            for t in _finding_texts(f):
                texts.setdefault(t, f"{where} [{f.id}]")
                if alias is not None and re.search(
                    rf"(?<![\w-]){re.escape(alias[0])}(?![\w])", t.replace(alias[1], "")
                ):
                    misnamed.append(f"{where} [{f.id}]: {alias[0]!r} for {alias[1]!r} <<{t}>>")
    return texts, misnamed, n


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_sweep_finding_texts_read_well(stack: str) -> None:
    texts, misnamed, runs = _stack_texts(stack)
    assert runs > 350 and len(texts) > 15
    assert _bad(texts) == []
    assert misnamed == []  # a GPU given by a short name is printed by the matrix's full name


# ------------------------------------------------------------------ explain: every signature and recorded log


def _explain_texts(logs: Iterable[tuple[str, str]]) -> dict[str, str]:
    m = _matrix()
    cat = default_catalogue(m)
    snapshots: list[Optional[Facts]] = [None] + [
        load_snapshot(str(p)) for p in sorted(EXPLAIN_DATA.glob("snapshot_*.json"))
    ]
    texts: dict[str, str] = {}
    for where, log in logs:
        for facts in snapshots:
            sc = Scanner(cat)
            sc.feed_bytes(log.encode("utf-8", "replace"))
            sc.close()
            for d in finish(sc, facts, m):
                for t in (d.title, d.explanation, *_fix_texts(d.fixes)):
                    texts.setdefault(t, f"{where} [{d.category}]")
                if d.confirm is not None:
                    texts.setdefault(d.confirm.text, f"{where} [{d.category}]")
    return texts


def test_every_explain_category_and_signature_reads_well() -> None:
    cat = default_catalogue(_matrix())
    texts: dict[str, str] = {}
    for c in cat.categories.values():
        for t in (c.title, c.explanation, *_fix_texts(c.fixes)):
            texts.setdefault(t, f"category {c.name}")
    logs: list[tuple[str, str]] = []
    by_category: dict[str, list[str]] = {}
    doc = _matrix().raw["signatures.yaml"]
    for section in ("signatures", "extractors", "deaths"):
        for row in doc.get(section) or ():
            for i, e in enumerate(row["examples"]):
                logs.append((f"{section} {row['id']} example {i}", str(e)))
                by_category.setdefault(str(row.get("category") or section), []).append(str(e))
    logs += [(f"category {k} (all examples)", "\n".join(v)) for k, v in sorted(by_category.items())]
    logs += [(f"{c['file']}:{c['id']}", str(c["log"])) for c in cases()]
    texts.update({k: v for k, v in _explain_texts(logs).items() if k not in texts})
    assert len(texts) > 100
    assert _bad(texts) == []


# ------------------------------------------------------------------ the facts line shows what compat knows


def _facts_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Facts: "))


def test_facts_line_gives_the_target_gpus_compute_capability(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = tmp_path / "Dockerfile"
    df.write_text(
        "FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04\nRUN pip install torch==2.5.1\n", encoding="utf-8"
    )
    r = run("dockerfile", str(df), "--target-gpu", "5090")
    line = _facts_line(r.out)
    assert "gpu 5090 (cc 12.0, from the matrix)" in line and "?" not in line, line
    assert "has no kernels for GeForce RTX 5090 (sm_120)" in r.out


def test_facts_line_has_no_question_mark_for_a_gpu_known_by_its_cc(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--cc", "3.5", "--cuda", "12.4")
    line = _facts_line(r.out)
    assert "gpu (cc 3.5, --cc)" in line and "?" not in line, line
    assert "a GPU with compute capability 3.5 has compute capability" not in r.out


# ------------------------------------------------------------------ Dockerfiles: every recorded real one


def test_dockerfile_texts_read_well() -> None:
    from compat.dockerfile import check_dockerfile
    from compat.errors import CompatError

    m = _matrix()
    texts: dict[str, str] = {}
    misnamed: list[str] = []
    files = sorted((ROOT / "tests" / "data" / "dockerfile" / "real").glob("*.Dockerfile"))
    targets: list[dict[str, str]] = [
        {"target_gpu": "5090", "target_driver": "470.82.01"},
        {"target_gpu": "K80", "target_driver": "580.65.06"},
        {"target_cc": "12.0"},
    ]
    for path in files:
        for target in targets:
            try:
                rep = check_dockerfile(
                    path,
                    m,
                    target_gpu=target.get("target_gpu"),
                    target_cc=target.get("target_cc"),
                    target_driver=target.get("target_driver"),
                )
            except CompatError:
                continue
            for f in rep.findings:
                for t in _finding_texts(f):
                    texts.setdefault(t, f"{path.name} {target} [{f.id}]")
                    if target.get("target_gpu") == "5090" and re.search(r"(?<!RTX )\b5090\b", t):
                        misnamed.append(f"{path.name} [{f.id}]: <<{t}>>")
    assert len(files) > 30 and len(texts) > 200
    assert _bad(texts) == []
    assert misnamed == []
