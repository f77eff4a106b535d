"""The guard under faults (issue 19, items 7 and 8): warn mode only warns, every exception is a RuntimeError,
an unknown COMPAT_GUARD value warns once, and with no home directory the cache never lands in `./~`."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest

import compat
from compat import CompatWarning, IncompatibleEnvironment, cache, guard_cache, startup
from compat.errors import GuardError


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "COMPAT_CACHE_DIR": str(tmp_path / "cache"),
        "COMPAT_OVERRIDE_GPU": "",
        "COMPAT_OVERRIDE_TORCH": "",
        "COMPAT_OVERRIDE_TENSORFLOW": "",
    }


BAD = [
    ("bad override", {"COMPAT_OVERRIDE_DRIVER": "not-a-version"}),
    ("bad matrix dir", {"COMPAT_MATRIX_DIR": "/dev/null"}),
    ("missing matrix dir", {"COMPAT_MATRIX_DIR": "/nonexistent/compat-matrix"}),
]


@pytest.mark.parametrize(("what", "extra"), BAD, ids=[b[0] for b in BAD])
def test_warn_mode_only_warns(env: dict[str, str], what: str, extra: dict[str, str]) -> None:
    # On main: InputError / MatrixError (ValueErrors) escaped even with COMPAT_GUARD=warn.
    env.update(extra, COMPAT_GUARD="warn")
    with pytest.warns(CompatWarning, match="could not check"):
        res = compat.guard(environ=env)
    assert res.mode == "warn" and res.findings == []


@pytest.mark.parametrize(("what", "extra"), BAD, ids=[b[0] for b in BAD])
def test_error_mode_raises_a_runtime_error(env: dict[str, str], what: str, extra: dict[str, str]) -> None:
    env.update(extra)
    with pytest.raises(RuntimeError) as info:
        compat.guard(environ=env)
    assert isinstance(info.value, GuardError)
    assert "COMPAT_OVERRIDE_DRIVER" in str(info.value) if "override" in what else True


def test_bad_arguments_are_runtime_errors_too(env: dict[str, str]) -> None:
    for kw in ({"fail_on": "sometimes"}, {"min_free_gpu_memory": "lots"}):
        with pytest.raises(RuntimeError):
            compat.guard(environ=env, **kw)  # type: ignore[arg-type]
        with pytest.raises(ValueError):  # as before: a bad argument stays a ValueError as well
            compat.guard(environ=env, **kw)  # type: ignore[arg-type]


def test_incompatible_environment_is_a_runtime_error() -> None:
    assert issubclass(IncompatibleEnvironment, RuntimeError)


def test_unknown_mode_warns_once_and_says_what_it_means(env: dict[str, str]) -> None:
    env.update(COMPAT_GUARD="warnn", COMPAT_OVERRIDE_DRIVER="550.54.15")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compat.guard(environ=env)
        compat.guard(environ=env)
    mode_warnings = [w for w in seen if "COMPAT_GUARD" in str(w.message)]
    assert len(mode_warnings) == 1
    text = str(mode_warnings[0].message)
    assert "'warnn'" in text and "off" in text and "warn" in text and "using error" in text


def _no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """`docker run -u 12345`: no HOME and no passwd entry, so os.path.expanduser('~') stays '~'."""
    import pwd

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("COMPAT_CACHE_DIR", raising=False)

    def no_entry(uid: int) -> Any:
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    assert os.path.expanduser("~") == "~"


def test_no_home_directory_never_gives_a_relative_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_home(monkeypatch)
    # The per-user fallback lives in the temp directory: this test's own, so no cache is left in the real /tmp.
    tmp, repo = tmp_path / "tmp", tmp_path / "repo"
    tmp.mkdir()
    repo.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.chdir(repo)
    d = cache.cache_dir({})
    assert os.path.isabs(d) and "~" not in d.split(os.sep)
    assert Path(d).parent == tmp
    # The guard end to end: on main it created ./~/.cache/compat in the user's repository.
    env = {"COMPAT_OVERRIDE_DRIVER": "550.54.15", "COMPAT_OVERRIDE_GPU": "", "COMPAT_OVERRIDE_TORCH": ""}
    compat.guard(environ=env)
    assert not (repo / "~").exists()
    assert os.listdir(repo) == []


def test_cache_dir_rules(tmp_path: Path) -> None:
    assert cache.cache_dir({"COMPAT_CACHE_DIR": "rel/dir"}) == os.path.abspath("rel/dir")
    assert cache.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == str(tmp_path / "compat")
    assert cache.cache_dir({"XDG_CACHE_HOME": "relative"}).startswith("/")  # XDG: a relative value is ignored
    assert guard_cache.cache_dir({"COMPAT_CACHE_DIR": str(tmp_path)}) == str(tmp_path)


def test_one_cache_format_round_trips_and_rejects_damage(tmp_path: Path) -> None:
    p = str(tmp_path / "c" / "entry")
    assert cache.store(p, 7, {"x": [1, "two"]})
    assert cache.load(p, 7) == {"x": [1, "two"], "format": 7}
    assert cache.load(p, 8) is None  # another format
    data = Path(p).read_bytes()
    Path(p).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert cache.load(p, 7) is None  # checksum
    os.unlink(p)
    os.mkfifo(p)
    assert cache.load(p, 7) is None  # a FIFO is not read (it would block)


def test_guard_cold_path_nvml_crash_is_an_error_finding(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    crash = (None, None, "the NVIDIA driver library crashed: SIGSEGV in libnvidia-ml")
    monkeypatch.setattr(startup, "_nvml_gpus", lambda: crash)
    env["COMPAT_OVERRIDE_DRIVER"] = "550.54.15"
    with pytest.raises(IncompatibleEnvironment, match="driver library crashed") as info:
        compat.guard(environ=env)
    assert [getattr(f, "id", None) for f in info.value.findings] == ["driver.nvml"]
    assert not list(Path(env["COMPAT_CACHE_DIR"]).glob("guard-*"))  # a crash verdict is never cached
