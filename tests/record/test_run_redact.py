"""`compat run --redact --report DIR` (issue 32, item 2): the report folder carries no credential; the cache keeps the
whole record (what `compat report --redact` redacts later)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.record.conftest import run_cli

SECRETS = ("hf_abcdefghijklmnopqrstuvwxyz0123", "hunter2", "secretpw", "Pa55w0rd")
SCRIPT = (
    "echo HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123; echo https://bob:secretpw@example.com/x; "
    "echo postgres://admin:Pa55w0rd@db:5432/x; exit 3"
)


def _run(tmp_path: Path, *flags: str) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    report = tmp_path / "rep"
    argv = ["run", "--no-gpu", "--no-kernel-log", "--report", str(report), *flags]
    r = run_cli([*argv, "--", "sh", "-c", SCRIPT, "sh", "--password=hunter2"], tmp_path / "cache")
    return r, report


def test_run_redact_writes_a_report_without_the_secrets(tmp_path: Path) -> None:
    r, report = _run(tmp_path, "--redact")
    assert r.returncode == 3, r.stderr
    run_json = (report / "run.json").read_text()
    html = (report / "report.html").read_text()
    json.loads(run_json)
    for secret in SECRETS:
        assert secret not in run_json, secret
        assert secret not in html, secret
    # the cache keeps the whole record: `compat report --redact` is where it is redacted later
    cached = "".join(p.read_text() for p in (tmp_path / "cache" / "records").glob("run-*.json"))
    assert "hunter2" in cached


def test_run_without_redact_keeps_the_record_whole(tmp_path: Path) -> None:
    r, report = _run(tmp_path)
    assert r.returncode == 3, r.stderr
    assert "hunter2" in (report / "run.json").read_text()
