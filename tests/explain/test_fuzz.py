"""Fuzzing `compat explain`: random bytes and text, megabyte lines, notebooks nested too deep, and log lines
built to make the signature regexes backtrack. Every input keeps the CLI contract (tests/fuzzing.py)."""

from __future__ import annotations

import io
import json
import os
import re
import time
from functools import lru_cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from compat.explain.engine import MAX_LINE, Scanner
from compat.explain.signature import Catalogue
from tests.explain.helpers import SIGNATURES
from tests.fuzzing import FUZZ, check

LINE_LIMIT_S = 0.5
"""Per 4 KB line and signature regex; a linear search takes microseconds, the cubic one this file caught took 8 s."""


@lru_cache(maxsize=1)
def _examples() -> dict[str, list[str]]:
    doc = yaml.safe_load(SIGNATURES.read_text(encoding="utf-8"))
    out = {row["id"]: list(row["examples"]) for row in doc["signatures"] + doc.get("extractors", [])}
    out.update({row["id"]: list(row["examples"]) for row in doc.get("deaths", [])})
    # error_codes.yaml rows (issue 14) carry no example: the line a framework prints with the code stands in
    codes = yaml.safe_load((SIGNATURES.parent / "error_codes.yaml").read_text(encoding="utf-8"))
    for row in codes["codes"]:
        rid = f"code-{row['enum'].replace('::', '-').lower()}-{row['name'].lower()}"
        line = f"RuntimeError: CUDA error: {row['name']} when calling `cudaFoo(x)`"
        if row["enum"] == "absl::StatusCode":
            line = f"jaxlib.xla_extension.XlaRuntimeError: {row['name']}: failed"
        out[rid] = [line]
    return out


def _all_examples() -> list[str]:
    return [e for exs in _examples().values() for e in exs]


def _explain(run, tmp_path: Path, data: bytes, name: str = "x.log"):  # type: ignore[no-untyped-def]
    p = tmp_path / name
    p.write_bytes(data)
    res = check(run, "explain", str(p), "--json", what=f"explain {data[:60]!r}")
    if res.code == 0:
        assert json.loads(res.out)["schema_version"] == 1
    return res


# ------------------------------------------------------------------ random input


@FUZZ
@given(data=st.binary(max_size=4096))
def test_random_bytes(run, tmp_path: Path, data: bytes) -> None:  # type: ignore[no-untyped-def]
    _explain(run, tmp_path, data)


@FUZZ
@given(
    lines=st.lists(st.one_of(st.text(max_size=200), st.sampled_from(_all_examples())), max_size=30),
    sep=st.sampled_from(["\n", "\r\n", "\r", "\x1b[0m\n"]),
)
def test_random_text_with_real_error_lines(run, tmp_path: Path, lines: list[str], sep: str) -> None:  # type: ignore[no-untyped-def]
    _explain(run, tmp_path, sep.join(lines).encode("utf-8", "surrogatepass"))


@FUZZ
@given(
    cells=st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30)),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
        max_leaves=40,
    )
)
def test_random_notebooks(run, tmp_path: Path, cells: object) -> None:  # type: ignore[no-untyped-def]
    doc = {
        "nbformat": 4,
        "cells": [{"outputs": [{"output_type": "error", "traceback": cells, "ename": cells}]}],
    }
    _explain(run, tmp_path, json.dumps(doc).encode(), "x.ipynb")


@FUZZ
@given(data=st.binary(max_size=4096))
def test_random_bytes_on_stdin(run, monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data + b"\nCUDA error: out of memory\n")))
    res = check(run, "explain", "-", "--json", what=f"explain - {data[:60]!r}")
    assert res.code == 0 and json.loads(res.out)["diagnoses"][0]["category"] == "gpu_oom"


