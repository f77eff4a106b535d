"""`compat check` end to end: output contract, exit codes, every listed bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def _matrix_env(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("TEST_MATRIX_DIR"):
        monkeypatch.setenv("COMPAT_MATRIX_DIR", os.environ["TEST_MATRIX_DIR"])


def test_json_document_contract(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--cuda", "12.1", "--driver", "470.82.01", "--os", "linux", "--json")
    assert r.code == 1
    doc = json.loads(r.out)  # stdout holds only the document
    assert doc["schema_version"] == 1 and doc["verdict"] == "error"
    assert set(doc) >= {"schema_version", "verdict", "findings", "skipped", "facts", "matrix"}
    f = doc["findings"][0]
    assert set(f) >= {"id", "severity", "title", "message", "fixes"}
    assert all(set(x) == {"text", "command", "kind", "changes"} for x in f["fixes"])
    assert doc["facts"]["driver"]["raw"] == "470.82.01" and doc["facts"]["driver"]["source"] == "--driver"
    assert doc["matrix"]["updated"].count("-") == 2
    assert all(set(s) == {"id", "reason"} for s in doc["skipped"])
    assert r.err == ""


def test_json_is_deterministic(run) -> None:  # type: ignore[no-untyped-def]
    a = run(
        "check", "--cuda", "12.1", "--driver", "525.60.13", "--gpu", "RTX 4090", "--json", "--os", "linux"
    )
    b = run(
        "check", "--cuda", "12.1", "--driver", "525.60.13", "--gpu", "RTX 4090", "--json", "--os", "linux"
    )
    assert a.out == b.out and a.code == b.code == 0


def test_exit_0_ok_and_fail_on_warning(run) -> None:  # type: ignore[no-untyped-def]
    ok = run("check", "--cuda", "12.1", "--driver", "535.104.05", "--os", "linux")
    assert ok.code == 0 and "OK" in ok.out
    warn = run("check", "--cuda", "12.1", "--driver", "525.60.13", "--os", "linux")
    assert warn.code == 0 and "WARNING" in warn.out
    strict = run("check", "--cuda", "12.1", "--driver", "525.60.13", "--os", "linux", "--fail-on", "warning")
    assert strict.code == 1


def test_text_output_groups_and_fixes(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--cuda", "12.1", "--driver", "470.82.01", "--os", "linux")
    assert r.code == 1
    assert "Driver & GPUs" in r.out and "→ Install NVIDIA driver" in r.out
    assert "\x1b[" not in r.out  # NO_COLOR / not a TTY: plain


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--driver", "banana"], "malformed driver version 'banana'"),
        (["--torch", "2..1"], "malformed PyTorch version '2..1'"),
        (["--cc", "99"], "compute capability"),
        (["--cuda", "twelve"], "malformed CUDA version"),
        (["--os", "beos"], "unknown OS"),
        (["--python", "snake"], "malformed Python version"),
        (["--gpu", "RTX 9999 Ultra"], "unknown GPU"),
        (["--fail-on", "panic"], "--fail-on"),
        (["--no-such-flag"], "No such option"),
        (["--snapshot", "/nonexistent/snap.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_exit_2(run, args: list[str], needle: str) -> None:  # type: ignore[no-untyped-def]
    r = run("check", *args)
    assert r.code == 2
    assert needle in r.err
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    assert r.out == ""


def test_unknown_gpu_suggests_close_names(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", "RTX 409")
    assert r.code == 2 and "did you mean" in r.err and "4090" in r.err


@pytest.mark.parametrize(
    "name",
    [
        "RTX 4090",
        "NVIDIA GeForce RTX 4090",
        "Tesla V100-SXM2-16GB",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA RTX 6000 Ada Generation",
        "nvidia geforce rtx 4090",
        "Quadro RTX 6000",
    ],
)
def test_gpu_names_resolve_leniently(run, name: str) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", name, "--json")
    assert r.code == 0, r.err


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "is empty"),
        ("{nope", "is not JSON"),
        ('{"schema_version": 7, "facts": {}}', "schema_version 7"),
        ('{"schema_version": 1, "facts": {"torch": {"raw": "2..1"}}}', "malformed PyTorch version"),
    ],
)
def test_bad_snapshot_exit_2(run, tmp_path: Path, content: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "s.json"
    p.write_text(content)
    r = run("check", "--snapshot", str(p))
    assert r.code == 2 and needle in r.err and r.err.count("\n") == 1


def test_snapshot_with_flag_override(run) -> None:  # type: ignore[no-untyped-def]
    snap = str(ROOT / "examples" / "snapshot-a100-cu121-driver470.json")
    bad = run("check", "--snapshot", snap, "--cuda", "12.1", "--json")
    assert bad.code == 1
    fixed = run("check", "--snapshot", snap, "--cuda", "12.1", "--driver", "535.104.05", "--json")
    doc = json.loads(fixed.out)
    assert not any(f["id"] == "driver.cuda" for f in doc["findings"])
    assert doc["facts"]["driver"]["source"] == "--driver"


def test_overrides_apply_to_check(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMPAT_OVERRIDE_DRIVER", "470.82.01")
    r = run("check", "--cuda", "12.1", "--os", "linux", "--json")
    assert r.code == 1 and json.loads(r.out)["facts"]["driver"]["source"] == "COMPAT_OVERRIDE_DRIVER"
    # A flag beats the override.
    assert run("check", "--cuda", "12.1", "--os", "linux", "--driver", "535.104.05").code == 0


def _broken_matrix(tmp_path: Path) -> Path:
    src = Path(os.environ.get("TEST_MATRIX_DIR") or ROOT / "matrix")
    d = tmp_path / "m"
    shutil.copytree(src, d)
    cuda = (d / "cuda.yaml").read_text()
    cuda = cuda.replace('linux: "530.30.02"', 'linux: "53O.30.02"', 1)  # letter O, a typo
    (d / "cuda.yaml").write_text(cuda)
    gpus = (d / "gpus.yaml").read_text().replace("source:", "sauce:", 1)
    (d / "gpus.yaml").write_text(gpus)
    return d


def test_malformed_matrix_lists_every_problem(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = _broken_matrix(tmp_path)
    r = run("matrix", "validate", str(d))
    assert r.code == 2
    assert "cuda.yaml" in r.err and "53O.30.02" in r.err
    assert "gpus.yaml" in r.err and "missing 'source'" in r.err
    # check with --matrix: one line, exit 2, both problems named.
    r2 = run("check", "--matrix", str(d), "--cuda", "12.1")
    assert r2.code == 2 and r2.err.count("\n") == 1 and "53O.30.02" in r2.err and "source" in r2.err


def test_unparseable_yaml_and_missing_dir(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / "m"
    shutil.copytree(Path(os.environ.get("TEST_MATRIX_DIR") or ROOT / "matrix"), d)
    (d / "cudnn.yaml").write_text("releases: [\n  - {version: ")
    r = run("matrix", "validate", str(d))
    assert r.code == 2 and "cudnn.yaml" in r.err and "cannot be parsed" in r.err
    r = run("check", "--matrix", str(tmp_path / "nope"))
    assert r.code == 2 and "does not exist" in r.err


def test_yaml_is_loaded_safely(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = tmp_path / "m"
    shutil.copytree(Path(os.environ.get("TEST_MATRIX_DIR") or ROOT / "matrix"), d)
    (d / "cuda.yaml").write_text("!!python/object/apply:os.system ['touch PWNED']\n")
    r = run("matrix", "validate", str(d))
    assert r.code == 2 and not (Path.cwd() / "PWNED").exists()


def test_matrix_env_var(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMPAT_MATRIX_DIR", str(_broken_matrix(tmp_path)))
    assert run("check", "--cuda", "12.1").code == 2


def test_internal_error_is_exit_3(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import compat.pipeline.check

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(compat.pipeline.check, "check_stack", boom)
    r = run("check", "--cuda", "12.1")
    assert r.code == 3 and "internal error" in r.err and r.err.count("\n") == 1


def test_python_dash_m_and_real_exit_codes() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    if os.environ.get("TEST_MATRIX_DIR"):
        env["COMPAT_MATRIX_DIR"] = os.environ["TEST_MATRIX_DIR"]
    p = subprocess.run(
        [sys.executable, "-m", "compat", "check", "--driver", "banana"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert p.returncode == 2 and "malformed driver version" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "compat", "check", "--cuda", "12.1", "--driver", "470.82.01", "--os", "linux"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert p.returncode == 1
