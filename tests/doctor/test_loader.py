"""compat.probes.loader: "would glibc's dlopen find this soname?" answered without loading it, and the NVML probe's
shortcut built on it (no child process where libnvidia-ml.so.1 is certainly absent)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from compat.probes import loader, nvml

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="models glibc's loader (Linux only)"
)

NOTHING = "libcompat-test-nothing.so.1"
"""A soname that exists nowhere on any machine."""


class Setup:
    """The inputs of certainly_absent() for one test: a fake cache and preload file, an interpreter under tmp_path
    (its ../lib is searched as the RPATH of conda's interpreters), and an environment without loader variables."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.cache = tmp_path / "ld.so.cache"
        self.cache.write_bytes(b"glibc-ld.so.cache1.1\0libc.so.6\0/lib/libc.so.6\0libother.so.1\0")
        self.preload = tmp_path / "ld.so.preload"  # absent unless a test writes it
        self.exe = tmp_path / "env" / "bin" / "python"
        self.exe.parent.mkdir(parents=True)
        self.exe.write_text("")
        self.environ: dict[str, str] = {}

    def absent(self, soname: str = NOTHING, **environ: str) -> bool:
        return loader.certainly_absent(
            soname,
            {**self.environ, **environ},
            executable=str(self.exe),
            cache_path=str(self.cache),
            preload_path=str(self.preload),
        )

    def lib_dir(self, name: str, soname: str = NOTHING) -> Path:
        d = self.root / name
        d.mkdir(parents=True, exist_ok=True)
        (d / soname).write_bytes(b"\x7fELF")
        return d


@pytest.fixture
def ld(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


@linux_only
def test_a_soname_in_no_place_is_certainly_absent(ld: Setup) -> None:
    assert ld.absent() is True


@linux_only
def test_a_cache_that_names_the_soname_means_maybe_present(ld: Setup) -> None:
    ld.cache.write_bytes(
        ld.cache.read_bytes() + NOTHING.encode() + b"\0/somewhere/" + NOTHING.encode() + b"\0"
    )
    assert ld.absent() is False


@linux_only
def test_only_the_whole_nul_terminated_name_in_the_cache_counts(ld: Setup) -> None:
    ld.cache.write_bytes(ld.cache.read_bytes() + NOTHING.encode() + b".2\0")  # libcompat-test-nothing.so.1.2
    assert ld.absent() is True


@linux_only
def test_no_cache_means_maybe_present(ld: Setup) -> None:
    ld.cache.unlink()  # musl, NixOS: a loader this module does not model
    assert ld.absent() is False


@linux_only
def test_a_preload_file_with_content_means_maybe_present(ld: Setup) -> None:
    ld.preload.write_text("   \n\t\n")  # only blanks: nothing preloaded
    assert ld.absent() is True
    ld.preload.write_text("/opt/lib/libshim.so\n")
    assert ld.absent() is False


@linux_only
def test_an_unreadable_preload_file_means_maybe_present(ld: Setup) -> None:
    ld.preload.mkdir()  # there, but open() fails
    assert ld.absent() is False


@linux_only
def test_a_fifo_in_place_of_the_loader_files_answers_at_once(ld: Setup) -> None:
    """Read through compat's capped reader: a FIFO named like /etc/ld.so.preload or /etc/ld.so.cache (nobody
    writing to it) is "cannot read", i.e. maybe present, not a hang."""
    os.mkfifo(ld.preload)
    assert ld.absent() is False
    ld.preload.unlink()
    ld.cache.unlink()
    os.mkfifo(ld.cache)
    assert ld.absent() is False


@linux_only
def test_ld_preload_means_maybe_present(ld: Setup) -> None:
    assert ld.absent(LD_PRELOAD=" ") is True
    assert ld.absent(LD_PRELOAD="/opt/lib/libshim.so") is False


@linux_only
def test_ld_preload_is_read_from_os_environ_when_no_environ_is_given(
    ld: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LD_PRELOAD", "/opt/lib/libshim.so")
    kw: dict[str, Any] = {
        "executable": str(ld.exe),
        "cache_path": str(ld.cache),
        "preload_path": str(ld.preload),
    }
    assert loader.certainly_absent(NOTHING, **kw) is False
    assert loader.certainly_absent(NOTHING, {}, **kw) is True


@linux_only
def test_a_file_on_ld_library_path_means_maybe_present(ld: Setup) -> None:
    d = ld.lib_dir("libs")
    other = ld.root / "empty"
    other.mkdir()
    assert ld.absent(LD_LIBRARY_PATH=str(other)) is True
    assert ld.absent(LD_LIBRARY_PATH=str(d)) is False
    assert ld.absent(LD_LIBRARY_PATH=f"{other}:{d}") is False
    assert ld.absent(LD_LIBRARY_PATH=f"{other};{d}") is False  # glibc also splits on ';'


@linux_only
def test_a_dangling_symlink_on_ld_library_path_means_maybe_present(ld: Setup) -> None:
    d = ld.root / "links"
    d.mkdir()
    (d / NOTHING).symlink_to(ld.root / "gone.so")
    assert ld.absent(LD_LIBRARY_PATH=str(d)) is False


@linux_only
@pytest.mark.parametrize("sub", ["glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2", "tls"])
def test_a_file_in_a_subdirectory_glibc_searches_means_maybe_present(ld: Setup, sub: str) -> None:
    ld.lib_dir(f"libs/{sub}")
    assert ld.absent(LD_LIBRARY_PATH=str(ld.root / "libs")) is False


@linux_only
def test_a_file_in_another_subdirectory_is_not_found(ld: Setup) -> None:
    ld.lib_dir("libs/unrelated")
    assert ld.absent(LD_LIBRARY_PATH=str(ld.root / "libs")) is True


@linux_only
@pytest.mark.parametrize("llp", [":", "/nonexistent-compat-dir:", ":/nonexistent-compat-dir", "/a::/b"])
def test_an_empty_ld_library_path_entry_is_the_current_directory(
    ld: Setup, monkeypatch: pytest.MonkeyPatch, llp: str
) -> None:
    monkeypatch.chdir(ld.lib_dir("cwd"))
    assert ld.absent(LD_LIBRARY_PATH="/nonexistent-compat-dir") is True  # no empty entry: cwd not searched
    assert ld.absent(LD_LIBRARY_PATH=llp) is False


@linux_only
def test_an_empty_ld_library_path_searches_no_current_directory(
    ld: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ld.lib_dir("cwd"))
    assert ld.absent(LD_LIBRARY_PATH="") is True


@linux_only
@pytest.mark.parametrize("token", ["$ORIGIN/lib", "${ORIGIN}/../lib", "/opt/$LIB", "/opt/$PLATFORM"])
def test_a_dynamic_string_token_in_ld_library_path_means_maybe_present(ld: Setup, token: str) -> None:
    assert ld.absent(LD_LIBRARY_PATH=token) is False
    with pytest.raises(ValueError):
        loader.search_dirs({"LD_LIBRARY_PATH": token}, str(ld.exe))


@linux_only
def test_a_soname_with_a_slash_is_never_certainly_absent(ld: Setup) -> None:
    assert ld.absent(str(ld.root / "nowhere" / NOTHING)) is False
    assert ld.absent(f"./{NOTHING}") is False


@linux_only
def test_the_interpreters_lib_directory_is_searched(ld: Setup) -> None:
    assert ld.absent() is True
    ld.lib_dir("env/lib")  # conda's $ORIGIN/../lib
    assert ld.absent() is False


@linux_only
def test_the_lib_directory_of_the_interpreter_a_symlink_points_to_is_searched(ld: Setup) -> None:
    real = ld.root / "real" / "bin" / "python"
    real.parent.mkdir(parents=True)
    real.write_text("")
    ld.exe.unlink()
    ld.exe.symlink_to(real)
    assert ld.absent() is True
    ld.lib_dir("real/lib")
    assert ld.absent() is False


def test_not_linux_is_never_certainly_absent(ld: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert ld.absent() is False


def test_search_dirs_follow_glibcs_order(tmp_path: Path) -> None:
    exe = tmp_path / "env" / "bin" / "python"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    got = loader.search_dirs({"LD_LIBRARY_PATH": "/x:/y::/x"}, str(exe), cwd="/the/cwd")
    assert got[:4] == [str(tmp_path / "env" / "lib"), "/x", "/y", "/the/cwd"]
    assert got.count("/x") == 1  # duplicates dropped, the first place kept
    assert got[4:8] == ["/lib", "/usr/lib", "/lib64", "/usr/lib64"]
    assert len(got) == len(set(got))
    assert all(p.startswith(("/lib/", "/usr/lib/")) and "-linux-gnu" in p for p in got[8:])
    assert loader.search_dirs({}, "")[:4] == ["/lib", "/usr/lib", "/lib64", "/usr/lib64"]  # no interpreter


def test_search_dirs_read_the_current_directory_for_an_empty_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert str(tmp_path) in loader.search_dirs({"LD_LIBRARY_PATH": "/a:"}, "")
    assert str(tmp_path) not in loader.search_dirs({"LD_LIBRARY_PATH": "/a"}, "")


# ------------------------------------------------------------------ the NVML probe's shortcut


@linux_only
def test_a_libnvidia_ml_on_ld_library_path_turns_the_shortcut_off(tmp_path: Path) -> None:
    d = tmp_path / "driver"
    d.mkdir()
    (d / "libnvidia-ml.so.1").write_bytes(b"\x7fELF")
    assert nvml.no_driver_library({**os.environ, "LD_LIBRARY_PATH": str(d)}) is False


def test_compat_nvml_always_child_turns_the_shortcut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "certainly_absent", lambda *a, **k: True)
    monkeypatch.setattr(nvml, "_genuine_pynvml", lambda environ: True)
    assert nvml.no_driver_library({}) is True
    assert nvml.no_driver_library({"COMPAT_NVML_ALWAYS_CHILD": "1"}) is False
    monkeypatch.setenv("COMPAT_NVML_ALWAYS_CHILD", "1")
    assert nvml.no_driver_library() is False
    assert nvml.no_driver_library({}) is True  # an explicit environ is the child's, not os.environ


def test_the_shortcut_answers_without_starting_a_child(monkeypatch: pytest.MonkeyPatch) -> None:
    from compat import _proc

    def no_child(*a: object, **k: object) -> object:
        raise AssertionError("a child process was started")

    monkeypatch.setattr(_proc, "run", no_child)
    monkeypatch.setattr(nvml, "no_driver_library", lambda environ=None: True)
    full = nvml.in_child("full", 5.0)
    assert full == {
        "status": "error",
        "error": {"code": 12, "kind": "library-not-found", "message": "NVML Shared Library Not Found"},
        "stage": "init",
    }
    light = nvml.in_child("light", 5.0)
    assert light == {
        "status": "error",
        "error": {"code": 12, "kind": "library-not-found", "message": "NVML Shared Library Not Found"},
    }


@pytest.mark.parametrize("mode", ["full", "light"])
def test_the_shortcut_answers_what_the_real_child_answers(mode: str) -> None:
    if not nvml.no_driver_library():
        pytest.skip(
            "libnvidia-ml.so.1 may be present here, or the genuine nvidia-ml-py pynvml is not what the child "
            "would import: no shortcut to compare"
        )
    child = nvml.in_child(mode, 5.0, {**os.environ, "COMPAT_NVML_ALWAYS_CHILD": "1"})
    assert nvml.in_child(mode, 5.0) == child
    assert child["status"] == "error" and child["error"]["kind"] == "library-not-found"


def test_the_childs_pythonpath_decides_which_pynvml_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child searches its own PYTHONPATH first: a stand-in there (even when this process never had that
    entry) disables the shortcut; an entry without a pynvml does not change the answer."""
    empty = tmp_path / "empty"
    empty.mkdir()
    standin = tmp_path / "standin"
    standin.mkdir()
    (standin / "pynvml.py").write_text("def nvmlInit():\n    raise RuntimeError('stand-in')\n")
    baseline = nvml._genuine_pynvml({})
    assert nvml._genuine_pynvml({"PYTHONPATH": str(empty)}) is baseline
    assert nvml._genuine_pynvml({"PYTHONPATH": str(standin)}) is False
    monkeypatch.setenv("PYTHONPATH", str(standin))
    assert nvml._genuine_pynvml(None) is False  # the child inherits os.environ


def test_an_isolated_parent_gets_no_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    """Started with -I, -E or -s, this interpreter's import path is not the child's: no shortcut."""
    flags = type("Flags", (), {"isolated": 1, "ignore_environment": 0, "no_user_site": 0})()
    monkeypatch.setattr(sys, "flags", flags)
    assert nvml._genuine_pynvml({}) is False


def _stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dist_info: str | None) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "pynvml.py").write_text("def nvmlInit():\n    pass\n")
    if dist_info is not None:
        (site / dist_info).mkdir()
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    monkeypatch.syspath_prepend(str(site))


def test_a_stand_in_pynvml_is_not_genuine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(tmp_path, monkeypatch, None)
    assert nvml._genuine_pynvml(None) is False
    assert nvml.no_driver_library() is False


def test_a_pynvml_from_another_distribution_is_not_genuine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "nvidia_ml_py3-7.352.0.dist-info")  # the old fork
    assert nvml._genuine_pynvml(None) is False


def test_a_pynvml_beside_nvidia_ml_pys_dist_info_is_genuine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "nvidia_ml_py-12.560.30.dist-info")
    assert nvml._genuine_pynvml(None) is True
    assert nvml._genuine_pynvml(dict(os.environ)) is True  # the same PYTHONPATH as here


def test_a_pynvml_package_is_not_genuine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "pynvml").mkdir(parents=True)
    (site / "pynvml" / "__init__.py").write_text("")
    (site / "nvidia_ml_py-12.560.30.dist-info").mkdir()
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    monkeypatch.syspath_prepend(str(site))
    assert nvml._genuine_pynvml(None) is False
