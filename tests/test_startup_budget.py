"""Start-up budget (issue 12, item 8): the cheap paths stay cheap, and `compat doctor` imports each framework once.

The timings themselves are measured by bench/bench_startup.py (side by side, on a quiet machine); these tests
pin the means: no pydantic on the option-parsing path, distributions read from *.dist-info names, the extra
matrix files' parsed documents cached on their content, prompt child exits, and the smoke job's child answering
the framework probe.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from compat import _proc
from compat.probes import _framework_child as fchild
from compat.probes import frameworks as fwmod
from tests.conftest import ROOT

CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# Appends "pid name" to $COMPAT_TEST_IMPORT_LOG whenever a process really executes torch/tensorflow/jax's
# top-level module (importlib.util.find_spec alone, as compat's metadata probe uses, is not counted).
IMPORT_LOG_HOOK = """
import os, sys
_OUT = os.environ.get("COMPAT_TEST_IMPORT_LOG")
class _ImportLog:
    def find_spec(self, name, path=None, target=None):
        if name not in ("torch", "tensorflow", "jax"):
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real = spec.loader.exec_module
        def exec_module(module, _real=real, _name=name):
            with open(_OUT, "a") as fh:
                fh.write("%d %s\\n" % (os.getpid(), _name))
            _real(module)
        spec.loader.exec_module = exec_module
        return spec
if _OUT:
    sys.meta_path.insert(0, _ImportLog())
