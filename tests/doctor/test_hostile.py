"""Hostile inputs the fault tests do not cover: endless or binary output, odd CSV, old NVML bindings, malformed
installed metadata, corrupt caches, absurd numbers. Each must end as a finding, a skip or a recorded error of the one
probe concerned, inside its time and memory bound; never as an exception out of gather_facts or a hang."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from compat import cache
from compat._proc import MAX_OUTPUT
from compat.checks.doctor import doctor_checks
from compat.probes import frameworks, gather_facts, health, nvidia_smi, nvml, nvml_parse, toolkits
from compat.probes.host import HostFS
from compat.resolver import resolve
from tests.doctor.fakes import ROOT, FakeBin, FakeNvml, FakeNVMLError, env_with, write_exe

RTX4090_ROW = (
    "0, NVIDIA GeForce RTX 4090, GPU-af4f89ae-d08b, 535.183.06, 24564, 2, 24216, 8.9, Disabled, 41, 18.50, "
    "450.00, 00000000:01:00.0"
)


def _in_fresh_process(code: str) -> dict[str, Any]:
    """Run `code` (which sets `out`, a dict) in a fresh interpreter; `out` plus its peak resident memory in MiB.

    A fresh process, so that the peak measured is this probe's, not that of whatever test ran before it."""
    import subprocess

    wrapper = (
        f"import json, resource, time\n{code}\n"
        "out['peak_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024\n"
        "print(json.dumps(out))\n"
    )
    p = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_endless_output_is_bounded_in_time_and_memory(fake_bin: FakeBin) -> None:
    # `yes` fills a pipe at GB/s: keeping everything it printed until the deadline took gigabytes (4.9 GB for a
    # 2 s timeout) and overran the deadline fourfold.
    exe = fake_bin(
        "spew", "exec yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n"
    )
    out = _in_fresh_process(
        "from compat._proc import run as run_command\n"
        f"t0 = time.monotonic(); res = run_command([{str(exe)!r}], 1.5)\n"
        "out = {'status': res.status, 'seconds': time.monotonic() - t0, 'kept': len(res.stdout)}\n"
    )
    assert out["status"] == "timeout"
    assert out["seconds"] < 4, out
    assert out["peak_mib"] < 512, out  # bounded: the unbounded read took 4.9 GB; ~300 MiB seen at load 6
    assert out["kept"] <= 3 * MAX_OUTPUT  # its head and its tail


@pytest.mark.slow  # bounded-time/hang case: ~2-3 s of waiting; .ci/run's slow step runs it
def test_framework_child_that_prints_forever_is_a_timeout(tmp_path: Path) -> None:
    py = write_exe(
        tmp_path,
        "python",
        'if [ "$2" = meta ]; then\n'
        '  printf \'%s\' \'{"stage": "done", "python": "3.10.12", "distributions": {"torch": "2.5.1"}, '
        '"requires": {}, "static": {}, "stamps": {}}\' > "$3"; exit 0\nfi\nexec yes\n',
    )
    out = _in_fresh_process(
        "from compat.probes import frameworks\n"
        "from compat.probes.outcome import describe_child\n"
        f"t0 = time.monotonic(); res = frameworks.probe({str(py)!r}, timeout=1.5, cache=False)\n"
        "child = res['children']['torch']\n"
        "out = {'seconds': time.monotonic() - t0, 'status': child['status'],\n"
        "       'describe': describe_child(child)}\n"
    )
    assert out["seconds"] < 8, out
    assert out["peak_mib"] < 512, out  # bounded: the unbounded read took 4.9 GB; ~300 MiB seen at load 6
    assert out["status"] == "timeout"
    assert out["describe"].startswith("did not finish within 1.5 s")


