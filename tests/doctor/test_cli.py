"""`compat doctor` as a user runs it, on this machine (no GPU): exit codes, JSON keys, the snapshot round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import once
from tests.doctor.fakes import ROOT, fake_python, write_exe

# The real doctor imports every installed framework in a child (seconds of CPU each). These tests share one
# import cache, filled once per test run (whichever xdist worker asks first) by the cold run of `warm_cache`, so
# the imports are paid once instead of once per test.

NEVER_IMPORTS = (
    "import sys\nfrom compat.cli import main\n"
    "try:\n    main(['doctor', '--no-smoke', '--json', '--matrix', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
    "sys.stderr.write('IMPORTED=' + ','.join(m for m in ('torch', 'tensorflow', 'jax') if m in sys.modules))\n"
)


CONSOLE_SCRIPT = (
    sys.executable,
    "-c",
    "import sys; from compat.cli import main; sys.argv[0] = 'compat'; main()",
)
"""What pip's `compat` entry-point script runs."""


def _env(env: dict[str, str] | None = None) -> dict[str, str]:
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory, matrix_dir: Path) -> tuple[Path, str]:
    """(the shared cache directory, the stderr of the cold run): one doctor run with an empty cache, in-process
    (main() in a fresh interpreter) so that it also records which frameworks compat's own process imported."""

    def cold(d: Path) -> list[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}  # as _clean_env leaves it
        env.update(NO_COLOR="1", COMPAT_CACHE_DIR=str(d))
        res = subprocess.run(
            [sys.executable, "-c", NEVER_IMPORTS, str(matrix_dir)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=str(ROOT),
            env=_env(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return [str(d), res.stderr]

    d, stderr = once(tmp_path_factory, "doctor-import-cache", cold)
    return Path(d), stderr


@pytest.fixture(autouse=True)
def _cache_dir(warm_cache: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Overrides the doctor conftest's per-test cache: this module's tests share the warm one."""
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(warm_cache[0]))
    yield


def doctor(
    matrix_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter (as a user would: the `compat` console script, so that an active
    $VIRTUAL_ENV is inspected, not `python -m compat`'s interpreter), with the test matrix."""
    e = _env(env)
    return subprocess.run(
        [*CONSOLE_SCRIPT, *args, "--matrix", str(matrix_dir)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=e,
        cwd=str(ROOT),
        check=False,
    )


def _doc(res: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    doc = json.loads(res.stdout)
    assert isinstance(doc, dict)
    return doc


def test_no_gpu_here_exits_0_quickly(matrix_dir: Path) -> None:
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    t0 = time.monotonic()
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json")
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stderr + res.stdout
    assert took < 30
    doc = _doc(res)
    assert doc["schema_version"] == 1
    assert {"verdict", "findings", "skipped", "facts", "matrix", "probes", "gpus"} <= set(doc)
    none = [f for f in doc["findings"] if f["id"] == "gpu.none"]
    assert none and none[0]["severity"] == "info" and "No NVIDIA GPU" in none[0]["title"]
    assert doc["gpus"] == [] and doc["facts"]["gpus"] == []
    assert doc["facts"]["driver"]["missing"] is True
    assert {s["id"]: s["reason"] for s in doc["skipped"] if s["id"] == "smoke"} == {"smoke": "--no-smoke"}
    assert doc["probes"]["meta"]["total_seconds"] < 30


def test_require_gpu_without_a_gpu_exits_1(matrix_dir: Path) -> None:
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver")
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--require-gpu")
    assert res.returncode == 1
    assert "gpu.required" in {f["id"] for f in _doc(res)["findings"] if f["severity"] == "error"}


def test_text_report_is_grouped(matrix_dir: Path) -> None:
    res = doctor(matrix_dir, "doctor", "--no-smoke")
    assert res.returncode in (0, 1), res.stderr
    assert res.stdout.startswith("compat doctor: ")
    assert "Driver & GPUs" in res.stdout
    assert "Facts: " in res.stdout


def test_doctor_never_imports_a_framework_in_its_own_process(warm_cache: tuple[Path, str]) -> None:
    # The cold run (empty cache): every framework is imported, each in its own child, never in compat's process.
    stderr = warm_cache[1]
    last = stderr.rstrip("\n").splitlines()[-1]
    assert last == "IMPORTED=", stderr[-500:]


def test_the_warm_run_reuses_the_cold_runs_imports(matrix_dir: Path) -> None:
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json")
    children = _doc(res)["probes"]["frameworks"]["children"]
    ok = {m: c for m, c in children.items() if c.get("status") == "ok"}
    assert ok, children  # CI installs the CPU builds: at least one framework imports
    assert all(c.get("cached") is True for c in ok.values()), children


def test_snapshot_round_trip_reproduces_the_findings(matrix_dir: Path, tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    d = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--save-snapshot", str(snap))
    assert d.returncode in (0, 1), d.stderr
    saved = json.loads(snap.read_text())
    assert saved["schema_version"] == 1 and "probes" in saved and "facts" in saved
    c = doctor(matrix_dir, "check", "--snapshot", str(snap), "--json")
    assert c.returncode == d.returncode, c.stderr
    dd, cc = _doc(d), _doc(c)
    assert cc["findings"] == dd["findings"]  # matrix-based and doctor-only checks alike
    assert cc["facts"] == dd["facts"]
    assert [s for s in dd["skipped"] if s["id"] != "smoke"] == cc["skipped"]


def test_fake_interpreter_that_segfaults(matrix_dir: Path, tmp_path: Path) -> None:
    py = fake_python(tmp_path, "segv")
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--python", str(py), "--timeout", "2")
    assert res.returncode == 1, res.stderr
    f = next(f for f in _doc(res)["findings"] if f["id"] == "framework.import-failed")
    assert f["severity"] == "error" and "SIGSEGV" in f["title"] and f["group"] == "frameworks"


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_fake_interpreter_that_hangs_is_bounded(matrix_dir: Path, tmp_path: Path) -> None:
    py = fake_python(tmp_path, "hang")
    t0 = time.monotonic()
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--python", str(py), "--timeout", "1")
    assert time.monotonic() - t0 < 30
    f = next(f for f in _doc(res)["findings"] if f["id"] == "framework.import-failed")
    assert "did not finish within 4 s" in f["title"]


def test_usage_errors_exit_2(matrix_dir: Path, tmp_path: Path) -> None:
    res = doctor(matrix_dir, "doctor", "--python", str(tmp_path / "nope"))
    assert res.returncode == 2 and res.stderr.startswith("compat: error: --python") and res.stdout == ""
    res = doctor(matrix_dir, "doctor", "--timeout", "0")
    assert res.returncode == 2
    res = doctor(matrix_dir, "doctor", "--fail-on", "sometimes")
    assert res.returncode == 2
    res = doctor(matrix_dir, "doctor", "--save-snapshot", str(tmp_path / "no" / "such" / "dir" / "s.json"))
    assert res.returncode == 2


def _no_framework_python(tmp_path: Path) -> Path:
    """A `--python` with no framework installed (its metadata says so; anything else runs the real one)."""
    py = write_exe(
        tmp_path,
        "python",
        """mode="$2"
if [ "$mode" = "meta" ]; then
  printf '%s' '{"stage": "done", "python": "3.12.1", "distributions": {}, "requires": {}}' > "$3"; exit 0
fi
exec "$(dirname "$0")/real-python" "$@"
""",
    )
    (tmp_path / "real-python").symlink_to(sys.executable)
    return py


def test_fail_on_warning(matrix_dir: Path, tmp_path: Path) -> None:
    # CUDA_LAUNCH_BLOCKING is part of the import cache's key; an interpreter without frameworks keeps this cheap.
    env = {**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}
    py = str(_no_framework_python(tmp_path))
    res = doctor(matrix_dir, "doctor", "--no-smoke", "--json", "--python", py, env=env)
    assert res.returncode in (0, 1), res.stderr
    found = {f["id"]: f for f in _doc(res)["findings"]}
    assert found["env.launch-blocking"]["severity"] == "warning"
    if not any(f["severity"] == "error" for f in found.values()):
        assert res.returncode == 0  # a warning alone passes the default --fail-on error
    res = doctor(
        matrix_dir, "doctor", "--no-smoke", "--json", "--fail-on", "warning", "--python", py, env=env
    )
    assert res.returncode == 1
    assert "env.launch-blocking" in {f["id"] for f in _doc(res)["findings"]}


def test_smoke_joins_the_report(matrix_dir: Path, tmp_path: Path) -> None:
    """Without --no-smoke the smoke job runs (here: a fake interpreter with no framework, so it is fast)."""
    py = _no_framework_python(tmp_path)
    res = doctor(matrix_dir, "doctor", "--json", "--python", str(py), timeout=300)
    assert res.returncode in (0, 1), res.stderr
    doc = _doc(res)
    smoke = [f for f in doc["findings"] if f["group"] == "smoke"]
    assert smoke and all(f["id"].startswith("smoke.") for f in smoke)
    assert doc["smoke"]["status"] in ("passed", "failed", "crashed", "timed_out", "not_run", "skipped")
    assert not any(s["id"] == "smoke" for s in doc["skipped"])