"""

FAKE_TORCH = """
from types import SimpleNamespace as _NS
__version__ = "9.9.9+fake"
version = _NS(cuda=None, hip=None, git_version="fake", debug=False)
_C = _NS()
backends = _NS(cudnn=_NS(is_available=lambda: False, version=lambda: None, enabled=False))
cuda = _NS(is_available=lambda: False, device_count=lambda: 0)
"""


def test_int_and_float_options_are_parsed_without_pydantic() -> None:
    code = (
        "import sys\nfrom compat.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
        "sys.stderr.write('\\nPYDANTIC=%s CODE=%s\\n' % ('pydantic' in sys.modules, code))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, "doctor", "--timeout", "abc"],
        capture_output=True,
        text=True,
        timeout=60,
        env=CHILD_ENV,
        check=False,
    )
    assert "PYDANTIC=False CODE=2" in res.stderr, res.stderr[-500:]
    assert "Invalid value for '--timeout': Input should be a valid number" in res.stderr
    check = [*["check", "--driver", "550.54.15", "--torch", "2.5.1", "--gpu"], "RTX 4090", "--json"]
    res = subprocess.run(
        [sys.executable, "-c", code, *check],
        capture_output=True,
        text=True,
        timeout=60,
        env=CHILD_ENV,
        check=False,
    )
    assert "PYDANTIC=False CODE=0" in res.stderr, res.stderr[-500:]


def test_installed_distributions_come_from_dist_info_names(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "Foo_Bar-1.2.3+local.dist-info").mkdir(parents=True)
    (second / "foo_bar-9.0.dist-info").mkdir(parents=True)  # shadowed: the first on the path wins
    (second / "baz-2.0.dist-info").mkdir()
    odd = first / "odd-name-1.0.dist-info"  # does not split in two: read the slow way, from its METADATA
    odd.mkdir()
    (odd / "METADATA").write_text("Metadata-Version: 2.1\nName: Odd.Name\nVersion: 1.0\n")
    egg = first / "legacy.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: Legacy\nVersion: 0.5\n")
    found = fchild.installed_distributions(metadata, [str(first), str(second), str(tmp_path / "missing")])
    assert found == {"foo-bar": "1.2.3+local", "baz": "2.0", "odd-name": "1.0", "legacy": "0.5"}


def test_installed_distributions_agree_with_importlib_metadata() -> None:
    slow: dict[str, str] = {}
    for d in metadata.distributions():
        name = d.metadata["Name"] if d.metadata is not None else None
        if name:
            slow.setdefault(fchild._norm(name), d.version)
    assert fchild.installed_distributions(metadata) == slow


def test_extra_matrix_files_are_parsed_once_per_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compat.matrix import diskcache
    from compat.matrix import model as model_mod
    from compat.matrix.model import LazyDocs

    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPAT_CACHE_DIR", str(cache))
    d = tmp_path / "matrix"
    d.mkdir()
    shutil.copy(ROOT / "matrix" / "xid.yaml", d / "xid.yaml")
    first = LazyDocs(d, {})["xid.yaml"]
    assert first and (cache / diskcache.extra_slot("xid.yaml")).is_file()

    def no_yaml(text: str) -> object:
        raise AssertionError("parsed again although the file did not change")

    monkeypatch.setattr(model_mod, "load_yaml", no_yaml)
    assert LazyDocs(d, {})["xid.yaml"] == first  # from the cache
    (d / "xid.yaml").write_text((d / "xid.yaml").read_text() + "\n# changed\n")
    assert LazyDocs(d, {})["xid.yaml"] is None  # changed bytes: parsed again (here: the stub fails, so None)


def test_a_child_exit_is_seen_at_once_and_a_timeout_still_holds() -> None:
    proc = subprocess.Popen(["sleep", "5"])
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        _proc.wait_exit(proc, time.monotonic() + 0.3)
    assert time.monotonic() - t0 < 3
    proc.kill()
    _proc.wait_exit(proc, time.monotonic() + 5)
    assert proc.returncode is not None
    res = _proc.run([sys.executable, "-c", "pass"], 30)
    assert res.status == "ok" and res.returncode == 0


def test_a_stalled_smoke_child_is_stopped_early(tmp_path: Path) -> None:
    from compat.smoke import harness

    t0 = time.monotonic()
    run = harness.run_child(
        ["sleep", "30"], tmp_path / "result.json", timeout=30, grace=0.5, stalled=lambda s: s > 0.3
    )
    assert run.timed_out and time.monotonic() - t0 < 10


def test_the_smoke_child_answers_the_framework_probe(tmp_path: Path) -> None:
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(FAKE_TORCH)
    probe_out, result = tmp_path / "probe.json", tmp_path / "result.json"
    child = ROOT / "compat" / "smoke" / "_child_torch.py"
    argv = [
        sys.executable,
        str(child),
        "--out",
        str(result),
        "--device",
        "cpu",
        "--probe-out",
        str(probe_out),
    ]
    env = {**os.environ, "PYTHONPATH": str(fake)}
    subprocess.run(argv, capture_output=True, timeout=60, env=env, cwd=str(tmp_path), check=False)
    doc = json.loads(probe_out.read_text())
    assert (doc["stage"], doc["mode"], doc["via"], doc["version"]) == ("done", "torch", "smoke", "9.9.9+fake")
    assert "error" not in doc and doc["cuda_available"] is False
    # Training the fake fails after the import: the probe's answer was written before, and the smoke reports it.
    assert json.loads(result.read_text())["status"] == "failed"


def test_an_answer_kept_from_the_smoke_job_is_what_the_probe_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dists = fwmod.installed_here().get("distributions") or {}
    mode = next(iter(fwmod.framework_modes(dists)), None)
    if mode is None:
        pytest.skip("no framework installed (CI installs the CPU builds)")
    env = {**os.environ, "COMPAT_CACHE_DIR": str(tmp_path / "cache")}
    doc = {"stage": "done", "mode": mode, "version": "1.2.3", "via": "smoke"}
    assert not fwmod.store_answer(mode, {**doc, "error": "ImportError: x"}, 1.0, 20.0, env)  # never a failure
    assert fwmod.store_answer(mode, doc, 1.0, 20.0, env)
    ran: list[str] = []

    def no_child(python: str, m: str, timeout: float, environ: object = None) -> dict[str, object]:
        ran.append(m)
        return {"status": "not-run", "mode": m}

    monkeypatch.setattr(fwmod, "run_child", no_child)
    out = fwmod.probe(None, env)
    assert mode not in ran
    assert out["children"][mode]["cached"] is True and out["children"][mode]["result"]["version"] == "1.2.3"


@pytest.mark.slow  # a real doctor: imports every installed framework and trains for real (seconds of CPU)
def test_doctor_imports_each_framework_once(tmp_path: Path) -> None:
    dists = fwmod.installed_here().get("distributions") or {}
    if "torch" not in fwmod.framework_modes(dists):
        pytest.skip("torch is not installed (CI installs the CPU build)")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(IMPORT_LOG_HOOK)
    log = tmp_path / "imports.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    env.update(
        PYTHONPATH=f"{hook}{os.pathsep}{ROOT}",
        COMPAT_CACHE_DIR=str(tmp_path / "cache"),  # cold: nothing imported before
        COMPAT_TEST_IMPORT_LOG=str(log),
        NO_COLOR="1",
    )
    res = subprocess.run(
        [sys.executable, "-m", "compat", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=str(ROOT),
        check=False,
    )
    assert res.returncode in (0, 1), res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert doc["smoke"]["status"] == "passed" and doc["smoke"]["framework"] == "torch"
    torch_child = doc["probes"]["frameworks"]["children"]["torch"]
    assert torch_child["status"] == "ok" and torch_child["result"]["via"] == "smoke"
    assert doc["facts"]["torch"]["source"] == "torch.__version__"
    pids = {line.split()[0] for line in log.read_text().splitlines() if line.endswith(" torch")}
    assert len(pids) == 1, log.read_text()  # one process imported torch: the smoke job's child


@pytest.mark.slow  # a real doctor run (the other installed frameworks are imported for real: seconds of CPU)
def test_a_hanging_import_in_the_smoke_first_doctor_costs_the_probes_budget(tmp_path: Path) -> None:
    """The smoke job answers the probe now, so its hang must be cut where the probe's own import would be."""
    (tmp_path / "site" / "torch").mkdir(parents=True)
    (tmp_path / "site" / "torch" / "__init__.py").write_text("import time\ntime.sleep(300)\n")
    dists = fwmod.installed_here().get("distributions") or {}
    if "torch" not in fwmod.framework_modes(dists):
        pytest.skip("torch is not installed: the smoke job would not pick it")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    env.update(PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}{ROOT}", COMPAT_CACHE_DIR=str(tmp_path / "cache"))
    t0 = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "compat", "doctor", "--json", "--timeout", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(tmp_path),
        check=False,
    )
    took = time.monotonic() - t0
    assert res.returncode == 1, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert doc["probes"]["frameworks"]["children"]["torch"]["status"] == "timeout"
    skipped = {s["id"]: s["reason"] for s in doc["skipped"]}
    assert "import torch" in skipped.get("smoke", ""), skipped
    assert "smoke" not in doc
    assert took < 20, took  # the probe's 4 s (4 x --timeout) and start-up, not the smoke job's 120 s
