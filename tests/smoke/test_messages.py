"""Issue 19, item 11: the smoke verdict says when the child was killed for flooding its output."""

from __future__ import annotations

import signal

from compat.smoke.harness import ChildRun
from compat.smoke.job import broken_by_probe
from compat.smoke.result import SmokeOptions
from compat.smoke.verdict import classify


def test_flood_kill_is_in_the_message() -> None:
    note = "its output passed 256 MiB: killed before it filled the disk"
    run = ChildRun(
        ("python", "child.py"), 123, -signal.SIGTERM, False, None, "", "y" * 100, None, "missing",
        1.0, 0.0, 1.0, "train", 0, None, (note,),
    )  # fmt: skip
    res = classify(run, options=SmokeOptions(), framework="torch", version="2.5.1", base={}, t_begin=0.0)
    assert res.verdict != "passed"
    assert note in res.message


def test_a_framework_the_probe_found_hung_is_not_retried() -> None:
    probes = {"frameworks": {"status": "ok", "children": {"torch": {"status": "timeout"}}}}
    why = broken_by_probe(probes)
    assert why is not None and "import torch" in why and "hung" in why
    assert broken_by_probe({"frameworks": {"children": {"torch": {"status": "ok"}}}}) is None
    crashed = {"frameworks": {"children": {"torch": {"status": "crashed", "signal": "SIGSEGV"}}}}
    assert "SIGSEGV" in str(broken_by_probe(crashed))
    hung_python = {
        "frameworks": {"status": "error", "meta": {"status": "timeout"}, "error": "the interpreter x hung"}
    }
    assert "the interpreter x hung" in str(broken_by_probe(hung_python))
