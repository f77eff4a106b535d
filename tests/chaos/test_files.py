"""Special and endless files as every kind of input (issue 19, items 3 and 6): exit 2 with one line, quickly,
without growing memory; never a hang, never exit 3."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.chaos.harness import INPUT_MEMORY_CAP_MIB, ROOT, Run, assert_contract, run

CAP_S = 15.0


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "device":
        return "/dev/zero"
    if kind == "fifo":
        p = tmp_path / "fifo"
        os.mkfifo(p)
        return str(p)
    if kind == "loop":
        a, b = tmp_path / "a", tmp_path / "b"
        a.symlink_to(b)
        b.symlink_to(a)
        return str(a)
    if kind == "directory":
        d = tmp_path / "dir"
        d.mkdir()
        return str(d)
    if kind == "huge-sparse":
        p = tmp_path / "huge"
        with open(p, "wb") as f:
            f.truncate(300 << 20)  # 300 MiB of holes: no disk used, every byte must still be counted
        return str(p)
    if kind == "unreadable":
        p = tmp_path / "secret"
        p.write_text("{}")
        p.chmod(0)
        return str(p)
    raise AssertionError(kind)


KINDS = ("device", "fifo", "loop", "directory", "huge-sparse", "unreadable")


def _check(r: Run) -> None:
    assert_contract(r, codes=(2,), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert len(r.err_lines) == 1 and r.err_lines[0].startswith("compat: error: "), r.err


@pytest.mark.parametrize("kind", KINDS)
def test_snapshot(tmp_path: Path, kind: str) -> None:
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads any file")
    _check(run(["check", "--snapshot", _special(tmp_path, kind)]))


@pytest.mark.parametrize("kind", KINDS)
def test_dockerfile(tmp_path: Path, kind: str) -> None:
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads any file")
    if kind == "directory":
        pytest.skip("a directory is a build context: its Dockerfile is read")
    _check(run(["dockerfile", _special(tmp_path, kind)]))


@pytest.mark.parametrize("kind", KINDS)
def test_fleet_report(tmp_path: Path, kind: str) -> None:
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads any file")
    _check(run(["fleet", "merge", _special(tmp_path, kind)]))


@pytest.mark.parametrize("kind", ["device", "fifo", "loop", "huge-sparse"])
def test_matrix_file(tmp_path: Path, kind: str) -> None:
    m = tmp_path / "matrix"
    shutil.copytree(ROOT / "matrix", m)
    target = _special(tmp_path, kind)
    (m / "cuda.yaml").unlink()
    (m / "cuda.yaml").symlink_to(target)
    r = run(["check", "--driver", "535.104.05", "--matrix", str(m)])
    _check(r)
    assert "cuda.yaml" in r.err_lines[0]


@pytest.mark.parametrize("path", ["/dev/null", "file"])
def test_matrix_directory_that_is_not_a_directory(tmp_path: Path, path: str) -> None:
    if path == "file":
        (tmp_path / "file").write_text("x")
        path = str(tmp_path / "file")
    r = run(["check", "--driver", "535.104.05", "--matrix", path])
    _check(r)
    assert "is not a directory" in r.err_lines[0]


def test_log_device(tmp_path: Path) -> None:
    _check(run(["explain", "/dev/zero"]))


def test_build_context_requirements(tmp_path: Path) -> None:
    """A requirements file in the build context that is a FIFO, a device or a loop: a note, never a hang."""
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    os.mkfifo(ctx / "fifo.txt")
    (ctx / "zero.txt").symlink_to("/dev/zero")
    (ctx / "loop1.txt").symlink_to(ctx / "loop2.txt")
    (ctx / "loop2.txt").symlink_to(ctx / "loop1.txt")
    lines = ["FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04"]
    for name in ("fifo.txt", "zero.txt", "loop1.txt"):
        lines += [f"COPY {name} /{name}", f"RUN pip install -r /{name}"]
    (ctx / "Dockerfile").write_text("\n".join(lines) + "\n")
    r = run(["dockerfile", str(ctx / "Dockerfile"), "--context", str(ctx), "--json"])
    assert_contract(r, codes=(0, 1), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)


def test_guard_cache_fifo_does_not_hang(tmp_path: Path) -> None:
    """The guard finds its cache file by itself: a FIFO there must not hang the training script."""
    import sys

    code = (
        "import os, sys, compat, compat.guard_cache as s\n"
        "env = dict(os.environ)\n"
        "key = s.cache_key(env, {'require_gpu': False})\n"
        "os.makedirs(s.cache_dir(env), exist_ok=True)\n"
        "os.mkfifo(os.path.join(s.cache_dir(env), f'guard-{key}.json'))\n"
        "r = compat.guard()\n"
        "print('OK', r.cached)\n"
    )
    r = run(
        [sys.executable, "-c", code],
        python=False,
        # the installed frameworks blanked: a CUDA build (PyPI's torch off Python 3.11) is too new for this driver
        env={
            "COMPAT_OVERRIDE_DRIVER": "550.54.15",
            "COMPAT_OVERRIDE_TORCH": "",
            "COMPAT_OVERRIDE_TENSORFLOW": "",
            "COMPAT_OVERRIDE_JAX": "",
        },
        cap_s=CAP_S,
    )
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert "OK False" in r.text


# ------------------------------------------------------------------ kernel files (issue 32, item 5)

KERNEL = ["/proc/kmsg", "/proc/self/pagemap", "/dev/kmsg", "/proc/kcore"]
READERS = [
    ["explain"],
    ["dockerfile"],
    ["compose"],
    ["k8s"],
    ["fleet", "merge"],
    ["check", "--snapshot"],
    ["report", "--no-run", "--snapshot"],
]


@pytest.mark.parametrize("path", KERNEL)
@pytest.mark.parametrize("argv", READERS, ids=" ".join)
def test_kernel_file_is_refused_quickly(path: str, argv: list[str]) -> None:
    """/proc/kmsg blocks (and eats the kernel log) and pagemap never ends: one line, exit 2, at once."""
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    r = run([*argv, path], cap_s=CAP_S)
    _check(r)
    assert "kernel file" in r.err_lines[0] or "character device" in r.err_lines[0], r.err_lines


@pytest.mark.parametrize("path", ["/proc/kmsg", "/proc/self/pagemap"])
def test_kernel_file_on_stdin_is_refused(path: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:  # not root: /proc/kmsg needs CAP_SYSLOG
        pytest.skip(f"{path}: {exc.strerror}")
    try:
        r = run(["explain", "-"], stdin=fd, cap_s=CAP_S)
    finally:
        os.close(fd)
    _check(r)


def test_named_fifo_log_is_still_read(tmp_path: Path) -> None:
    """A FIFO the user names for explain is read like a pipe on stdin (documented), not refused."""
    import threading

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(b"RuntimeError: CUDA error: out of memory\n")

    threading.Thread(target=writer, daemon=True).start()
    r = run(["explain", str(fifo), "--json"], cap_s=CAP_S)
    assert_contract(r, codes=(0, 1), cap_s=CAP_S, mem_mib=INPUT_MEMORY_CAP_MIB)
    assert "out_of_memory" in r.text or "oom" in r.text.lower()
