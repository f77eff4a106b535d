"""compat's own files (issue 32, items 3, 4 and 7): a directory of another user is refused with one warning,
directories are 0700 and files 0600, a FIFO or a symlink where compat keeps a file never hangs or fools it, and
the guard never caches a verdict built on a hung NVML."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import compat
from compat import IncompatibleEnvironment, cache, startup
from compat.matrix import diskcache


def finishes(fn: Callable[[], Any], fifo: Path | None = None, seconds: float = 5.0) -> Any:
    """fn() run in a thread: its value, or a failure when it blocks (then the FIFO is opened to free it)."""
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        if fifo is not None:  # unblock the reader so the test process can end
            fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.close(fd)
        pytest.fail(f"blocked for {seconds} s")
    return box[0] if box else None


@pytest.fixture
def cdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(d))
    getattr(cache, "_WARNED", set()).clear()
    return d


# ------------------------------------------------------------------ item 3: trust


def test_new_directories_are_0700_and_files_0600(cdir: Path) -> None:
    assert cache.store(str(cdir / "sub" / "x.bin"), 1, {"a": 1})
    assert diskcache.write("k", {"a.yaml": {"x": 1}}, cdir)
    assert oct((cdir / "sub").stat().st_mode & 0o777) == "0o700"
    assert oct((cdir / "sub" / "x.bin").stat().st_mode & 0o777) == "0o600"
    assert oct((cdir / diskcache.CACHE_FILE).stat().st_mode & 0o777) == "0o600"
    assert cache.load(str(cdir / "sub" / "x.bin"), 1) == {"a": 1, "format": 1}


def test_a_directory_of_another_user_is_refused_with_one_warning(
    cdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cache.store(str(cdir / "x.bin"), 1, {"a": 1})
    assert diskcache.write("k", {"a.yaml": {"x": 1}}, cdir)
    me = cdir.stat().st_uid
    monkeypatch.setattr(
        cache, "_euid", lambda: me + 1, raising=False
    )  # now the directory belongs to someone else
    assert cache.load(str(cdir / "x.bin"), 1) is None
    assert diskcache.read("k", cdir) is None
    assert not cache.store(str(cdir / "y.bin"), 1, {"a": 1})
    assert not diskcache.write("k", {"a.yaml": {"x": 2}}, cdir)
    assert not (cdir / "y.bin").exists()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "not using the cache directory" in err[0] and "owned by uid" in err[0], err


def test_a_world_writable_directory_of_this_user_is_tightened(cdir: Path) -> None:
    cdir.mkdir(mode=0o777)
    cdir.chmod(0o777)
    assert cache.store(str(cdir / "x.bin"), 1, {"a": 1})
    assert oct(cdir.stat().st_mode & 0o777) == "0o700"


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="root makes a file of another user"
)
def test_a_file_of_another_user_is_not_read(cdir: Path) -> None:
    assert cache.store(str(cdir / "x.bin"), 1, {"a": 1})
    os.chown(cdir / "x.bin", 65534, 65534)
    assert cache.load(str(cdir / "x.bin"), 1) is None


def test_a_symlink_is_not_followed(cdir: Path, tmp_path: Path) -> None:
    assert cache.store(str(cdir / "x.bin"), 1, {"a": 1})
    os.symlink(cdir / "x.bin", cdir / "y.bin")
    assert cache.load(str(cdir / "y.bin"), 1) is None
    assert cache.load(str(cdir / "x.bin"), 1) is not None


def test_the_fallback_directory_is_refused_when_someone_else_made_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The case: no usable HOME, $TMPDIR/compat-cache-<uid> made first (0777) by another user.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("COMPAT_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/")
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    d = cache.cache_dir()
    assert d.startswith(str(tmp_path))
    os.makedirs(d, mode=0o777)
    os.chmod(d, 0o777)
    monkeypatch.setattr(cache, "_euid", lambda: os.stat(d).st_uid + 1, raising=False)
    getattr(cache, "_WARNED", set()).clear()
    assert not cache.private_dir(d)
    assert not cache.store(os.path.join(d, "guard-x.json"), 1, {"a": 1})
    assert os.listdir(d) == []


# ------------------------------------------------------------------ item 4: FIFOs


def test_a_fifo_as_any_cache_entry_is_ignored(cdir: Path) -> None:
    cdir.mkdir(mode=0o700)
    for name in ("guard-x.json", "doctor-import-x.bin", "tool-x.bin"):
        path = cdir / name
        os.mkfifo(path)
        assert finishes(functools.partial(cache.load, str(path), 1), path) is None


@pytest.mark.parametrize("slot", [diskcache.CACHE_FILE, diskcache.extra_slot("signatures.yaml")])
def test_a_fifo_as_the_matrix_cache_is_ignored(cdir: Path, slot: str) -> None:
    cdir.mkdir(mode=0o700)
    os.mkfifo(cdir / slot)
    assert finishes(lambda: diskcache.read("k", cdir, slot=slot), cdir / slot) is None
    assert diskcache.write("k", {"a.yaml": {"x": 1}}, cdir, slot=slot)  # replaced by a regular file
    assert diskcache.read("k", cdir, slot=slot) == {"a.yaml": {"x": 1}}


def test_the_guard_with_a_fifo_as_the_matrix_cache(cdir: Path) -> None:
    cdir.mkdir(mode=0o700)
    os.mkfifo(cdir / diskcache.CACHE_FILE)
    env = {"COMPAT_CACHE_DIR": str(cdir), "COMPAT_GUARD": "warn", "COMPAT_OVERRIDE_GPU": ""}
    finishes(lambda: compat.guard(environ=env), cdir / diskcache.CACHE_FILE, seconds=60)


# ------------------------------------------------------------------ item 7: a hung NVML under the guard


def test_the_guard_reports_a_hung_nvml_and_never_caches_it(
    cdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def hung() -> tuple[None, None, str]:
        calls.append(1)
        return None, None, "NVML did not answer within 3 s"

    monkeypatch.setattr(startup, "_nvml_gpus", hung)
    env = {"COMPAT_CACHE_DIR": str(cdir), "COMPAT_OVERRIDE_DRIVER": "550.54.15"}
    for _ in range(2):
        with pytest.raises(IncompatibleEnvironment, match="NVML hung") as info:
            compat.guard(environ=env)
        assert "driver.nvml" in [getattr(f, "id", None) for f in info.value.findings]
    assert len(calls) == 2  # probed again: the first verdict was not cached
    assert not list(cdir.glob("guard-*"))


def test_the_guard_never_caches_a_failed_nvml_probe(cdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_nvml_gpus", lambda: (None, None, "NVML: Unknown Error"))
    env = {"COMPAT_CACHE_DIR": str(cdir), "COMPAT_GUARD": "warn", "COMPAT_OVERRIDE_GPU": ""}
    compat.guard(environ=env)
    assert not list(cdir.glob("guard-*"))
    monkeypatch.setattr(
        startup, "_nvml_gpus", lambda: (None, [], "no NVIDIA driver (libnvidia-ml.so.1 not found)")
    )
    compat.guard(environ=env)
    assert list(cdir.glob("guard-*"))  # a probe that answered ("no driver") is cached as before