def test_newest_kernel_log_lines_survive_a_big_log(fake_bin: FakeBin, tmp_path: Path) -> None:
    # `journalctl -k -n 20000` easily prints more than MAX_OUTPUT; the newest lines are the ones that matter.
    log = tmp_path / "log.txt"
    filler = "[    1.000000] host kernel: pci 0000:00:00.0: some boot noise that fills the ring buffer\n"
    xid = (
        "[ 9999.000000] NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n"
    )
    log.write_text(filler * (3 * MAX_OUTPUT // len(filler)) + xid)
    fake_bin("dmesg", f"cat {log}\n")
    res = health.probe(HostFS(str(tmp_path / "noroot")), env_with(fake_bin.dir), 5)  # type: ignore[attr-defined]
    assert res["source"] == "dmesg"
    assert [e["code"] for e in res["xid"]] == [79]


def test_nvidia_smi_printing_100_mb(fake_bin: FakeBin) -> None:
    t0 = time.monotonic()
    fake_bin("nvidia-smi", "head -c 100000000 /dev/zero | tr '\\0' 'x'\n")
    raw = nvidia_smi.probe(10, env_with(fake_bin.dir))  # type: ignore[attr-defined]
    res = nvidia_smi.parse(raw)
    assert time.monotonic() - t0 < 10
    assert (res["ok"], res["kind"]) == (False, "garbage")


# ------------------------------------------------------------------ nvidia-smi answers that are not CSV


def _smi_gather(fake_bin: FakeBin, script: str) -> Any:
    fake_bin("nvidia-smi", script)
    return gather_facts(
        environ=env_with(fake_bin.dir),
        nvml=FakeNvml(init_error=FakeNVMLError(999)),  # type: ignore[attr-defined]
        frameworks=False,
        timeout=3,
    )


@pytest.mark.parametrize(
    "script",
    [
        "head -c 20000 /dev/urandom\n",  # binary junk: stray carriage returns and quotes
        "printf '0, NVIDIA\\rA100, x\\n'\n",  # a carriage return inside a field
        "printf '\\377\\376\\000\\r\\n\\033[31m'\n",
    ],
    ids=["urandom", "carriage-return", "control-bytes"],
)
def test_nvidia_smi_binary_junk_is_garbage(fake_bin: FakeBin, script: str, doctor_matrix: Any) -> None:
    facts = _smi_gather(fake_bin, script)
    # NVML's own failure stays the NVML finding's reason; nvidia-smi's junk is nvidia-smi's.
    assert facts.probes["nvml"]["message"] == "NVML error 999"
    assert facts.probes["nvidia_smi"]["kind"] == "garbage"
    ids = {f.id for f in resolve(facts, doctor_matrix, extra_checks=doctor_checks).findings}
    assert "driver.nvidia-smi" in ids


def test_nvidia_smi_absurd_numbers_are_unknown_not_a_probe_failure(fake_bin: FakeBin) -> None:
    row = "0, Tesla T4, GPU-1, 535.104.05, " + "9" * 400 + ", 1, 1, 7.5, Enabled, " + "9" * 400 + ", 1, 1, 0"
    facts = _smi_gather(fake_bin, f"echo '{row}'\n")
    assert facts.probes["nvidia_smi"]["ok"] is True
    assert facts.gpus is not None and facts.gpus[0].name == "Tesla T4"
    assert facts.gpus[0].details["memory_total"] is None
    assert facts.gpus[0].details["health"]["temperature"] is None


@pytest.mark.parametrize(
    ("row", "driver"),
    [
        ("0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]", None),
        (
            "0, Tesla T4, GPU-1, 535.104.05, [Not Supported], [Not Supported], [Not Supported], [Not Supported], "
            "[Not Supported], [Not Supported], [Not Supported], [Not Supported], [Not Supported]",
            "535.104.05",
        ),
    ],
    ids=["all-na", "not-supported"],
)
def test_nvidia_smi_na_fields(fake_bin: FakeBin, row: str, driver: str | None, doctor_matrix: Any) -> None:
    facts = _smi_gather(fake_bin, f"echo '{row}'\n")
    assert facts.probes["nvidia_smi"]["ok"] is True
    d = facts.get("driver")
    assert (d.raw if d is not None else None) == driver
    assert (
        facts.gpus is not None and facts.gpus[0].cc is None and facts.gpus[0].details["memory_total"] is None
    )
    resolve(facts, doctor_matrix, extra_checks=doctor_checks).to_json()


def test_nvidia_smi_exit_0_with_empty_csv(fake_bin: FakeBin) -> None:
    facts = _smi_gather(fake_bin, "exit 0\n")
    assert facts.probes["nvidia_smi"]["kind"] == "garbage"
    assert facts.gpus is None


# ------------------------------------------------------------------ NVML


class OldBinding(FakeNvml):
    """An old `pynvml` (nvidia-ml-py3 7.352.0 era) that lacks nvmlSystemGetCudaDriverVersion and
    nvmlDeviceGetCudaComputeCapability altogether: AttributeError, not an NVMLError."""

    MISSING = ("nvmlSystemGetCudaDriverVersion", "nvmlDeviceGetCudaComputeCapability")

    def __getattribute__(self, name: str) -> Any:
        if name in OldBinding.MISSING:
            raise AttributeError(f"module 'pynvml' has no attribute {name!r}")
        return super().__getattribute__(name)


def test_old_binding_without_a_system_function() -> None:
    facts = gather_facts(
        environ=env_with(Path("/nonexistent"), only=True),
        frameworks=False,
        nvml=OldBinding.recorded("v100-535.171.04.json"),
    )
    assert facts.probes["nvml"]["status"] == "ok"
    d = facts.get("driver")
    assert d is not None and (d.raw, d.source) == ("535.171.04", "nvml")
    assert facts.gpus is not None and facts.gpus[0].name == "Tesla V100-PCIE-32GB"
    assert facts.gpus[0].cc is None  # the binding cannot say; not a failure of the whole probe


def test_old_binding_in_the_guards_light_read() -> None:
    drv, gpus, why = nvml.read_nvml_light(OldBinding.recorded("v100-535.171.04.json"), 5)
    assert drv == "535.171.04" and why == ""
    assert gpus is not None and gpus[0]["name"] == "Tesla V100-PCIE-32GB" and gpus[0]["cc"] is None


def test_nvml_values_of_the_wrong_shape_stay_in_their_field() -> None:
    class Odd(FakeNvml):
        def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
            return ()  # type: ignore[return-value]

    p = nvml_parse.parse(nvml.acquire(Odd.recorded("h100-580.159.04.json")))
    assert p["ok"] is True
    assert p["gpus"][0]["details"]["health"]["remapped_rows"] is None
    assert p["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


# ------------------------------------------------------------------ /proc and installed metadata


def test_proc_version_with_an_absurd_number(tmp_path: Path, doctor_matrix: Any) -> None:
    d = tmp_path / "proc" / "driver" / "nvidia"
    d.mkdir(parents=True)
    (d / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + "5" * 5000 + ".1.1  Sun\n"
    )
    facts = gather_facts(
        environ=env_with(Path("/nonexistent"), only=True),
        nvml=FakeNvml(init_error=FakeNVMLError(9)),
        frameworks=False,
        timeout=1,
        root=str(tmp_path),
    )
    assert facts.get("driver") is None or not facts.get("driver").present  # type: ignore[union-attr]
    resolve(facts, doctor_matrix, extra_checks=doctor_checks)


def _dist(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    di = site / f"{name}-{version.replace('/', '_')}.dist-info"
    di.mkdir(parents=True)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    (di / "METADATA").write_text("\n".join(lines) + "\n")


def test_installed_framework_with_a_non_pep440_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doctor_matrix: Any
) -> None:
    # Old setuptools wrote "Version: UNKNOWN" for a package without a version.
    _dist(tmp_path / "site", "tensorflow", "UNKNOWN")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    facts = gather_facts(
        environ=env_with(Path("/nonexistent"), only=True),
        nvml=FakeNvml(init_error=FakeNVMLError(12)),
        frameworks=False,
        timeout=1,
    )
    assert facts.get("tensorflow") is None  # unknown, not a crash (the doctor exited 2: "malformed version")
    assert facts.probes["frameworks"]["distributions"]["tensorflow"] == "UNKNOWN"
    resolve(facts, doctor_matrix, extra_checks=doctor_checks)


def test_other_interpreter_reporting_a_malformed_version(tmp_path: Path) -> None:
    from tests.doctor.fakes import fake_python

    meta = {
        "stage": "done",
        "python": "3.10.12",
        "executable": str(tmp_path / "python"),
        "distributions": {"torch": "garbage"},
        "requires": {"torch": []},
        "static": {},
        "stamps": {},
    }
    py = fake_python(tmp_path, "segv", meta=meta)
    facts = gather_facts(
        str(py),
        environ=env_with(),
        nvml=FakeNvml(init_error=FakeNVMLError(12)),
        timeout=1,
        framework_timeout=2,
    )
    assert facts.get("torch") is None
    assert facts.probes["frameworks"]["children"]["torch"]["status"] == "crashed"


# ------------------------------------------------------------------ corrupt files: caches, child results, version.json


def test_deeply_nested_import_cache_is_ignored(tmp_path: Path) -> None:
    env = env_with(COMPAT_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "doctor-import-k.bin").write_text("[" * 100_000)
    assert frameworks.load_cached(env, "k", time.time()) is None


def test_import_cache_of_the_wrong_shape_is_ignored(tmp_path: Path) -> None:
    env = env_with(COMPAT_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    now = time.time()
    for child in ({"status": "ok", "result": "not a mapping"}, {"status": "crashed", "result": {}}):
        doc = {"at": now, "child": child}
        assert cache.store(str(tmp_path / "cache" / "doctor-import-k.bin"), frameworks.CACHE_FORMAT, doc)
        assert frameworks.load_cached(env, "k", now) is None


def test_import_cache_round_trips_and_a_fifo_is_not_read(tmp_path: Path) -> None:
    env = env_with(COMPAT_CACHE_DIR=str(tmp_path / "cache"))
    now = time.time()
    child = {"status": "ok", "result": {"torch": {"version": "2.5.1"}}}
    frameworks.store_cached(env, "k", child, now)
    hit = frameworks.load_cached(env, "k", now)
    assert hit is not None and hit["result"] == child["result"] and hit["cached"] is True
    os.mkfifo(tmp_path / "cache" / "doctor-import-f.bin")  # on main: open() blocks forever on the FIFO
    t0 = time.monotonic()
    assert frameworks.load_cached(env, "f", now) is None
    assert time.monotonic() - t0 < 1


def test_framework_child_writing_deeply_nested_json(tmp_path: Path) -> None:
    py = write_exe(
        tmp_path, "python", "python3 -c \"import sys; open(sys.argv[1], 'w').write('[' * 100000)\" \"$3\"\n"
    )
    child = frameworks.run_child(str(py), "meta", 5)
    assert child["status"] == "failed" and child["result"] is None and child["bad_json"]


def test_toolkit_version_json_deeply_nested() -> None:
    assert toolkits.parse_version_json("[" * 100_000) is None


# ------------------------------------------------------------------ the smoke harness


def test_smoke_child_that_prints_forever_does_not_fill_the_disk(tmp_path: Path) -> None:
    from compat.smoke import harness

    code = "import sys\nb = 'x' * 65535 + '\\n'\nwhile True:\n    sys.stdout.write(b)\n"
    t0 = time.monotonic()
    run = harness.run_child([sys.executable, "-c", code], tmp_path / "none.json", timeout=60, grace=1.0)
    assert time.monotonic() - t0 < 30
    assert run.signal is not None and not run.timed_out
    assert any("output" in n for n in run.notes), run.notes
    assert "bytes left out" in run.stdout


def test_smoke_result_file_deeply_nested(tmp_path: Path) -> None:
    from compat.smoke.harness import read_result

    p = tmp_path / "r.json"
    p.write_text("[" * 100_000)
    doc, why = read_result(p)
    assert doc is None and why is not None and "not JSON" in why


# ------------------------------------------------------------------ the process itself


def test_doctor_run_from_a_deleted_directory(tmp_path: Path) -> None:
    # os.getcwd() raises FileNotFoundError there: only the disk figure is unknown, not every resource.
    out = _in_fresh_process(
        "import os\n"
        "from compat.probes import resources\n"
        "from compat.probes.host import HostFS\n"
        f"gone = {str(tmp_path / 'gone')!r}\n"
        "os.makedirs(gone); os.chdir(gone); os.rmdir(gone)\n"
        "out = resources.probe(HostFS('/'), {})\n"
    )
    assert out["status"] == "ok"
    assert out["memory"]["total"] and out["disk"] == [{"path": ".", "error": "does not exist"}]


def test_framework_build_file_that_is_no_plain_literal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # torch/version.py is read without importing torch (ast.literal_eval): an unhashable dict key raised TypeError
    # and took every framework fact of this interpreter with it.
    site = tmp_path / "site"
    _dist(site, "torch", "2.5.1")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text(
        '__version__ = "2.5.1"\ncuda = {[1]: 2}\ngit_version = "abc"\n'
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # find_spec answers from sys.modules first
    res = frameworks.probe(None, env_with(), frameworks=False)
    assert res["status"] == "ok" and res["distributions"]["torch"] == "2.5.1"
    assert res["static"]["torch"]["version"] == "2.5.1" and res["static"]["torch"]["cuda"] is None
    assert res["static"]["torch"]["git_version"] == "abc"
