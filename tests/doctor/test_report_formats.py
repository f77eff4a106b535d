"""`compat doctor`: the inventory header, --format markdown, --redact, the skipped checks in the doctor's words."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.doctor.fakes import fake_python
from tests.doctor.test_cli import doctor


def _env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    exe = fake_python(tmp_path / "userenv" / "bin", "import-error")
    return dict(os.environ, VIRTUAL_ENV=str(tmp_path / "userenv")), exe


def test_text_doctor_opens_with_the_inventory_and_collapses_skips(matrix_dir: Path, tmp_path: Path) -> None:
    env, exe = _env(tmp_path)
    res = doctor(matrix_dir, "doctor", "--no-smoke", env=env)
    lines = res.stdout.splitlines()
    labels = [ln.split()[0] for ln in lines[3:20] if ln.startswith("  ") and ln.strip()]
    for label in ("Driver", "cuDNN", "PyTorch", "Python", "RAM", "CPUs", "/dev/shm", "Disk", "Container/WSL"):
        assert label in labels, res.stdout
    assert f"Python         3.10.12 ({exe})" in res.stdout
    assert re.search(
        r"^Skipped: \d+ checks without the facts they need \(--show-skipped lists them\)$", res.stdout, re.M
    )
    assert "  - " not in res.stdout.split("Skipped:")[1]
    full = doctor(matrix_dir, "doctor", "--no-smoke", "--show-skipped", env=env).stdout
    assert re.search(r"^Skipped \(\d+\)", full, re.M) and "  - smoke: --no-smoke" in full


def test_doctor_skips_never_name_a_check_flag(matrix_dir: Path, tmp_path: Path) -> None:
    env, exe = _env(tmp_path)
    doc = json.loads(doctor(matrix_dir, "doctor", "--no-smoke", "--json", env=env).stdout)
    reasons = {s["id"]: s["reason"] for s in doc["skipped"]}
    assert reasons["tensorflow.cuda"] == f"TensorFlow is not installed in {exe}"
    for why in reasons.values():
        assert not re.search(r"--(?!no-smoke)[a-z]", why), why
        assert "give " not in why


def test_format_markdown_and_redact(matrix_dir: Path, tmp_path: Path) -> None:
    env, _ = _env(tmp_path)
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--format", "markdown", env=env)
    assert res.returncode in (0, 1), res.stderr
    md = res.stdout
    assert md.startswith("## compat doctor report\n") and "### Machine" in md and "### Findings" in md
    assert "| **Python** | 3.10.12 (" in md
    import socket

    host = socket.gethostname()
    red = doctor(matrix_dir, "doctor", "--no-smoke", "--format", "markdown", "--redact", env=env).stdout
    if len(host) >= 3:
        assert f"Host: `{host}`" in md and host not in red
    assert "Host: `<redacted>`" in red
    assert str(tmp_path) in md  # the interpreter's path, user name and all
    js = json.loads(
        doctor(matrix_dir, "doctor", "--no-smoke", "--format", "json", "--redact", env=env).stdout
    )
    assert js["host"] == "<redacted>"


def test_format_errors_are_usage_errors(matrix_dir: Path) -> None:
    bad = doctor(matrix_dir, "doctor", "--no-smoke", "--format", "yaml")
    assert (
        bad.returncode == 2
        and bad.stdout == ""
        and "--format" in bad.stderr
        and all(f in bad.stderr for f in ("text", "json", "markdown", "sarif", "github"))
    )
    both = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--format", "markdown")
    assert both.returncode == 2 and both.stdout == "" and "cannot go with --format markdown" in both.stderr
