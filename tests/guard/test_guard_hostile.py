"""compat.guard() against hostile input: damaged cache files, garbage from NVML or installed metadata, package
installs between runs, and COMPAT_GUARD=off doing nothing. The guard runs at the top of someone's training
script: whatever it meets is a finding or nothing, never an exception of its own, a stall or a huge allocation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import compat
from compat import CompatWarning, IncompatibleEnvironment, guard_cache, startup
from compat.probes import nvml
from tests.conftest import ROOT
from tests.doctor.fakes import FakeNvml


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = {
        "COMPAT_CACHE_DIR": str(tmp_path / "cache"),
        "COMPAT_OVERRIDE_GPU": "",
        "COMPAT_OVERRIDE_TORCH": "",
        "COMPAT_OVERRIDE_TENSORFLOW": "",
    }
    if os.environ.get("TEST_MATRIX_DIR"):
        e["COMPAT_MATRIX_DIR"] = os.environ["TEST_MATRIX_DIR"]
    return e


def _guard(env: dict[str, str], **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompatWarning)
        return compat.guard(environ=env, **kw)


def _cache_files(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["COMPAT_CACHE_DIR"]).glob("guard-*.json"))


# These few bytes make marshal.loads allocate gigabytes and spin for seconds (found by fuzzing marshal).
MARSHAL_BOMBS = ("a82e4eb660cdd4", "a84e812f7df8d242679b", "28ccbd5872e96a0456670f62985a97")


@pytest.mark.parametrize("junk", MARSHAL_BOMBS)
def test_damaged_cache_is_ignored_quickly(env: dict[str, str], junk: str) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)
    (path,) = _cache_files(env)
    path.write_bytes(bytes.fromhex(junk))
    t0 = time.monotonic()
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)
    assert time.monotonic() - t0 < 2.0
    assert guard_cache.load_cache(str(path)) is not None  # rewritten by the run that ignored it


def test_cache_with_a_flipped_byte_is_ignored(env: dict[str, str]) -> None:
    env.update(COMPAT_OVERRIDE_DRIVER="470.82.01", COMPAT_OVERRIDE_TENSORFLOW="2.16.1")
    with pytest.raises(IncompatibleEnvironment):
        _guard(env)
    (path,) = _cache_files(env)
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01
    path.write_bytes(bytes(data))
    assert guard_cache.load_cache(str(path)) is None


def test_cache_key_follows_installs_and_uninstalls(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tensorflow 2.16.1 (CUDA 12.3) cannot run on driver 470: installing it must not be answered from the cache.
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    del env["COMPAT_OVERRIDE_TENSORFLOW"]
    env["COMPAT_OVERRIDE_DRIVER"] = "470.82.01"
    first = _guard(env)
    assert first.ok and _guard(env).cached
    dist = site / "tensorflow-2.16.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.16.1\n")
    with pytest.raises(IncompatibleEnvironment, match="CUDA 12.3"):
        _guard(env)
    shutil.rmtree(dist)
    again = _guard(env)
    assert again.ok


def test_installed_framework_with_a_non_pep440_version(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    dist = site / "tensorflow-UNKNOWN.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: UNKNOWN\n")
    monkeypatch.syspath_prepend(str(site))
    del env["COMPAT_OVERRIDE_TENSORFLOW"]
    env["COMPAT_OVERRIDE_DRIVER"] = "550.54.15"
    assert _guard(env).ok


class GarbageNvml(FakeNvml):
    """A driver whose NVML answers garbage: a version string that is no version, a compute capability of 255.254."""

    def nvmlSystemGetDriverVersion(self) -> str:
        return "N/A"

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        return 255, 254


def test_garbage_from_nvml_is_not_an_exception(env: dict[str, str]) -> None:
    light = nvml.read_nvml_light(GarbageNvml.recorded("v100-535.171.04.json"), 5)
    assert light[0] == "N/A" and light[1] is not None and light[1][0]["cc"] == "255.254"
    found = startup._evaluate(env, True, light)  # require_gpu: the GPU itself is still seen
    assert all(f.id != "gpu.none" for f, _ in found)


def test_off_does_nothing(tmp_path: Path) -> None:
    """COMPAT_GUARD=off: no cache read or written, no NVML, no metadata scan, no matrix, nothing printed."""
    code = (
        "import sys, compat\n"
        "before = set(sys.modules)\n"
        "r = compat.guard(min_gpus=8, require_gpu=True)\n"
        "new = sorted(m for m in set(sys.modules) - before if not m.startswith('encodings'))\n"
        "sys.stderr.write(repr((r.mode, r.findings, set(new) <= {'compat.startup', 'marshal', 'zlib'})))\n"
    )
    env = {**os.environ, "COMPAT_GUARD": "off", "COMPAT_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert p.stderr == "('off', [], True)"
    assert not (tmp_path / "cache").exists()
