"""The Dockerfile parser: directives, continuations, comments, heredocs, variable substitution."""

from __future__ import annotations

import pytest

from compat.dockerfile.expand import expand, strip_unset
from compat.dockerfile.parser import UNSET, key_values, parse, split_flags, words
from compat.errors import InputError


def test_continuations_join_and_keep_line_numbers() -> None:
    df = parse(
        "FROM ubuntu:22.04\nRUN apt-get update && \\\n    # a comment inside\n    apt-get install -y python3\n"
    )
    run = df.instructions[1]
    assert run.keyword == "RUN"
    assert (run.line, run.end_line) == (2, 4)
    assert "apt-get install -y python3" in run.args and "comment" not in run.args
    assert run.line_at(run.args.index("apt-get install")) == 4


def test_escape_directive_backtick() -> None:
    df = parse("# escape=`\nFROM ubuntu:22.04\nRUN pip install `\n    torch==2.1.0\n")
    assert df.escape == "`" and df.directives["escape"] == "`"
    assert df.instructions[1].args.split() == ["pip", "install", "torch==2.1.0"]


def test_directive_only_at_top() -> None:
    df = parse("FROM a\n# escape=`\nRUN echo \\\n  hi\n")
    assert df.escape == "\\" and "escape" not in df.directives
    assert df.instructions[1].args.split() == ["echo", "hi"]


def test_bad_escape_directive() -> None:
    with pytest.raises(InputError, match="escape"):
        parse("# escape=x\nFROM a\n")


def test_heredoc_body_is_not_instructions() -> None:
    df = parse("FROM a\nRUN <<EOF\npip install torch==2.1.0\nEOF\nRUN echo done\n")
    assert [i.keyword for i in df.instructions] == ["FROM", "RUN", "RUN"]
    h = df.instructions[1].heredocs[0]
    assert h.body == "pip install torch==2.1.0" and h.line == 3 and h.expand


def test_heredoc_tab_strip_and_quoted() -> None:
    df = parse("FROM a\nRUN <<-'END' python3\n\tprint(1)\n\tEND\n")
    h = df.instructions[1].heredocs[0]
    assert h.body == "print(1)" and not h.expand


def test_unclosed_heredoc_is_an_input_error() -> None:
    with pytest.raises(InputError, match="never closed"):
        parse("FROM a\nRUN <<EOF\npip install x\n")


def test_here_string_is_not_a_heredoc() -> None:
    df = parse("FROM a\nRUN cat <<<hello\nRUN echo\n")
    assert df.instructions[1].heredocs == () and len(df.instructions) == 3


def test_binary_is_rejected() -> None:
    with pytest.raises(InputError, match="not a text file"):
        parse("FROM a\x00\n")


@pytest.mark.parametrize(
    ("text", "env", "want", "unset"),
    [
        ("${A:-x}", {}, "x", set()),
        ("${A:-x}", {"A": ""}, "x", set()),
        ("${A-x}", {"A": ""}, "", set()),
        ("${A:+y}", {"A": "1"}, "y", set()),
        ("${A:+y}", {}, "", set()),
        ("$A/${B}", {"A": "a", "B": "b"}, "a/b", set()),
        ("${V#v}", {"V": "v1.2"}, "1.2", set()),
        ("${V%.*}", {"V": "1.2.3"}, "1.2", set()),
        ("${V%%.*}", {"V": "1.2.3"}, "1", set()),
        ("x${MISSING}y", {}, "xy", {"MISSING"}),
    ],
)
def test_expand(text: str, env: dict[str, str], want: str, unset: set[str]) -> None:
    out, missing = expand(text, env)
    assert strip_unset(out) == want
    assert missing == unset


def test_expand_quotes_mode_keeps_single_quotes_literal() -> None:
    out, _ = expand("'$A' \"$A\" \\$A", {"A": "x"}, quotes=True)
    assert words(out) == ["$A", "x", "$A"]


def test_unset_marker() -> None:
    out, _ = expand("torch==${TV}", {})
    assert UNSET in out


def test_key_values_forms() -> None:
    assert key_values('PATH="/opt/conda/bin:$PATH" A=1 B') == [
        ("PATH", "/opt/conda/bin:$PATH"),
        ("A", "1"),
        ("B", None),
    ]
    assert key_values("CUDA_HOME /usr/local/cuda") == [("CUDA_HOME", "/usr/local/cuda")]
    assert key_values("NAME") == [("NAME", None)]


def test_split_flags() -> None:
    flags, rest = split_flags("--platform=$BUILDPLATFORM --from=build /a /b")
    assert flags == {"platform": "$BUILDPLATFORM", "from": "build"} and rest == "/a /b"
