"""Bad input and big input: binary, non-UTF-8, ANSI colours, CRLF, notebooks, long lines, block edges."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compat.explain.engine import MAX_LINE, Scanner
from compat.explain.reader import iter_log, notebook_lines
from tests.explain.helpers import log

OOM = log("pytorch-16417")
SHM = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."


def _scan(catalogue, blocks):  # type: ignore[no-untyped-def]
    s = Scanner(catalogue)
    for b in blocks:
        s.feed_block(b)
    s.close()
    return s


def test_ansi_colour_codes_are_stripped(diagnose) -> None:  # type: ignore[no-untyped-def]
    text = "\x1b[31m\x1b[1mRuntimeError\x1b[0m: CUDA error: \x1b[33mdevice-side assert triggered\x1b[0m\n"
    d = diagnose(text)[0]
    assert d.category == "illegal_memory_access"
    assert "\x1b" not in d.evidence[0]
    assert d.evidence[0] == "RuntimeError: CUDA error: device-side assert triggered"


def test_crlf_and_bare_cr(diagnose) -> None:  # type: ignore[no-untyped-def]
    crlf = log("dcpdn-12").replace("\n", "\r\n")
    d = diagnose(crlf)[0]
    assert d.category == "host_oom"
    assert all("\r" not in e for e in d.evidence)
    # tqdm redraws with bare CRs: the error after a progress bar is its own line
    bar = "".join(f"\r 42%|████      | {i}/100 [00:0{i % 9}<00:10]" for i in range(50))
    d = diagnose(bar + "\r" + SHM + "\n")[0]
    assert d.category == "dataloader_shm"
    assert d.evidence == (SHM,)


def test_non_utf8_and_binary_bytes(tmp_path: Path, catalogue) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "crash.log"
    p.write_bytes(
        b"\x00\xff\xfe binary \x80\x81\n"
        + bytes(range(256))
        + b"\n"
        + "Ger\u00e4t: ".encode("latin-1")
        + OOM.encode("utf-8")
        + b"\n\x00\x00"
    )
    s = _scan(catalogue, iter_log(str(p)))
    d = s.diagnoses()[0]
    assert d.category == "gpu_oom"
    assert d.facts["requested"] == "22.00 MiB"


def test_line_split_across_blocks(catalogue) -> None:  # type: ignore[no-untyped-def]
    text = "noise line\n" * 10 + SHM + "\n" + "more noise\n" * 10
    cut = text.index("bus error") + 3  # inside the keyword
    s = _scan(catalogue, [text[:cut], text[cut:]])
    assert [d.category for d in s.diagnoses()] == ["dataloader_shm"]


def test_multibyte_character_split_across_read_blocks(tmp_path: Path, catalogue, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import compat.explain.reader as reader

    monkeypatch.setattr(reader, "BLOCK", 7)
    p = tmp_path / "x.log"
    p.write_text("│ ✗ ünïcödé " * 20 + "\n" + SHM + "\n", encoding="utf-8")
    text = "".join(iter_log(str(p)))
    assert "\ufffd" not in text
    assert _scan(catalogue, [text]).diagnoses()[0].category == "dataloader_shm"


def test_very_long_lines_are_capped(catalogue) -> None:  # type: ignore[no-untyped-def]
    junk = "x" * (5 * MAX_LINE)
    s = _scan(catalogue, [junk + " " + SHM + " " + junk + "\n"])
    d = s.diagnoses()[0]
    assert d.category == "dataloader_shm"
    assert all(len(e) <= 400 for e in d.evidence)
    # a 3 MB line with no line break at all is scanned in pieces
    s = _scan(catalogue, ["y" * (3 << 20), SHM, "z" * 1000])
    assert s.diagnoses()[0].category == "dataloader_shm"


def test_evidence_stays_bounded(catalogue) -> None:  # type: ignore[no-untyped-def]
    lines = [
        f"[rank{i}]:[E] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={i}, OpType=ALLREDUCE, "
        f"Timeout(ms)=600000) ran for 600020 milliseconds before timing out."
        for i in range(5000)
    ]
    d = _scan(catalogue, ["\n".join(lines) + "\n"]).diagnoses()[0]
    assert d.category == "nccl_distributed"
    assert len(d.evidence) <= 6
    assert d.evidence[0] == lines[0] and d.evidence[-1] == lines[-1]
    assert "5000 matching lines" in d.explanation


def _notebook(tmp_path: Path) -> Path:
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "source": ["import torch"],
                "outputs": [
                    {
                        "output_type": "stream",
                        "name": "stderr",
                        "text": [
                            "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA "
                            "initialization: The NVIDIA driver on your system is too old (found version 11000).\n"
                        ],
                    }
                ],
            },
            {
                "cell_type": "code",
                "source": ["x.cuda()"],
                "outputs": [
                    {
                        "output_type": "error",
                        "ename": "RuntimeError",
                        "evalue": "No CUDA GPUs are available",
                        "traceback": [
                            "\u001b[0;31m---------------------------------------------------------------------------\u001b[0m",
                            "\u001b[0;31mRuntimeError\u001b[0m                              Traceback (most recent call last)",
                            "\u001b[0;31mRuntimeError\u001b[0m: No CUDA GPUs are available",
                        ],
                    }
                ],
            },
        ],
    }
    p = tmp_path / "train.ipynb"
    p.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return p


def test_jupyter_notebook_error_outputs(tmp_path: Path, catalogue) -> None:  # type: ignore[no-untyped-def]
    p = _notebook(tmp_path)
    lines = notebook_lines(p.read_text(encoding="utf-8"))
    assert lines is not None
    assert "RuntimeError: No CUDA GPUs are available" in lines
    assert not any("\x1b" in ln for ln in lines)
    diags = _scan(catalogue, iter_log(str(p))).diagnoses()
    assert [d.category for d in diags][:2] == ["driver_too_old", "no_gpu_visible"]
    assert diags[0].facts["driver_cuda"] == "11.0"


def test_not_a_notebook() -> None:
    assert notebook_lines("plain text") is None
    assert notebook_lines('{"cells": [broken json') is None
    assert notebook_lines('{"not": "a notebook", "cells": 3}') is None


@pytest.mark.parametrize("bad", ["missing", "dir", "denied"])
def test_unreadable_input_is_a_one_line_error(tmp_path: Path, run, bad: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if bad == "missing":
        target = str(tmp_path / "nope.log")
    elif bad == "dir":
        target = str(tmp_path)
    else:
        p = tmp_path / "secret.log"
        p.write_text("x")
        p.chmod(0)
        target = str(p)

        real_open = os.open

        def denied(
            path: object, *a: object, **k: object
        ) -> int:  # root ignores permission bits: simulate the OS
            if path == target:
                raise PermissionError(13, "Permission denied")
            return real_open(path, *a, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", denied)
    r = run("explain", target)
    assert r.code == 2
    assert r.out == ""
    assert r.err.startswith("compat: error: cannot read log") and r.err.count("\n") == 1
