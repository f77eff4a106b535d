"""Signals to compat (issue 19, item 2): TERM, HUP and INT kill every child's process group, remove the
temporary directories and exit 128+signal; SIGKILL of compat still takes its direct children (PDEATHSIG).
On main the smoke child kept running (seen at 187% CPU 33 s later) and /tmp/compat-smoke-* stayed behind."""

from __future__ import annotations

import random
import signal
from pathlib import Path

import pytest

from tests.chaos.harness import assert_contract, run

# A fake interpreter: answers the smoke job's "which frameworks" question, then, as the training child, starts a
# grandchild and ignores SIGTERM (the worst kind of child to clean up).
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-c" ]; then echo '@@compat-detect {"torch": "2.5.1", "tensorflow": null}'; exit 0; fi
trap '' TERM HUP INT
sleep 300 &
while :; do sleep 1; done
"""

# A fake interpreter whose every start hangs (the doctor's framework probe waits on it).
HANGING_PYTHON = """#!/bin/sh
trap '' TERM HUP INT
sleep 300 &
while :; do sleep 1; done
"""


def _exe(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    p.chmod(0o755)
    return str(p)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_smoke_child_dies_with_compat(tmp_path: Path, sig: int) -> None:
    py = _exe(tmp_path, "python", FAKE_PYTHON)
    r = run(["smoke", "--python", py, "--timeout", "60"], signal_after=(2.0, sig), cap_s=20)
    assert r.code == 128 + sig, r.err
    assert_contract(r, codes=(128 + sig,), cap_s=20)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_doctor_probes_die_with_compat(tmp_path: Path, sig: int) -> None:
    py = _exe(tmp_path, "python", HANGING_PYTHON)
    r = run(["doctor", "--no-smoke", "--timeout", "20", "--python", py], signal_after=(1.5, sig), cap_s=20)
    assert_contract(r, codes=(128 + sig,), cap_s=20)


def test_signal_at_random_points_of_a_doctor_run(tmp_path: Path) -> None:
    """TERM at a random moment of a full doctor run (probes, then the smoke child): always 143, nothing left."""
    py = _exe(tmp_path, "python", FAKE_PYTHON)
    rng = random.Random(19)
    for delay in sorted(rng.uniform(0.3, 4.0) for _ in range(3)):
        r = run(["doctor", "--timeout", "2", "--python", py], signal_after=(delay, signal.SIGTERM), cap_s=30)
        assert_contract(r, codes=(143, 0, 1), cap_s=30)


# The training child without a grandchild of its own: after SIGKILL of compat nothing may be left.
LONE_CHILD_PYTHON = """#!/bin/sh
if [ "$1" = "-c" ]; then echo '@@compat-detect {"torch": "2.5.1", "tensorflow": null}'; exit 0; fi
trap '' TERM HUP INT
while :; do sleep 1; done
"""


def test_sigkill_of_compat_takes_its_children(tmp_path: Path) -> None:
    # No handler runs on SIGKILL: the direct child dies by PR_SET_PDEATHSIG (on main it kept running). Its own
    # children are out of reach once compat is gone (the smoke harness's DDP ranks carry PDEATHSIG themselves).
    py = _exe(tmp_path, "python", LONE_CHILD_PYTHON)
    r = run(["smoke", "--python", py, "--timeout", "60"], signal_after=(3.0, signal.SIGKILL), cap_s=20)
    assert r.code == -signal.SIGKILL
    assert r.leftovers == [], r.leftovers


def test_a_signal_during_teardown_does_not_replace_the_answer() -> None:
    # CPython puts the default handlers back while it finalizes: a TERM in that window killed compat (-15) after
    # the report was written (seen at 2.5 s of a 2.5 s doctor run). compat blocks the signals once its answer is
    # decided; the signal is discarded with the process and the exit code stays the report's.
    import subprocess
    import sys

    code = (
        "import os, signal, time\n"
        "from compat.cli import _quiet_teardown\n"
        "_quiet_teardown()\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(0.2)\n"
        "raise SystemExit(1)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr[-300:])
