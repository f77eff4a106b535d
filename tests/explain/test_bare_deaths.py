"""A log's verdict, and bare deaths (a dying kernel, a bus error, a silent exit): with no named cause the verdict is
"inconclusive" with ranked suspects, host memory first, each with the command that confirms it; a named cause
wins; look-alike lines stay silent."""

from __future__ import annotations

from typing import Any

import pytest

from compat.explain.diagnosis import explain_document, verdict_of
from compat.explain.signature import Catalogue
from tests.explain.helpers import scan


def test_status_values(catalogue: Catalogue) -> None:
    assert verdict_of([]) == "nothing-found"
    doc = explain_document(scan(catalogue, "RuntimeError: CUDA error: out of memory\n").diagnoses())
    assert doc["status"] == "diagnosed" and doc["schema_version"] == 1
    assert explain_document([])["status"] == "nothing-found"


def test_dying_kernel_is_inconclusive_host_memory_first(catalogue: Catalogue) -> None:
    text = "epoch 3 step 137/2000 loss 0.2\nThe kernel appears to have died. It will restart automatically.\n"
    d = scan(catalogue, text).diagnoses()
    assert verdict_of(d) == "inconclusive"
    assert [x.category for x in d] == ["host_oom", "segfault", "hardware_xid"]
    assert all(x.suspected and x.confirm is not None and x.confirm.command for x in d)
    assert d[0].confidence > d[1].confidence > d[2].confidence
    assert d[0].evidence_at[0].line == 2
    j = d[0].to_json()
    assert j["suspected"] is True and j["confirm"]["command"] and j["evidence_lines"][0]["line"] == 2


def test_a_named_cause_beats_a_bare_death(catalogue: Catalogue) -> None:
    text = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)\n"
    d = scan(catalogue, text).diagnoses()
    assert d[0].category == "host_oom" and not d[0].suspected and verdict_of(d) == "diagnosed"


def test_bus_error_suspects_shared_memory_first(catalogue: Catalogue) -> None:
    d = scan(catalogue, "Creating workers...\nBus error (core dumped)\n").diagnoses()
    assert [x.category for x in d][:2] == ["dataloader_shm", "host_oom"] and d[0].suspected


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
