"""compat.guard(): raises, warns, stays silent, honours ignore/frameworks, caches and survives a bad cache."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import compat
from compat import CompatWarning, IncompatibleEnvironment
from compat.startup import parse_size
from tests.conftest import ROOT


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # Installed frameworks must not leak into these tests: empty overrides mean absent.
    e = {
        "COMPAT_CACHE_DIR": str(tmp_path / "cache"),
        "COMPAT_OVERRIDE_GPU": "",
        "COMPAT_OVERRIDE_TORCH": "",
        "COMPAT_OVERRIDE_TENSORFLOW": "",
        "COMPAT_OVERRIDE_JAX": "",
        # Nor the interpreter's version: the frameworks these tests name (TensorFlow 2.16.1, torch 2.1.0) have no
        # wheels for the newest Pythons the tests run on, a finding of its own.
        "COMPAT_OVERRIDE_PYTHON": "3.11",
    }
    if os.environ.get("TEST_MATRIX_DIR"):
        e["COMPAT_MATRIX_DIR"] = os.environ["TEST_MATRIX_DIR"]
    return e


def _guard(env: dict[str, str], **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompatWarning)
        return compat.guard(environ=env, **kw)


def test_raises_for_old_driver_and_cu121_torch(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TORCH="2.1.0+cu121")
    with pytest.raises(IncompatibleEnvironment) as exc:
        _guard(env)
    msg = str(exc.value)
    assert isinstance(exc.value, RuntimeError)
    assert "470.82.01" in msg and "driver.cuda" in msg and "fix:" in msg
    assert (
        "pip install --force-reinstall torch==2.1.0+cu118 --index-url https://download.pytorch.org/whl/cu118"
        in msg
    )


def test_raises_for_tensorflow_too(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.raises(IncompatibleEnvironment, match="CUDA 12.3"):
        _guard(env)


def test_warn_mode_warns_instead(env: dict[str, str]) -> None:
    env.update(COMPAT_GUARD="warn", COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.warns(CompatWarning, match="driver.cuda"):
        res = compat.guard(environ=env)
    assert not res.ok


def test_off_is_silent(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    env.update(COMPAT_GUARD="off", COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    res = _guard(env)
    assert res.mode == "off" and res.findings == []
    assert not (Path(env["COMPAT_CACHE_DIR"])).exists()
    assert capsys.readouterr() == ("", "")


def test_ignore(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    res = _guard(env, ignore=("driver.cuda", "known."))
    assert all(f.id != "driver.cuda" for f in res.findings)


def test_frameworks_filter(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    res = _guard(env, frameworks=("torch",))
    assert res.ok


def test_fail_on_warning(env: dict[str, str]) -> None:
    # CUDA 12.3 (TF 2.16.1) on 525.60.13: above the 12.x floor, below 12.3's own driver -> warning.
    env.update(COMPAT_OVERRIDE_DRIVER="525.60.13", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.warns(CompatWarning, match="minor-version compatibility"):
        compat.guard(environ=env)
    with pytest.raises(IncompatibleEnvironment):
        _guard(env, fail_on="warning")


def test_cache_hit_and_invalidation(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="550.54.15", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    first = _guard(env)
    second = _guard(env)
    assert not first.cached and second.cached and first.findings == second.findings
    env["COMPAT_OVERRIDE_DRIVER"] = "470.82.01"  # a fact changed: the cache must not answer
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)


def test_corrupt_cache_is_ignored(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)
    for p in Path(env["COMPAT_CACHE_DIR"]).glob("guard-*.json"):
        p.write_text("{not json")
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)
    for p in Path(env["COMPAT_CACHE_DIR"]).glob("guard-*.json"):
        p.write_bytes(marshal.dumps({"format": 1, "findings": [{"id": 1}]}))
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)


def test_unwritable_cache_is_ignored(env: dict[str, str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env.update(
        COMPAT_CACHE_DIR=str(blocker / "sub"),
        COMPAT_OVERRIDE_DRIVER="550.54.15",
        COMPAT_OVERRIDE_TENSORFLOW="2.16.1",
    )
    assert _guard(env).ok


def test_min_gpus_and_memory(env: dict[str, str]) -> None:
    with pytest.raises(IncompatibleEnvironment, match="guard.min-gpus"):
        _guard(env, min_gpus=1)


def test_parse_size() -> None:
    assert parse_size("20GiB") == 20 * 2**30 and parse_size("512MB") == 512 * 10**6 and parse_size(5) == 5
    with pytest.raises(ValueError):
        parse_size("lots")


def test_guard_never_imports_frameworks_never_prints_never_touches_environ(tmp_path: Path) -> None:
    code = (
        "import os, sys, warnings, compat\n"
        "warnings.simplefilter('ignore')  # warnings are the API; printing is not\n"
        "before = dict(os.environ)\n"
        "try:\n"
        "    compat.guard()\n"
        "except compat.IncompatibleEnvironment:\n"
        "    pass\n"
        "assert dict(os.environ) == before\n"
        "heavy = [m for m in ('torch', 'tensorflow', 'jax', 'typer', 'rich') if m in sys.modules]\n"
        "sys.stderr.write(repr(heavy))\n"
    )
    env = {
        **os.environ,
        "COMPAT_CACHE_DIR": str(tmp_path),
        "COMPAT_OVERRIDE_DRIVER": "470.82.01",
        "COMPAT_OVERRIDE_TORCH": "",
        "COMPAT_OVERRIDE_TENSORFLOW": "2.16.1",
    }
    if os.environ.get("TEST_MATRIX_DIR"):
        env["COMPAT_MATRIX_DIR"] = os.environ["TEST_MATRIX_DIR"]
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and p.stderr == "[]"


def test_import_compat_is_light() -> None:
    code = (
        "import sys, compat\n"
        "print([m for m in ('typer', 'rich', 'yaml', 'pynvml', 'torch', 'tensorflow', 'jax', 'click', 'packaging')"
        " if m in sys.modules])"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.stdout.strip() == "[]", p.stdout + p.stderr


def test_matrix_dir_mirror_agrees() -> None:
    from compat.guard_cache import matrix_dir
    from compat.matrix import default_matrix_dir

    assert Path(matrix_dir({})) == default_matrix_dir()
    assert matrix_dir({"COMPAT_MATRIX_DIR": "/x"}) == "/x"


def test_override_prefix_mirror_agrees() -> None:
    from compat.facts import OVERRIDE_PREFIX as A
    from compat.guard_cache import OVERRIDE_PREFIX as B

    assert A == B


def test_jax_findings_are_guarded_and_filtered(env: dict[str, str]) -> None:
    # jax 0.10.2 with its CUDA 13 plugin on a CUDA 12.4 driver: JAX's page asks for >= 580 (issue 17).
    env.update(
        COMPAT_OVERRIDE_DRIVER="550.54.15", COMPAT_OVERRIDE_JAX="0.10.2+cuda13", COMPAT_OVERRIDE_PYTHON="3.12"
    )
    with pytest.raises(IncompatibleEnvironment, match="JAX's CUDA 13 build"):
        _guard(env, frameworks=("jax",))
    assert _guard(env, frameworks=("torch",)).ok
