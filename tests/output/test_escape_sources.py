"""Issue 32, item 17: control sequences from outside (a fleet host name, a child's stderr, a recorded run's text)
reach neither a terminal nor report.html; compat's own colour codes are compat's alone."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from compat.fleet.report import NodeInput, build_fleet, render_text
from compat.record import notebook
from compat.record.document import ExitInfo
from compat.record.html import render_html
from compat.record.summary import summary
from compat.record.verdict import verdict_of
from compat.smoke import render_text as smoke_text
from tests.fleet.helpers import recorded
from tests.record.helpers import record
from tests.smoke.test_result import passed

RED = "\x1b[31m"  # one of compat's own colour codes: the stream filter lets it through
HOSTILE = [RED + "red", "\x1b]0;owned\x07", "\x1b[2J", "bell\x07", "\x1b[0m", "nul\x00"]
RAW = ("\x1b", "\x07", "\x00")


def _clean(text: str) -> None:
    """None of the hostile sequences, raw (compat may colour its own words: `ESC[0m` alone proves nothing)."""
    for h in [*HOSTILE[:-2], *RAW[1:]]:
        assert h not in text, repr(text)


def test_sanitize_tree_keeps_structure_and_shows_the_codes() -> None:
    from compat._text import sanitize_tree

    doc = {"a\x1b": [RED + "x", 3, None, {"b": "\x07"}], "n": 1.5}
    assert sanitize_tree(doc) == {"a\\x1b": ["\\x1b[31mx", 3, None, {"b": "\\x07"}], "n": 1.5}


def test_fleet_host_names_and_reasons(tmp_path: Path) -> None:
    base = recorded("real/dev-vm.json")
    nodes = [NodeInput(name=f"node{i}{h}", source="x", doc=base) for i, h in enumerate(HOSTILE)]
    nodes.append(NodeInput(name="gone", source="ray:1", status="unreachable", reason="".join(HOSTILE)))
    _clean(render_text(build_fleet(nodes, source="files"), io.StringIO()))


def test_fleet_merge_with_colour_shows_only_compat_colours(tmp_path: Path, run: Any) -> None:
    files = []
    for i, h in enumerate(HOSTILE[:3]):
        doc = dict(recorded("real/dev-vm.json"), host=f"node{i}{h}")
        files.append(tmp_path / f"n{i}.json")
        files[-1].write_text(json.dumps(doc))
    out = run("fleet", "merge", "--color", "always", *map(str, files)).out
    assert RED + "red" not in out and "\x1b]0;" not in out and "\x1b[2J" not in out


def test_smoke_stderr_tail() -> None:
    res = passed(verdict="failed", details={"stderr_tail": "\n".join(HOSTILE)})
    _clean(smoke_text(res, io.StringIO()))


def test_run_summary() -> None:
    rec = record(ExitInfo("exited", code=1), output=HOSTILE)
    rec.notes = list(HOSTILE)
    rec.gpu["reason"] = "".join(HOSTILE)
    rec.verdict = verdict_of(rec).to_json()
    rec.verdict["deciding"] = list(HOSTILE)
    _clean(summary(rec))


def test_report_html_has_no_raw_control_bytes() -> None:
    rec = record(ExitInfo("exited", code=1), output=HOSTILE)
    rec.command = ["python", *HOSTILE]
    rec.notes = list(HOSTILE)
    rec.verdict = verdict_of(rec).to_json()
    page = render_html(rec)
    _clean(page)
    assert "\\x1b]0;owned\\x07" in page  # shown, not dropped


def test_load_ext_prints_the_previous_death_without_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"COMPAT_CACHE_DIR": str(tmp_path)}
    key = notebook.kernel_key()
    rec = record(ExitInfo("signaled", signal=9), output=HOSTILE)
    doc = rec.to_json()
    doc["pid"] = os.getpid() + 1
    doc["verdict"] = dict(verdict_of(rec).to_json(), title="".join(HOSTILE), deciding=list(HOSTILE))
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / f"notebook-{key}-{doc['pid']}.json").write_text(json.dumps(doc))
    # No watcher, no faulthandler, no atexit hook in the test process: only the message is under test.
    monkeypatch.setattr(notebook, "_STATE", {"pid": os.getpid()})
    out = io.StringIO()
    notebook.load(out=out, environ=env)
    assert "previous kernel" in out.getvalue()
    _clean(out.getvalue())
