"""Rows added from the wild corpus's tuning split, second pass (issue 14, s4-tune2): host-RAM deaths that
carry no memory word, ollama's cudart 999 after suspend, RmInitAdapter. The real line must be read; the
look-alikes must stay quiet."""

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


@pytest.mark.parametrize(
    "line",
    [
        "Kernel crashes when executing code in the current or previous cell.",
        "-> Kernel died, restarting",
        'Afyer about 2 to 4 mionutes, the kernel will die. Message is "Parent Poll Failed"',
        "Your session crashed. Automatically restarting. external_polymer_binary.js:1928:55",
        "ComfyUI_windows_portable>pause",
        'Error: Post "http://127.0.0.1:11434/api/chat": EOF',
        'Error: POST predict: Post "http://127.0.0.1:39149/completion": EOF',
    ],
)
def test_silent_deaths_get_ranked_suspects_host_memory_first(diagnose: Any, line: str) -> None:
    d = diagnose(line + "\n")
    assert verdict_of(d) == "inconclusive"
    assert d[0].category == "host_oom" and d[0].suspected
    assert d[0].confirm is not None and d[0].confirm.command


@pytest.mark.parametrize(
    "line",
    [
        "C:\\ComfyUI_windows_portable>python main.py",
        'Error: Post "https://registry.ollama.ai/v2/library/llama3/manifests/latest": EOF',
        "The kernel died last year and we replaced it",
        "Your session is ready.",
    ],
)
def test_death_look_alikes_stay_silent(diagnose: Any, line: str) -> None:
    assert diagnose(line + "\n") == []


def test_death_gives_way_to_a_named_cause(diagnose: Any) -> None:
    text = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\nComfyUI_windows_portable>pause\n"
    d = diagnose(text)
    assert d[0].category == "gpu_oom" and verdict_of(d) == "diagnosed"


@pytest.mark.parametrize(
    "line",
    [
        "cudaSetDevice err: 999",
        'msg="Unable to load cudart" library=/opt/cuda/lib64/libcudart.so.12.6.37 error="cudart init failure: 999"',
        "[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)",
    ],
)
def test_gpu_left_unusable(diagnose: Any, line: str) -> None:
    assert _cats(diagnose, line + "\n")[0] == "hardware_xid"


def test_rminitadapter_yields_to_a_version_mismatch(diagnose: Any) -> None:
    text = (
        "[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but\n"
        "               NVRM: this kernel module has the version 570.144.  Please\n"
        "[   23.991672] NVRM: GPU 0000:07:00.0: RmInitAdapter failed! (0x61:0x56:1770)\n"
    )
    assert _cats(diagnose, text)[0] == "nvml_mismatch"


@pytest.mark.parametrize(
    "line", ["cudaSetDevice err: 9990", "iteration 999, err: 9991 samples", "failure: 99"]
)
def test_999_look_alikes(diagnose: Any, line: str) -> None:
    assert "hardware_xid" not in _cats(diagnose, line + "\n")
