"""Issue 27: every fix explain gives installs what it says: a cuDNN pin is exact (the wheel the matrix publishes for
the cuDNN the framework was built with), and no fix command is a bare `compat …` that exits 2 (a usage error)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from compat.explain import diagnose_text
from compat.explain.catalogue import default_catalogue

ROOT = Path(__file__).resolve().parents[2]

TF_CUDNN_LOG = (
    "E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:439] Loaded runtime CuDNN library: 8.6.0 but "
    "source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher "
    "minor version."
)


def _cudnn(log: str, matrix):  # type: ignore[no-untyped-def]
    return next(d for d in diagnose_text(log, matrix=matrix) if d.category == "cudnn_mismatch")


def test_cudnn_mismatch_pins_the_wheel_the_framework_was_built_with(matrix) -> None:  # type: ignore[no-untyped-def]
    d = _cudnn(TF_CUDNN_LOG, matrix)
    cmds = [f.command for f in d.fixes if f.command and "nvidia-cudnn" in f.command]
    # 8.9.4.25 is the nvidia-cudnn-cu12 wheel TensorFlow 2.15's [and-cuda] extra pins (matrix/tensorflow.yaml).
    assert cmds == ["pip install --force-reinstall --no-deps nvidia-cudnn-cu12==8.9.4.25"]
    assert all(not re.search(r"nvidia-cudnn-cu\d+(\s|$)", f.command or "") for f in d.fixes)


def test_cudnn_mismatch_with_no_known_wheel_says_so_instead_of_an_unpinned_command(matrix) -> None:  # type: ignore[no-untyped-def]
    log = TF_CUDNN_LOG.replace("8.9.4", "8.9.3")  # no nvidia-cudnn wheel of 8.9.3 in the matrix
    d = _cudnn(log, matrix)
    assert not [f for f in d.fixes if "nvidia-cudnn" in (f.command or "")]
    assert any("8.9.3" in f.text and "not known" in f.text for f in d.fixes)


def _compat_commands() -> list[tuple[str, str]]:
    """(where, command) of every fix command in the catalogue and the matrix that runs compat itself."""
    cat = default_catalogue()
    fixes = []
    for name, c in cat.categories.items():
        fixes += [(name, f) for f in c.fixes] + ([(name, c.confirm)] if c.confirm else [])
    fixes += [(s.id, f) for s in cat.signatures for f in s.fixes]
    out = {f.command: w for w, f in fixes if f.command and f.command.startswith("compat ")}
    for path in sorted((ROOT / "matrix").glob("*.yaml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*-?\s*(?:command|fix_command):\s*['\"]?(compat [^'\"]*)", line)
            if m:
                out.setdefault(m.group(1).strip(), path.name)
    return sorted((w, c) for c, w in out.items())


def test_the_catalogue_has_compat_commands_to_run() -> None:
    assert len(_compat_commands()) >= 2


@pytest.mark.parametrize(("where", "command"), _compat_commands())
def test_no_compat_fix_command_is_a_usage_error(where: str, command: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    argv = [sys.executable, "-m", "compat", *shlex.split(command)[1:]]
    got = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False
    )
    assert got.returncode != 2, f"{where}: `{command}` exits 2: {got.stderr.strip()[-300:]}"


def test_no_catalogue_fix_installs_an_unpinned_package() -> None:
    cat = default_catalogue()
    fixes = [f for c in cat.categories.values() for f in c.fixes] + [
        f for s in cat.signatures for f in s.fixes
    ]
    unpinned = [
        f.command
        for f in fixes
        if f.command and "pip install" in f.command
        for arg in shlex.split(f.command.split("pip install", 1)[1])
        if not arg.startswith("-") and "==" not in arg
    ]
    assert unpinned == []
