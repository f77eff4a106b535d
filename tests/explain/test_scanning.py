"""The scanner: line numbers and --context across blocks and byte chunks, the pre-filter's pure-Python fallback,
step counters never read as exit codes, and --context on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from compat.explain.engine import Scanner
from compat.explain.prefilter import Prefilter
from compat.explain.signature import Catalogue
from tests.explain.helpers import ROOT, scan


def test_step_counters_are_not_exit_codes(catalogue: Catalogue) -> None:
    noise = "".join(
        f"Epoch 1: 137/2000 [00:{i:02d}<01:00] loss=0.{i}139 step 139 137it/s code 13{i % 10}x\n"
        for i in range(50)
    )
    assert scan(catalogue, noise).diagnoses() == []
    d = scan(catalogue, noise + "Process finished with exit code 137\n").diagnoses()
    assert d[0].category == "host_oom" and d[0].evidence_at[0].line == 51


def test_line_numbers_and_context_across_blocks(catalogue: Catalogue) -> None:
    lines = [f"step {i} loss 0.1" for i in range(1, 10)] + ["RuntimeError: CUDA error: out of memory"]
    lines += [f"after {i}" for i in range(1, 4)]
    text = "\n".join(lines) + "\n"
    for cut in (0, 5, len(text) // 2, len(text) - 3):
        s = Scanner(catalogue, context=2)
        if cut:
            s.feed_block(text[:cut])
        s.feed_block(text[cut:])
        ev = s.diagnoses()[0].evidence_at[0]
        assert (ev.line, ev.before, ev.after) == (
            10,
            ("step 8 loss 0.1", "step 9 loss 0.1"),
            ("after 1", "after 2"),
        ), cut


def test_prefilter_pure_python_fallback_agrees(catalogue: Catalogue) -> None:
    data = (ROOT / "tests" / "data" / "explain").glob("*.yaml")
    text = "\n".join(c["log"] for p in sorted(data) for c in yaml.safe_load(p.read_text("utf-8"))["cases"])
    low = text.encode("utf-8").lower()
    fast = Prefilter(catalogue.keywords)
    pure = Prefilter(catalogue.keywords, pure=True)
    assert pure.kind == "regex"
    starts = list(pure.starts(low))
    assert len(starts) > 100 and starts == list(fast.starts(low))
    a = [d.category for d in scan(catalogue, text).diagnoses()]
    b = [d.category for d in scan(catalogue, text, pure=True).diagnoses()]
    assert a == b and a


def test_cli_context_and_status(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "x.log"
    p.write_text("a\nb\nRuntimeError: CUDA error: out of memory\nc\n", encoding="utf-8")
    r = run("explain", "--json", "--context", "1", str(p))
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    ev = doc["diagnoses"][0]["evidence_lines"][0]
    assert doc["status"] == "diagnosed" and ev == {
        "line": 3,
        "text": ev["text"],
        "before": ["b"],
        "after": ["c"],
    }
    r = run("explain", "--context", "1", str(p))
    assert r.code == 0 and "     3 │ RuntimeError" in r.out and "     2 │ b" in r.out
    r = run("explain", "--context", "-1", str(p))
    assert r.code == 2


def test_chunking_never_changes_the_answer_or_line_numbers(catalogue: Catalogue) -> None:
    import random

    from tests.explain.helpers import cases

    text = "\r\n".join(c["log"] for c in cases()[:60]).encode("utf-8")
    one = Scanner(catalogue)
    one.feed_bytes(text, final=True)
    want = [(d.category, tuple(e.line for e in d.evidence_at)) for d in one.diagnoses()]
    rng = random.Random(14)
    for _ in range(5):
        s = Scanner(catalogue)
        pos = 0
        while pos < len(text):
            step = rng.choice([1, 7, 100, 4096, 50_000])
            s.feed_bytes(text[pos : pos + step])
            pos += step
        assert [(d.category, tuple(e.line for e in d.evidence_at)) for d in s.diagnoses()] == want
    assert want and one.lines == text.count(b"\n")
