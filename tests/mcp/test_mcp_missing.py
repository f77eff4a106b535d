"""Without the [mcp] extra, `compat mcp` says how to install it: one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_sdk_is_one_line_and_exit_2(tmp_path: Path) -> None:
    shadow = tmp_path / "mcp"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('no SDK here')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-m", "compat", "mcp"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pip install 'compat[mcp]'" in lines[0]
    assert proc.stdout == ""
