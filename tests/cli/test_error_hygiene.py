"""Errors about a file name the file and the problem, never its bytes; errors echo a user's value clipped; special
files say what they are (issue 32, items 1, 5, 18 and 19)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SECRET = "ghp_0123456789abcdefSECRET"
CREDENTIALS = f"https://alice:{SECRET}@github.com\n"
SHADOW = f"root:$6${SECRET}$Xy:20228:0:99999:7:::\n"


def _one_line_without_secret(r) -> None:  # type: ignore[no-untyped-def]
    assert r.code == 2, r
    assert r.err.startswith("compat: error: ") and r.err.count("\n") == 1, r.err
    assert SECRET not in r.err and SECRET not in r.out and "alice" not in r.err, r.err


@pytest.mark.parametrize("content", [CREDENTIALS, SHADOW, f"{SECRET} FROM x\n"])
def test_not_a_dockerfile_names_the_file_not_its_line(tmp_path: Path, run, content: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "notes"
    p.write_text(content)
    r = run("dockerfile", str(p))
    _one_line_without_secret(r)
    assert "is not a Dockerfile: line 1 is not a Dockerfile instruction" in r.err
    assert str(p) in r.err


def test_a_known_first_instruction_is_named(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "Dockerfile"
    p.write_text(f"RUN echo {SECRET}\nFROM x\n")
    r = run("dockerfile", str(p))
    _one_line_without_secret(r)
    assert "line 1 is a RUN instruction (expected FROM)" in r.err


@pytest.mark.parametrize("command", ["compose", "k8s"])
@pytest.mark.parametrize(
    "content", [f"a: *{SECRET}\n", f"services:\n  a: !{SECRET} [\n", f'services: "{SECRET}\n  x: [\n']
)
def test_yaml_errors_do_not_quote_the_file(tmp_path: Path, run, command: str, content: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "file.yaml"
    p.write_text(content)
    r = run(command, str(p))
    _one_line_without_secret(r)
    assert str(p) in r.err


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--snapshot"],
        ["explain", "--snapshot"],
        ["fleet", "merge"],
        ["report", "--no-run", "--snapshot"],
    ],
)
@pytest.mark.parametrize("field", ["schema_version", "nested"])
def test_json_errors_do_not_quote_the_file(tmp_path: Path, run, argv: list[str], field: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "config.json"
    doc = {"schema_version": SECRET} if field == "schema_version" else {"auths": {"r": {"auth": SECRET}}}
    p.write_text(json.dumps(doc))
    if argv[0] == "explain":
        log = tmp_path / "log"
        log.write_text("x\n")
        argv = [*argv, str(p), str(log)]
    else:
        argv = [*argv, str(p)]
    r = run(*argv)
    _one_line_without_secret(r)


# ------------------------------------------------------------------ kernel files and devices (item 5)


@pytest.mark.parametrize(
    "path", ["/proc/self/pagemap", "/proc/self/status", "/sys/kernel/mm/transparent_hugepage"]
)
@pytest.mark.parametrize(
    "command", ["explain", "dockerfile", "compose", "k8s", "fleet merge", "check --snapshot"]
)
def test_kernel_files_are_refused_in_one_line(run, path: str, command: str) -> None:  # type: ignore[no-untyped-def]
    if path.startswith("/sys") and not os.path.isdir(path):
        pytest.skip("no sysfs here")
    target = path if path.startswith("/proc") else path + "/enabled"
    if not os.path.exists(target):
        pytest.skip(f"no {target} here")
    r = run(*command.split(), target)
    assert r.code == 2, r
    assert r.err.count("\n") == 1 and "kernel file" in r.err, r.err


def test_a_character_device_is_named(run) -> None:  # type: ignore[no-untyped-def]
    r = run("explain", "/dev/zero")
    assert r.code == 2
    assert "is a character device, not a regular file" in r.err


# ------------------------------------------------------------------ values echoed in errors (item 18)

BIG = "7" * 100_000
ECHOING = [
    ["check", "--driver", BIG],
    ["check", "--gpu", BIG],
    ["check", "--cc", BIG],
    ["check", "--cuda", BIG],
    ["check", "--torch", BIG],
    ["check", "--tensorflow", BIG],
    ["check", "--python", BIG],
    ["check", "--os", BIG],
    ["check", "--target-driver", BIG],
    ["check", "--driver", "550.54.15", "--format", BIG],
    ["check", "--driver", "550.54.15", "--fail-on", BIG],
    ["check", "--driver", "550.54.15", "--matrix", BIG],
    ["suggest", "--no-probe", "--gpu", BIG],
    ["doctor", "--no-smoke", "--python", BIG],
    ["doctor", "--no-smoke", "--save-snapshot", BIG],
    ["explain", "--last", BIG],
    ["dockerfile", "Dockerfile", "--target-gpu", BIG],
    ["dockerfile", "Dockerfile", "--target-cc", BIG],
    ["dockerfile", "Dockerfile", "--build-arg", BIG],
    ["dockerfile", "Dockerfile", "--context", BIG],
    ["dockerfile", BIG],
    ["compose", "compose.yaml", "--target-driver", BIG],
    ["k8s", "pod.yaml", "--target-gpu", BIG],
    ["smoke", "--python", BIG],
    ["check", "--gpu", "RTX " * 25_000],
]


@pytest.mark.parametrize("argv", ECHOING, ids=lambda a: " ".join(x if len(x) < 30 else "<100 KB>" for x in a))
def test_a_long_value_is_clipped_in_the_error(tmp_path: Path, run, monkeypatch, argv: list[str]) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    (tmp_path / "compose.yaml").write_text("services:\n  a:\n    image: x\n")
    (tmp_path / "pod.yaml").write_text("kind: Pod\nspec: {containers: [{name: a, image: x}]}\n")
    r = run(*argv)
    assert r.code == 2, (r.code, r.err[:300])
    assert r.err.startswith("compat: error: ") and r.err.count("\n") == 1
    assert 40 < len(r.err) <= 2100, len(r.err)


def test_bounded_keeps_short_messages_and_the_end_of_long_ones() -> None:
    from compat._text import bounded

    assert bounded("malformed driver version 'x'") == "malformed driver version 'x'"
    long = f"malformed driver version {'7' * 5000!r} (expected e.g. 535.104.05)"
    out = bounded(long)
    assert out.startswith("malformed driver version '777") and out.endswith("(expected e.g. 535.104.05)")
    assert len(out) < 260
    spaced = "unknown GPU '" + "RTX " * 5000 + "' (or give --cc)"
    assert bounded(spaced).endswith("(or give --cc)") and len(bounded(spaced)) <= 2000


# ------------------------------------------------------------------ special files in a build context (item 19)


def _notes(r) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    doc = json.loads(r.out)
    return [*doc.get("findings", []), *doc.get("skipped", [])]


def test_special_requirements_in_the_context_say_what_they_are(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    os.mkfifo(ctx / "fifo.txt")
    (ctx / "zero.txt").symlink_to("/dev/zero")
    secret = tmp_path / "outside.txt"
    secret.write_text(f"torch=={SECRET}\n")
    (ctx / "out.txt").symlink_to(secret)
    lines = ["FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04"]
    for name in ("fifo.txt", "zero.txt", "out.txt"):
        lines += [f"COPY {name} /{name}", f"RUN pip install -r /{name}"]
    (ctx / "Dockerfile").write_text("\n".join(lines) + "\n")
    r = run("dockerfile", str(ctx / "Dockerfile"), "--json", "--show-skipped")
    assert r.code in (0, 1), r.err
    text = json.dumps(_notes(r))
    assert SECRET not in r.out
    assert "zero.txt, which is a character device, not a regular file" in text
    assert "fifo.txt, which is a FIFO (named pipe), not a regular file" in text
    assert "out.txt, which is a symbolic link that leads out of the build context" in text
    assert "requirements file /zero.txt is not in the build context" not in text


def test_compose_says_what_a_special_dockerfile_is(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    os.mkfifo(tmp_path / "a" / "Dockerfile")
    (tmp_path / "b" / "Dockerfile").symlink_to("/dev/zero")
    (tmp_path / "compose.yaml").write_text("services:\n  a:\n    build: ./a\n  b:\n    build: ./b\n")
    r = run("compose", str(tmp_path / "compose.yaml"), "--json")
    assert r.code in (0, 1), r.err
    reasons = [s["reason"] for s in json.loads(r.out)["skipped"] if s["id"] == "compose.build"]
    assert any("a/Dockerfile is a FIFO (named pipe), not a regular file" in x for x in reasons), reasons
    assert any("b/Dockerfile is a character device, not a regular file" in x for x in reasons), reasons
