"""Reading RUN lines as /bin/sh would: operators, conditions, loops, variables, quotes."""

from __future__ import annotations

from compat.dockerfile.shell import run


def argvs(text: str, env: dict[str, str] | None = None) -> list[tuple[str, ...]]:
    return [c.argv for c in run(text, env or {})]


def test_and_or_with_length_test_picks_the_pin() -> None:
    text = (
        "[ ${#PYTORCH} -gt 0 ] && VERSION='torch=='$PYTORCH'.*' ||  VERSION='torch'; "
        "python3 -m pip install -U $VERSION --extra-index-url https://download.pytorch.org/whl/$CUDA"
    )
    assert argvs(text, {"PYTORCH": "2.6.0", "CUDA": "cu121"}) == [
        (
            "python3",
            "-m",
            "pip",
            "install",
            "-U",
            "torch==2.6.0.*",
            "--extra-index-url",
            "https://download.pytorch.org/whl/cu121",
        )
    ]
    assert argvs(text, {"PYTORCH": "", "CUDA": "cu121"})[0][5] == "torch"


def test_if_else_evaluates_known_conditions() -> None:
    text = 'if [ "$USE_GPU" = "true" ]; then pip install a; else pip install b; fi'
    assert argvs(text, {"USE_GPU": "true"}) == [("pip", "install", "a")]
    assert argvs(text, {"USE_GPU": "no"}) == [("pip", "install", "b")]
    # Unknown condition: every branch is followed (issue 16), each command labelled with its branch.
    cmds = run(
        'if test -f /x; then pip install a; elif [ -n "$Y" ]; then pip install c; else pip install b; fi', {}
    )
    assert [c.argv for c in cmds] == [
        ("pip", "install", "a"),
        ("pip", "install", "c"),
        ("pip", "install", "b"),
    ]
    assert [c.branch for c in cmds] == [
        "the then branch of `if test -f /x`",
        'the elif `[ -n "$Y" ]` branch of `if test -f /x`',
        "the else branch of `if test -f /x`",
    ]
    # A known condition labels nothing.
    assert [c.branch for c in run(text, {"USE_GPU": "true"})] == [None]


def test_case_matches_patterns() -> None:
    text = 'case ${TARGETPLATFORM} in "linux/arm64") pip install cpu ;; *) pip install gpu ;; esac'
    assert argvs(text, {"TARGETPLATFORM": "linux/amd64"}) == [("pip", "install", "gpu")]
    assert argvs(text, {"TARGETPLATFORM": "linux/arm64"}) == [("pip", "install", "cpu")]


def test_or_fallback_not_taken_after_success() -> None:
    assert argvs("pip install x || pip install y") == [("pip", "install", "x")]


def test_for_loop_and_cd_and_prefix_env() -> None:
    cmds = run('cd /src && for p in a b; do MAX_JOBS=2 pip install "$p"; done', {})
    assert [c.argv for c in cmds] == [("pip", "install", "a"), ("pip", "install", "b")]
    assert cmds[0].cwd == "/src" and cmds[0].env["MAX_JOBS"] == "2"


def test_redirections_comments_and_substitution() -> None:
    assert argvs("pip install x > /dev/null 2>&1 # note\necho 'a # b'") == [
        ("pip", "install", "x"),
        ("echo", "a # b"),
    ]
    out = argvs("pip install $(cat reqs)")
    assert out[0][:2] == ("pip", "install") and "\x00" in out[0][2]


def test_unbalanced_quote_does_not_crash() -> None:
    assert argvs("pip install 'torch") == [("pip", "install", "torch")]


def test_export_sets_variable() -> None:
    assert argvs("export V=2.1.0 && pip install torch==$V") == [("pip", "install", "torch==2.1.0")]
