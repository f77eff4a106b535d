"""Helpers for the fake-NVML tests: profiles, child processes, the compat CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.fake_nvml import load

PROFILES = ROOT / "tests" / "data" / "nvml_profiles"
GOLDEN = PROFILES / "golden"


def profile(name: str) -> dict[str, Any]:
    return load(PROFILES / f"{name}.json")


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILES.glob("*.json"))


def child(code: str, env: Mapping[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (pynvml loads the library once per process)."""
    e = dict(env)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=timeout, check=False
    )


def child_json(code: str, env: Mapping[str, str], timeout: float = 60) -> Any:
    res = child(code, env, timeout)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def compat(args: list[str], env: Mapping[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The compat CLI in a subprocess: the public entry point, whatever runs NVML inside it."""
    e = dict(env)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-m", "compat", *args],
        env=e,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def traced(work: Path) -> list[str]:
    p = work / "trace.txt"
    return p.read_text().split() if p.exists() else []
