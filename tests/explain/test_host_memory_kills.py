"""Host-RAM kills that carry no memory word (a shell's "Killed", signal 9, exit -9, earlyoom) are named host_oom;
a DataLoader worker's kill is not counted twice; look-alike lines stay quiet."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from compat.explain.diagnosis import verdict_of
from tests.explain.helpers import SIGNATURES


def _cats(diagnose: Any, text: str) -> list[str]:
    return [d.category for d in diagnose(text)]


@pytest.mark.parametrize(
    "line",
    [
        "comfyui     | /home/scripts/entrypoint.sh: line 42:     8 Killed                  python3 ./ComfyUI/main.py",
        "zsh: killed     python main.py",
        "Generate.py fails on `Loading checkpoint shards: 52%` with message `killed`.",
        "Error: llama runner process has terminated: signal: killed",
        "ERROR: error code -9",
        "subprocess.CalledProcessError: returncode=-9",
        "Aug 04 10:39:10 debian earlyoom[845]: low memory! at or below SIGTERM limits: mem  3.00%, swap 10.00%",
        'Aug 04 10:39:10 debian earlyoom[845]: sending SIGTERM to process 322603 uid 1000 "python3.13": oom_score 1282',
    ],
)
def test_host_memory_kills_are_named(diagnose: Any, line: str) -> None:
    d = diagnose(line + "\n")
    assert d and d[0].category == "host_oom" and verdict_of(d) == "diagnosed"


@pytest.mark.parametrize(
    "line",
    [
        "epoch 3 step 137/2000 killed_tokens=4 loss 0.2",
        "INFO: the job was not killed by the scheduler",
        "exit code -90 from helper",
        "error code -91",
        "step -9 of the warmup, lr 1e-9",
        "earlyoom 1.7 starting, mem total: 31 GiB",
        "terminated: signal: interrupt",
        "zsh: command not found: killed",
    ],
)
def test_look_alikes_stay_quiet(diagnose: Any, line: str) -> None:
    assert "host_oom" not in _cats(diagnose, line + "\n")


def test_dataloader_killed_is_not_counted_twice(diagnose: Any) -> None:
    # a second matching row would add 0.02 to the confidence (engine: base + 0.02 per extra signature)
    rows = yaml.safe_load(SIGNATURES.read_text(encoding="utf-8"))["signatures"]
    own = next(r["confidence"] for r in rows if r["id"] == "dataloader-killed")
    d = diagnose("RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.\n")
    assert d[0].category == "host_oom" and d[0].confidence == pytest.approx(own)
    two = diagnose("Error: llama runner process has terminated: signal: killed\nKilled\n")
    assert two[0].confidence == pytest.approx(0.52)
