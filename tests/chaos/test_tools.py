"""`compat doctor` with faulty tools on PATH (nvidia-smi, nvcc, dmesg, journalctl all behaving the same way):
hang, flood, crash, garbage, terminal escapes, detached grandchildren, ignoring TERM. Each run keeps the
contract: exit code, time and memory caps, no process and no temporary file left behind, no raw escape."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.chaos.harness import assert_contract, run
from tests.chaos.test_nvml_crash import BARE_PYTHON

TOOLS = ("nvidia-smi", "nvcc", "dmesg", "journalctl")
BEHAVIOURS = {
    "hang": "sleep 300\n",
    "flood": "head -c 200000000 /dev/zero | tr '\\0' 'y'\n",
    "crash": "kill -SEGV $$\n",
    "garbage": "head -c 4096 /dev/urandom\n",
    "escapes": "printf '\\033]0;pwned\\007\\033[2J\\033[31mTesla V100, 7.0, 535.104.05\\n'\n",
    "grandchild": "sleep 300 &\necho 'Tesla V100-SXM2-16GB, 7.0, 535.104.05, 16384, 0'\n",
    "ignore-term": "trap '' TERM\nwhile :; do sleep 1; done\n",
}


def _fake_bin(tmp_path: Path, behaviour: str) -> Path:
    d = tmp_path / f"bin-{behaviour}"
    d.mkdir()
    for tool in TOOLS:
        p = d / tool
        p.write_text("#!/bin/sh\n" + textwrap.dedent(BEHAVIOURS[behaviour]))
        p.chmod(0o755)
    return d


@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_doctor_with_faulty_tools(tmp_path: Path, behaviour: str) -> None:
    fake = _fake_bin(tmp_path, behaviour)
    env = {"PATH": f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    r = run(["doctor", "--no-smoke", "--timeout", "1", "--python", BARE_PYTHON], env=env)
    assert_contract(r, codes=(0, 1), cap_s=30)
    assert b"\x1b" not in r.out and b"\x07" not in r.out
    j = run(["doctor", "--no-smoke", "--timeout", "1", "--python", BARE_PYTHON, "--json"], env=env)
    assert_contract(j, codes=(0, 1), cap_s=30)
    assert json.loads(j.out)["schema_version"] == 1