def test_one_megabyte_line_without_newline(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    chunk = (
        "CUDA out of memory. Tried to allocate 2.00 GiB " + "x" * 1000 + " cannot open shared object file "
    )
    text = (chunk * (1_000_000 // len(chunk) + 1))[:1_000_000]
    res = _explain(run, tmp_path, text.encode())
    assert res.code == 0 and json.loads(res.out)["diagnoses"][0]["category"] == "gpu_oom"


def test_binary_and_empty_files(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for data in (
        b"",
        b"\x00" * 100_000,
        bytes(range(256)) * 4000,
        b"\xff\xfe" + "é".encode("utf-16-le") * 1000,
    ):
        _explain(run, tmp_path, data)


def test_unreadable_paths_are_one_line_errors(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for path in (tmp_path / "missing.log", tmp_path):
        res = check(run, "explain", str(path))
        assert res.code == 2


# ------------------------------------------------------------------ regex backtracking


def _runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each maximal run of one character class (letters, digits, space, other)."""

    def cls(c: str) -> int:
        return 0 if c.isalpha() else 1 if c.isdigit() else 2 if c.isspace() else 3 + ord(c)

    out, start = [], 0
    for i in range(1, len(text) + 1):
        if i == len(text) or cls(text[i]) != cls(text[start]):
            out.append((start, i))
            start = i
    return out


def pumped(example: str, length: int = MAX_LINE) -> list[str]:
    """Lines of about `length` characters that repeat one piece of a real error line (one run of a character
    class, or two neighbouring runs) in place, then end with the rest of the line, without its last
    character, or with '!': the classic inputs that make nested or adjacent quantifiers backtrack."""
    runs = _runs(example)
    pieces = {(runs[i][0], runs[j][1]) for i in range(len(runs)) for j in (i, i + 1) if j < len(runs)}
    out = []
    for a, b in sorted(pieces):
        frag = example[a:b]
        times = max(1, (length - len(example)) // len(frag))
        for tail in (example[b:], example[b:-1], "!"):
            out.append(example[:a] + frag * times + tail)
    return out


def test_no_signature_regex_backtracks_on_pumped_lines(catalogue: Catalogue) -> None:
    slow = []
    worst = 0.0
    for sig in catalogue.all_rows:
        for example in _examples()[sig.id]:
            for line in pumped(example):
                t = time.perf_counter()
                sig.regex.search(line)
                took = time.perf_counter() - t
                worst = max(worst, took)
                if took > LINE_LIMIT_S:
                    slow.append(f"{sig.id}: {took:.2f} s on {line[:80]!r}...")
    assert not slow, "\n".join(slow)


def test_a_megabyte_of_pumped_lines_through_the_cli(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = []
    for exs in _examples().values():
        for example in exs[:1]:
            lines.extend(pumped(example, 1000)[::7])
    body = "\n".join(lines)
    data = (body * (1_000_000 // len(body) + 1))[:1_000_000]
    _explain(run, tmp_path, data.encode())


# Regressions: each line took seconds with the pattern as it was (the first 3.6 s: cubic; the others grow with the
# square of the length: 4 s at 16,000 characters); with the rewritten patterns each takes milliseconds.
BACKTRACKING = {
    "shared-object-not-found": "libcuda" * 580 + " cannot open shared object file",
    "shared-object-not-found/lib": "lib" * 5000 + " cannot open shared object file",
    "torch-sm-not-compatible": "NVIDIA GeForce RTX 5090 with CUDA capability sm_" + "12" * 8000 + "!",
    "nvcc-unsupported-arch": "nvcc fatal   : Unsupported gpu architecture 'compute_" + "12" * 8000 + "!",
    "exit-code-137": "Process exited" + " " * 16000 + "with code 1370 137x",
}


@pytest.mark.parametrize("sig_id", sorted(BACKTRACKING))
def test_backtracking_regressions(catalogue: Catalogue, sig_id: str) -> None:
    sig = next(s for s in catalogue.all_rows if s.id == sig_id.split("/")[0])
    line = BACKTRACKING[sig_id]
    t = time.perf_counter()
    sig.regex.search(line)
    assert time.perf_counter() - t < LINE_LIMIT_S, sig_id
    s = Scanner(catalogue)
    t = time.perf_counter()
    s.feed_block((line + "\n") * 50, final=True)
    assert time.perf_counter() - t < 2.0, sig_id


def test_rewritten_patterns_still_capture_the_same_facts(catalogue: Catalogue) -> None:
    rows = {s.id: s for s in catalogue.all_rows}
    lib = rows["shared-object-not-found"].regex
    m = lib.search("OSError: /usr/lib/x86_64-linux-gnu/libcudart.so.11.0: cannot open shared object file: x")
    assert m is not None and m.group("library") == "lib/x86_64-linux-gnu/libcudart.so.11.0"
    assert lib.search("libnccl-net.so: cannot open shared object file") is None
    assert lib.search("libfoo.so: cannot open shared object file") is None
    sm = rows["torch-sm-not-compatible"].regex.search(
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120a is not compatible with the current PyTorch installation."
    )
    assert sm is not None and sm.group("arch") == "sm_120" and sm.group("gpu") == "NVIDIA GeForce RTX 5090"
    nv = rows["nvcc-unsupported-arch"].regex.search(
        "nvcc fatal   : Unsupported gpu architecture 'compute_120a'"
    )
    assert nv is not None and nv.group("arch") == "compute_120a"
    ex = rows["exit-code-137"].regex
    assert [
        bool(ex.search(t)) for t in ("exit code: 137", "exitcode 137", "exit code 1370", "Exit Code=  137")
    ] == [True, True, False, True]


# ------------------------------------------------------------------ notebooks and names


def test_notebook_nested_too_deep_is_read_as_text(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # json.loads raised RecursionError (exit 3) on this.
    deep = (
        '{"nbformat": 4, "cells": ' + "[" * 100_000 + "]" * 100_000 + "}\nRuntimeError: CUDA out of memory.\n"
    )
    res = _explain(run, tmp_path, deep.encode(), "deep.ipynb")
    assert json.loads(res.out)["diagnoses"][0]["category"] == "gpu_oom"
    # Parsed, but a traceback frame nested 900 deep made str() recurse.
    frame = json.loads("[" * 900 + '"x"' + "]" * 900)
    doc = {"nbformat": 4, "cells": [{"outputs": [{"output_type": "error", "traceback": [frame]}]}]}
    _explain(run, tmp_path, json.dumps(doc).encode(), "deep2.ipynb")


def test_unterminated_osc_sequence_does_not_hide_the_rest(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # `ESC ]` (a terminal title or hyperlink) cut before its BEL swallowed every later line of the block.
    for junk in (b"\x1b]", b"\x1b]0;title", b"\x1b]8;;http://x"):
        res = _explain(run, tmp_path, junk + b"\nRuntimeError: CUDA error: out of memory\n")
        assert [d["category"] for d in json.loads(res.out)["diagnoses"]] == ["gpu_oom"], junk
    res = _explain(run, tmp_path, b"\x1b]0;title\x07RuntimeError: CUDA error: out of memory\n")
    assert json.loads(res.out)["diagnoses"][0]["evidence"] == ["RuntimeError: CUDA error: out of memory"]


def test_file_name_that_is_not_utf8(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The name is printed in the text report; stdout refused the surrogate escape of byte 0xfe (exit 3).
    path = os.path.join(os.fsdecode(bytes(tmp_path)), os.fsdecode(b"crash-\xfe.log"))
    Path(path).write_text("RuntimeError: CUDA out of memory.\n", encoding="utf-8")
    res = check(run, "explain", path)
    assert res.code == 0 and "crash-\\udcfe.log" in res.out


def test_signature_examples_match_their_own_pattern(catalogue: Catalogue) -> None:
    """The pump test above is only as good as its examples: each must match (the validator also checks)."""
    for sig in catalogue.all_rows:
        for example in _examples()[sig.id]:
            assert sig.regex.search(example), (sig.id, example)
            assert re.search(sig.regex.pattern, example, re.IGNORECASE)
