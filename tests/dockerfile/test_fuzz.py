"""Fuzzing `compat dockerfile`: random bytes, random instructions, unterminated heredocs, unbalanced quotes,
`${` without `}`, self-referencing and self-doubling ARGs, missing stages, 10,000 stages, deep shell nesting
and version numbers too long for int(). Every input keeps the CLI contract (tests/fuzzing.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compat.dockerfile.expand import _apply_modifier, expand
from compat.dockerfile.shell import run as run_shell
from tests.fuzzing import FUZZ, LIMIT_S, check

KEYWORDS = (
    "FROM",
    "RUN",
    "ARG",
    "ENV",
    "COPY",
    "ADD",
    "WORKDIR",
    "LABEL",
    "CMD",
    "ENTRYPOINT",
    "USER",
    "SHELL",
    "ONBUILD",
    "HEALTHCHECK",
    "EXPOSE",
    "VOLUME",
    "STOPSIGNAL",
    "from",
    "RUNN",
    "#",
    "# escape=`",
)
FRAGMENTS = (
    "${",
    "}",
    "$",
    "${A:-",
    "${A#*",
    "${A%%.*}",
    ":-",
    "<<EOF",
    "<<-'X'",
    "EOF",
    "X",
    '"',
    "'",
    "\\",
    "`",
    "\n",
    " \\\n",
    "&&",
    "||",
    ";",
    "|",
    "(",
    ")",
    "{",
    "}",
    "if",
    "then",
    "fi",
    "for",
    "do",
    "done",
    "case",
    "esac",
    "!",
    "[",
    "]",
    "--from=",
    "--platform=",
    "AS",
    "s0",
    "s1",
    "A",
    "B",
    "=",
    "pip install",
    "torch",
    "==",
    "2.1.0",
    "+cu121",
    "tensorflow[and-cuda]",
    "conda install pytorch=",
    "apt-get install -y",
    "libcudnn8",
    "python3.11",
    "nvidia/cuda:12.1.0-devel-ubuntu22.04",
    "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime",
    "python:3.11",
    "ubuntu",
    "-r",
    "requirements.txt",
    "--index-url",
    "https://download.pytorch.org/whl/cu121",
    "TORCH_CUDA_ARCH_LIST=",
    "8.0;9.0+PTX",
    "9" * 50,
    "\t",
    "\r",
    "\u00e9",
    "\x00",
)


def _dockerfile(run, tmp_path: Path, text: str | bytes, *args: str, limit: float = LIMIT_S):  # type: ignore[no-untyped-def]
    p = tmp_path / "Dockerfile"
    if isinstance(text, str):
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
    else:
        p.write_bytes(text)
    res = check(
        run, "dockerfile", str(p), "--json", *args, limit=limit, what=f"dockerfile {p.read_bytes()[:80]!r}"
    )
    if res.code in (0, 1):
        assert json.loads(res.out)["schema_version"] == 1
    return res


# ------------------------------------------------------------------ random input


@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes(run, tmp_path: Path, data: bytes) -> None:  # type: ignore[no-untyped-def]
    _dockerfile(run, tmp_path, data)


@FUZZ
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(KEYWORDS),
            st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=12),
        ),
        min_size=1,
        max_size=15,
    ),
    first=st.sampled_from(
        [
            "FROM ubuntu:22.04\n",
            "ARG BASE=nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM $BASE\n",
            "FROM python:3.11 AS s0\n",
            "",
        ]
    ),
)
def test_random_instructions(run, tmp_path: Path, lines: list[tuple[str, list[str]]], first: str) -> None:  # type: ignore[no-untyped-def]
    text = first + "".join(f"{kw} {' '.join(words)}\n" for kw, words in lines)
    _dockerfile(run, tmp_path, text)


@FUZZ
@given(
    req=st.lists(
        st.one_of(
            st.sampled_from(
                FRAGMENTS
                + (
                    "-r requirements.txt",
                    "--extra-index-url",
                    "-c x",
                    "torch==2.1.0",
                    "tensorflow==2.15.0",
                    "#",
                    ";",
                )
            ),
            st.text(max_size=12),
        ),
        max_size=20,
    ).map(" ".join),
    build_arg=st.text(alphabet="${}:-#%ab'\"\\ 9.", max_size=20),
)
def test_random_requirements_files_and_build_args(run, tmp_path: Path, req: str, build_arg: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text(
        req + "\n" + req.replace(" ", "\n"), encoding="utf-8", errors="surrogatepass"
    )
    text = (
        "ARG V\nFROM python:3.11\nCOPY requirements.txt /app/\nWORKDIR /app\n"
        "RUN pip install -r requirements.txt torch==$V\n"
    )
    _dockerfile(run, tmp_path, text, "--build-arg", f"V={build_arg}")


@FUZZ
@given(
    value=st.text(alphabet="ab.-*?", max_size=30),
    word=st.text(alphabet="ab.-*?", max_size=12),
    op=st.sampled_from(["#", "##", "%", "%%", ":-", "-", ":+", "+", "?", ":?"]),
)
def test_every_substitution_form_terminates(value: str, word: str, op: str) -> None:
    t = time.perf_counter()
    out = _apply_modifier("V", value, op, word)
    assert time.perf_counter() - t < 0.5
    if op in ("#", "##"):
        assert value.endswith(out)
    if op in ("%", "%%"):
        assert value.startswith(out)


@FUZZ
@given(text=st.text(alphabet="$ {}:-#%ab'\"\\()`;&|", max_size=200))
def test_shell_walker_on_random_text(text: str) -> None:
    t = time.perf_counter()
    run_shell(text, {"a": "x", "b": ""})
    expand(text, {"a": "x"}, quotes=True)
    assert time.perf_counter() - t < 1.0


# ------------------------------------------------------------------ malformed, but read as Docker would


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('FROM ubuntu\nRUN pip install "torch==2.1.0\n', id="unbalanced-double-quote"),
        pytest.param("FROM ubuntu\nRUN pip install 'torch==2.1.0 \"\n", id="unbalanced-single-quote"),
        pytest.param("FROM ubuntu\nRUN echo ${" * 20_000, id="dollar-brace-without-close"),
        pytest.param("FROM ubuntu:${" * 20_000, id="dollar-brace-in-from"),
        pytest.param(
            "ARG A=$B\nARG B=$A\nFROM ubuntu:$A\nARG A\nRUN echo $A ${A:-$B}\n", id="recursive-args"
        ),
        pytest.param("ARG A=${A}${A}\nFROM ubuntu:$A\n", id="self-referencing-arg"),
        pytest.param(
            "FROM nonexistent-stage AS a\nFROM a\nCOPY --from=zzz / /\nCOPY --from=7 / /\n",
            id="missing-stages",
        ),
        pytest.param("FROM a AS a\nFROM b AS b\n", id="stage-from-itself"),
        pytest.param("FROM ubuntu\nRUN " + "<<E " * 5000 + "\n" + "E\n" * 5000, id="5000-heredocs"),
        pytest.param("FROM ubuntu\nRUN " + "a" * 1_000_000, id="1MB-line"),
        pytest.param("FROM ubuntu\nRUN pip install " + "torch " * 200_000, id="1MB-of-one-requirement"),
        pytest.param(
            "FROM ubuntu\nRUN pip install \\\n" + "  x \\\n" * 100_000 + "  torch\n", id="100k-continuations"
        ),
        pytest.param("FROM ubuntu\nRUN " + "\\" * 100_001 + "\n", id="backslashes"),
        pytest.param("FROM ubuntu\nRUN echo $(" * 10_000, id="command-substitution-unclosed"),
        pytest.param("FROM ubuntu\nRUN case x in " + "(" * 10_000, id="case-unclosed"),
        pytest.param("FROM ubuntu\nRUN " + "a | " * 50_000 + "b", id="50k-pipes"),
        pytest.param("FROM ubuntu\rRUN pip install torch\r", id="bare-cr"),
        pytest.param("FROM\u3000ubuntu\nRUN\u00a0pip install torch\u2028\n", id="unicode-spaces"),
        pytest.param("FROM ubuntu\nRUN echo \udcff\n", id="lone-surrogate"),
        pytest.param(
            "FROM --platform=" + '"' * 30 + "'" * 30 + " ubuntu\nCOPY --from=" + '"a' * 20_000 + "\n",
            id="flag-quotes",
        ),
        pytest.param("FROM nvidia/cuda@sha256:" + "a" * 100_000 + "\n", id="long-digest"),
        pytest.param("FROM nvidia/cuda:" + ":" * 10_000 + "\n", id="colons"),
        pytest.param(
            'FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="'
            + "8.0;" * 100_000
            + '"\n',
            id="100k-archs",
        ),
        pytest.param(
            'FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="99999.0 1e9 -1.0 abc +PTX"\n',
            id="odd-archs",
        ),
        pytest.param(
            "FROM ubuntu\nCOPY Dockerfile /r.txt\nRUN pip install -r /r.txt -r /r.txt\n",
            id="dockerfile-as-requirements",
        ),
    ],
)
def test_odd_dockerfiles_get_findings(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    res = _dockerfile(run, tmp_path, text)
    assert res.code in (0, 1), res.err


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("FROM ubuntu\nRUN <<EOF\npip install torch\n", id="unterminated-heredoc"),
        pytest.param(
            "FROM ubuntu\nRUN " + "<<E " * 5000 + "\n" + "x\n" * 5000, id="5000-unterminated-heredocs"
        ),
        pytest.param("# escape=x\nFROM ubuntu\n", id="bad-escape-directive"),
        pytest.param("ARG A\nARG B\n", id="no-from"),
        pytest.param("FROM\n", id="from-without-image"),
        pytest.param("FROM --platform=linux/amd64\n", id="from-only-flags"),
        pytest.param("RUN pip install torch\n", id="run-before-from"),
        pytest.param("\x00FROM ubuntu\n", id="binary"),
        pytest.param("   \n\n\t\n", id="blank"),
    ],
)
def test_not_a_dockerfile_is_one_line(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    res = _dockerfile(run, tmp_path, text)
    assert res.code == 2


def test_ten_thousand_stages(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Linear (about 2 s here, mostly the 10,000-stage JSON report); quadratic would take minutes.
    text = "".join(f"FROM python:3.11 AS s{i}\nRUN pip install torch==2.1.0\n" for i in range(10_000))
    _dockerfile(run, tmp_path, text, limit=3 * LIMIT_S)
    chain = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04 AS s0\n" + "".join(
        f"FROM s{i} AS s{i + 1}\n" for i in range(10_000)
    )
    _dockerfile(run, tmp_path, chain, limit=3 * LIMIT_S)


# ------------------------------------------------------------------ regressions


def test_nested_default_values_do_not_recurse_without_end(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # RecursionError (exit 3) before nesting was bounded.
    deep = "${A:-" * 5000 + "12.1.0-devel-ubuntu22.04" + "}" * 5000
    _dockerfile(run, tmp_path, f"FROM nvidia/cuda:{deep}\nRUN echo {deep}\n")
    shallow = "${A:-" * 3 + "12.1.0-devel-ubuntu22.04" + "}" * 3
    assert expand(shallow, {})[0] == "12.1.0-devel-ubuntu22.04"


@pytest.mark.parametrize("op", ["#", "##", "%", "%%"])
def test_glob_patterns_do_not_backtrack(run, tmp_path: Path, op: str) -> None:  # type: ignore[no-untyped-def]
    # 15 to 55 s each with the `.*` regexes: `*a*a*...b` against 40 a's backtracks polynomially.
    text = f"ARG X={'a' * 40}\nFROM ubuntu:${{X{op}*a*a*a*a*a*a*a*a*a*a*b}}\n"
    _dockerfile(run, tmp_path, text)
    assert _apply_modifier("X", "a" * 40, op, "*a*a*a*a*a*a*a*a*a*a*b") == "a" * 40
    assert _apply_modifier("X", "a" * 200_000, op, "*b") == "a" * 200_000


def test_glob_patterns_keep_their_meaning() -> None:
    v = "12.4.1-cudnn"
    got = {
        op: _apply_modifier("V", v, op, w) for op, w in (("#", "*."), ("##", "*."), ("%", ".*"), ("%%", ".*"))
    }
    assert got == {"#": "4.1-cudnn", "##": "1-cudnn", "%": "12.4", "%%": "12"}
    assert _apply_modifier("V", "cu121", "#", "cu") == "121"
    assert _apply_modifier("V", "abc", "%", "?") == "ab"
    assert _apply_modifier("V", "abc", "#", "x") == "abc"


@pytest.mark.parametrize("var", ["ARG", "ENV"])
def test_self_doubling_variables_are_refused(run, tmp_path: Path, var: str) -> None:  # type: ignore[no-untyped-def]
    # 2**40 characters: the process was killed for memory.
    chain = "".join(f"{var} A{i + 1}=${{A{i}}}${{A{i}}}\n" for i in range(40))
    res = _dockerfile(run, tmp_path, f"FROM ubuntu\n{var} A0=xx\n{chain}RUN pip install torch==$A40\n")
    assert res.code == 2 and "grows past" in res.err and "line 2" in res.err
    shell = "FROM ubuntu\nRUN X=ab; " + "X=$X$X; " * 40 + "pip install torch==$X\n"
    res = _dockerfile(run, tmp_path, shell)
    assert res.code == 2 and "grows past" in res.err


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("if true; then " * 3000 + "pip install torch; " + "fi; " * 3000, id="if"),
        pytest.param("if true; then " * 3000, id="if-unclosed"),
        pytest.param("for a in b; do " * 3000 + "pip install torch; " + "done; " * 3000, id="for"),
        pytest.param("(" * 5000 + "pip install torch" + ")" * 5000, id="subshell"),
        pytest.param("{ " * 5000 + "pip install torch; " + "} " * 5000, id="group"),
        pytest.param("! " * 5000 + "pip install torch", id="bang"),
        pytest.param("test " + "! " * 10_000 + "-z x && pip install torch", id="test-bang"),
    ],
)
def test_deep_shell_nesting(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    # RecursionError (exit 3) before nesting was bounded.
    res = _dockerfile(run, tmp_path, f"FROM ubuntu\nRUN {text}\n")
    assert res.code in (0, 1)


def test_shallow_shell_nesting_is_still_read() -> None:
    text = "if true; then " * 20 + "pip install torch==2.1.0; " + "fi; " * 20
    assert [c.argv for c in run_shell(text, {})] == [("pip", "install", "torch==2.1.0")]
    assert [c.argv for c in run_shell("[ ! ! -n x ] && pip install a", {})] == [("pip", "install", "a")]
    assert [c.argv for c in run_shell("[ ! -n x ] && pip install a", {})] == []


BIG = "9" * 5000
"""int() refuses strings of over 4300 digits: packaging's Version raised ValueError, not InvalidVersion (exit 3)."""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"FROM python:3.11\nRUN pip install torch=={BIG}\n", id="pip-pin"),
        pytest.param(f"FROM python:3.11\nRUN pip install torch==1.{BIG}\n", id="pip-pin-minor"),
        pytest.param(
            f"FROM python:3.11\nRUN pip install 'torch>={BIG}' 'tensorflow<={BIG}'\n", id="pip-range"
        ),
        pytest.param(
            "FROM python:3.11\nRUN pip install 'torch===x' 'torch>=2.0,<1.0' 'torch==' torch==2.1.0+cu999\n",
            id="pip-odd",
        ),
        pytest.param(
            f"FROM python:3.11\nRUN pip install https://x/torch-{BIG}-cp311-cp311-linux_x86_64.whl\n",
            id="wheel",
        ),
        pytest.param(
            f"FROM continuumio/miniconda3\nRUN conda install pytorch={BIG} pytorch-cuda={BIG}.1 python=3.{BIG}\n",
            id="conda",
        ),
        pytest.param(
            f"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN apt-get install -y libcudnn8={BIG}.1 libcudnn{BIG} "
            f"cuda-toolkit-{BIG}-1\n",
            id="apt",
        ),
        pytest.param(f"FROM nvidia/cuda:{BIG}.0-cudnn{BIG}-devel-ubuntu22.04\n", id="cuda-tag"),
        pytest.param(f"FROM pytorch/pytorch:{BIG}.1-cuda12.1-cudnn{BIG}-runtime\n", id="pytorch-tag"),
        pytest.param(f"FROM tensorflow/tensorflow:{BIG}.0-gpu\n", id="tensorflow-tag"),
        pytest.param(f"FROM python:3.{BIG}\n", id="python-tag"),
        pytest.param(f"FROM nvcr.io/nvidia/pytorch:{BIG}-py3\n", id="ngc-tag"),
        pytest.param(
            f'FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="{BIG}.0 8.{BIG}"\n',
            id="arch-list",
        ),
    ],
)
def test_versions_too_long_for_int(run, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    res = _dockerfile(run, tmp_path, text)
    assert res.code in (0, 1)


def test_long_versions_in_flags_are_one_line(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for args in (("--target-driver", BIG), ("--target-cc", BIG), ("--target-gpu", BIG)):
        res = _dockerfile(run, tmp_path, "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n", *args)
        assert res.code == 2
