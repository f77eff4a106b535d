"""Failure causes: the child's error text through compat.explain (or the stand-in table), and signals."""

from __future__ import annotations

import signal

import pytest

from compat.smoke import causes
from tests.smoke.helpers import DATA

RECORDED = [
    ("stderr_torch_no_kernel_image.txt", "arch_not_supported"),
    ("stderr_torch_cuda_oom.txt", "gpu_oom"),
    ("stderr_tf_gpu_oom.txt", "gpu_oom"),
    ("stderr_tf_cudnn_mismatch_segv.txt", "cudnn_mismatch"),
]


@pytest.mark.parametrize(("name", "category"), RECORDED)
def test_recorded_errors_are_classified(name: str, category: str) -> None:
    cause = causes.cause_of((DATA / name).read_text())
    assert cause is not None and cause.category == category
    assert cause.category in causes.CATEGORIES  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "category"), RECORDED)
def test_the_stand_in_table_agrees(name: str, category: str) -> None:
    cause = causes.builtin_cause_of((DATA / name).read_text())
    assert cause is not None and (cause.category, cause.source) == (category, "builtin")
    assert cause.fixes


def test_no_cause_in_text_without_an_error() -> None:
    assert causes.cause_of("") is None
    assert causes.builtin_cause_of("all fine, the loss went down") is None


def test_stand_in_table_names_only_known_categories() -> None:
    assert {c for c, _, _ in causes._BUILTIN} <= set(causes.CATEGORIES)  # type: ignore[attr-defined]


def test_signals() -> None:
    kill = causes.signal_cause(signal.SIGKILL, True)
    assert kill is not None and kill.category == "host_oom"
    assert causes.signal_cause(signal.SIGKILL, False) is None
    assert causes.signal_cause(signal.SIGKILL, None) is None
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT):
        c = causes.signal_cause(sig, None)
        assert c is not None and c.category == "segfault" and signal.Signals(sig).name in c.title
    assert causes.signal_cause(signal.SIGTERM, None) is None


def test_fixes_from_any_shape() -> None:
    from compat.findings import Fix

    class F:
        text = "do it"
        command = "run it"

    assert causes._fixes(["a", {"text": "b", "command": "c"}, F(), Fix("d")]) == (
        Fix("a"),
        Fix("b", "c"),
        Fix("do it", "run it"),
        Fix("d"),
    )
