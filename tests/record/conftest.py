"""Fixtures for the recorder: the CLI as a real subprocess, and a memory-limited cgroup when one can be made."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def cli_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COMPAT_CACHE_DIR"] = str(cache)
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(d))
    return d


def run_cli(args: list[str], cache: Path, timeout: float = 120, **kw) -> subprocess.CompletedProcess[bytes]:  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "compat", *args],
        env=cli_env(cache),
        capture_output=True,
        timeout=timeout,
        **kw,
    )


def _v1_memcg(limit: int) -> Path | None:
    base = Path("/sys/fs/cgroup/memory")
    if not (base / "cgroup.procs").exists():
        return None
    d = base / f"compat-test-{uuid.uuid4().hex[:8]}"
    try:
        d.mkdir()
        (d / "memory.limit_in_bytes").write_text(str(limit))
        if (d / "memory.memsw.limit_in_bytes").exists():
            try:
                (d / "memory.memsw.limit_in_bytes").write_text(str(limit))
            except OSError:
                pass
        return d
    except OSError:
        return None


def _v2_memcg(limit: int) -> Path | None:
    base = Path("/sys/fs/cgroup")
    try:
        if "memory" not in (base / "cgroup.subtree_control").read_text().split():
            return None
        d = base / f"compat-test-{uuid.uuid4().hex[:8]}"
        d.mkdir()
        (d / "memory.max").write_text(str(limit))
        (d / "memory.swap.max").write_text("0") if (d / "memory.swap.max").exists() else None
        return d
    except OSError:
        return None


@pytest.fixture
def memcg() -> Iterator[Path | None]:
    """A memory cgroup limited to 96 MiB (v2 or v1), or None where this host does not let us make one."""
    d = _v2_memcg(96 << 20) or _v1_memcg(96 << 20)
    yield d
    if d is not None:
        for _ in range(50):
            try:
                d.rmdir()
                break
            except OSError:
                time.sleep(0.1)
