"""`compat run` end to end: a real child, real signals, real exit statuses, a real memory limit."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.record.conftest import ROOT, cli_env, run_cli

PY = sys.executable
SCHEMA = json.loads((ROOT / "compat" / "record" / "run.schema.json").read_text())


def test_output_passes_through_unchanged_and_the_exit_status_is_the_childs(cache: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(b'a\\x00b\\xff\\nno newline'); sys.stderr.write('err line\\n'); sys.exit(3)"
    r = run_cli(["run", "--no-gpu", "--interval", "0.2", "--", PY, "-c", code], cache)
    assert r.returncode == 3
    assert r.stdout == b"a\x00b\xff\nno newline"
    assert r.stderr.startswith(b"err line\n")
    assert b"compat run: exited with status 3" in r.stderr


def test_sigkill_is_128_plus_9_and_killed_by_something_else(cache: Path) -> None:
    r = run_cli(
        [
            "run",
            "--no-gpu",
            "--interval",
            "0.2",
            "--",
            PY,
            "-c",
            "import os,time; time.sleep(0.5); os.kill(os.getpid(), 9)",
        ],
        cache,
    )
    assert r.returncode == 137
    assert b"killed by something else (a scheduler, a person" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_signals_are_forwarded_to_the_child(cache: Path, sig: signal.Signals) -> None:
    code = (
        "import signal,sys,time\n"
        "def h(s,f):\n    print('child got', s, flush=True); sys.exit(5)\n"
        f"signal.signal({int(sig)}, h); print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen(
        [PY, "-m", "compat", "run", "--no-gpu", "--", PY, "-c", code],
        env=cli_env(cache),
        stdin=subprocess.DEVNULL,  # not a terminal: a SIGINT to compat reaches the child only by forwarding
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None
    assert p.stdout.readline() == b"ready\n"
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert b"compat run: exited with status 5" in err
    assert p.returncode == 5
    assert out == f"child got {int(sig)}\n".encode()


def test_a_signal_death_exits_128_plus_signal(cache: Path) -> None:
    r = run_cli(
        ["run", "--no-gpu", "--", PY, "-c", "import os,signal; os.kill(os.getpid(), signal.SIGTERM)"], cache
    )
    assert r.returncode == 128 + 15
    assert b"terminated by SIGTERM" in r.stderr


def test_missing_command_and_bad_flags(cache: Path) -> None:
    r = run_cli(["run", "--", "/nonexistent/train"], cache)
    assert r.returncode == 127 and r.stderr.count(b"\n") == 1 and b"command not found" in r.stderr
    r = run_cli(["run", "--interval", "0", "--", "true"], cache)
    assert r.returncode == 2 and b"--interval" in r.stderr and b"Traceback" not in r.stderr
    r = run_cli(["run"], cache)
    assert r.returncode == 2 and b"Traceback" not in r.stderr


def test_report_is_schema_valid_and_the_ring_buffer_is_bounded(cache: Path, tmp_path: Path) -> None:
    rep = tmp_path / "rep"
    code = "import time\nfor i in range(1000): print('line', i)\ntime.sleep(1.2)\n"
    r = run_cli(
        ["run", "--interval", "0.2", "--tail", "50", "--report", str(rep), "--", PY, "-c", code], cache
    )
    assert r.returncode == 0
    assert r.stdout.count(b"\n") == 1000
    doc = json.loads((rep / "run.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert (
        doc["output_lines"] == 1000 and len(doc["output_tail"]) == 50 and doc["output_tail"][-1] == "line 999"
    )
    assert doc["verdict"]["outcome"] == "ok" and doc["verdict"]["headroom"].startswith("Headroom: ")
    # every sample taken while the child was alive has its RSS; only the last one may catch it exited (a zombie
    # has no memory to read), which is not a missing measurement
    with_rss = [bool(s["rss"]) for s in doc["samples"]]
    assert sum(with_rss) >= 3 and all(with_rss[:-1]), with_rss
    if not doc["gpu"]["available"]:  # no GPU on this machine: said, not hidden
        assert doc["gpu"]["reason"] and b"GPU: not available" in r.stderr
    assert (rep / "report.html").read_text().startswith("<!DOCTYPE html>")
    # and the cache keeps it for `compat explain --last`
    last = run_cli(["explain", "--last", "--json"], cache)
    assert last.returncode == 0 and json.loads(last.stdout)["verdict"]["outcome"] == "ok"


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_host_oom_in_a_memory_limited_cgroup(cache: Path, memcg: Path | None, tmp_path: Path) -> None:
    """The child joins a 96 MiB cgroup, waits for the recorder to see it there (2 s, 10 samples), then allocates
    until the kernel's OOM killer ends it."""
    if memcg is None:
        pytest.skip("cannot create a memory cgroup here; test_host_oom_fallback_rlimit covers the fallback")
    code = (
        "import os,time\n"
        f"open({str(memcg / 'cgroup.procs')!r},'w').write(str(os.getpid()))\n"
        "time.sleep(2.0)\nx=[]\n"
        "for i in range(400):\n    x.append(bytearray(1<<20)); time.sleep(0.002)\n"
        "print('survived')\n"
    )
    rep = tmp_path / "rep"
    r = run_cli(["run", "--no-gpu", "--interval", "0.2", "--report", str(rep), "--", PY, "-c", code], cache)
    assert r.returncode == 137, r.stderr
    doc = json.loads((rep / "run.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    v = doc["verdict"]
    assert v["outcome"] == "host_oom"
    assert v["title"].startswith("killed by the OOM killer at ")
    assert "of the 96.0 MiB cgroup limit" in v["title"], (
        doc["cgroup"],
        doc["notes"],
        [(s["t"], s["cgroup"]) for s in doc["samples"]],
    )
    assert "OOM kill(s) during the run (oom_kill 0 → 1)" in v["deciding"][0]
    if doc["kernel_log"]["readable"]:
        assert any(e["kind"] == "oom_kill" and e["pid"] == doc["pid"] for e in doc["kernel_log"]["events"])


def test_host_oom_fallback_rlimit(cache: Path) -> None:
    """Where no cgroup can be made: an address-space limit turns the same allocation into a MemoryError, which
    the diagnosis reads from the captured output."""
    code = (
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (512<<20, 512<<20))\n"
        "x=[]\nwhile True: x.append(bytearray(16<<20))\n"
    )
    r = run_cli(["run", "--no-gpu", "--interval", "0.2", "--", PY, "-c", code], cache)
    assert r.returncode == 1
    assert b"MemoryError" in r.stderr
    last = json.loads(run_cli(["explain", "--last", "--json"], cache).stdout)
    assert last["verdict"]["outcome"] == "host_oom"
    assert last["verdict"]["title"].startswith("ran out of host memory: an allocation failed")
    assert "output: MemoryError" in last["verdict"]["deciding"]


FAKE_SAMPLER = """
import json, sys, time
print(json.dumps({"info": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB <b>", "uuid": "GPU-x", "mem_total": 85899345920,
                             "power_limit_w": 400.0}]}), flush=True)
used = 60 << 30
while sys.stdin.readable():
    used = min(used + (4 << 30), 84 << 30)
    print(json.dumps({"t": time.time(), "s": [{"i": 0, "used": used, "util": 99, "temp": 84, "power": 398.5,
           "throttle": ["sw_power_cap"], "ecc": 0, "procs": [[PID, used - (1 << 30)]]}]}), flush=True)
    time.sleep(0.1)
"""


@pytest.mark.slow  # bounded-time/hang case: ~3-7 s of waiting; .ci/run's slow step runs it
def test_gpu_path_with_a_recorded_sampler_stream(
    tmp_path: Path, cache: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The GPU half without a GPU: the sampler child replaced by one that replays NVML-shaped lines."""
    from compat.record.run import run_command

    script = tmp_path / "child.py"
    script.write_text(
        "import os, sys, time\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(3.0)\n"
        "print('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity "
        "of 80.00 GiB of which 512.00 MiB is free.', file=sys.stderr)\nsys.exit(1)\n"
    )
    sampler = tmp_path / "sampler.py"
    # the fake sampler reports the child's pid as the GPU's process: read it from the file the child wrote
    sampler.write_text(
        "import os, time\n"
        f"p={str(tmp_path / 'pid')!r}\n"
        "while not os.path.exists(p): time.sleep(0.02)\n"
        "time.sleep(0.05)\nPID=int(open(p).read())\n" + FAKE_SAMPLER
    )
    rep = tmp_path / "rep"
    code = run_command([PY, str(script)], interval=0.1, report_dir=str(rep), gpu_argv=[PY, str(sampler)])
    assert code == 1
    doc = json.loads((rep / "run.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["gpu"]["available"] is True and doc["gpu"]["gpus"][0]["name"] == "NVIDIA A100-SXM4-80GB <b>"
    v = doc["verdict"]
    assert v["outcome"] == "gpu_oom" and "at its limit" in v["title"]
    assert any(
        "GPU 0 peaked at 84.0 GiB of 80.0 GiB" in d and "the run held 83.0 GiB" in d for d in v["deciding"]
    )
    assert "GPU 0 memory" in capfd.readouterr().err


def test_recorder_failure_never_stops_the_child(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compat.record import recorder
    from compat.record.run import run_command

    def broken(self):  # type: ignore[no-untyped-def]
        raise RuntimeError("sensor on fire")

    monkeypatch.setattr(recorder.Recorder, "sample_once", broken)
    rep = tmp_path / "rep"
    code = run_command(
        [PY, "-c", "import time; time.sleep(0.5); print('done')"],
        interval=0.1,
        report_dir=str(rep),
        gpu=False,
        summary=False,
    )
    assert code == 0
    doc = json.loads((rep / "run.json").read_text())
    assert any("sensor on fire" in n for n in doc["notes"])
    assert doc["exit"]["status"] == "exited" and doc["exit"]["code"] == 0


@pytest.mark.slow  # bounded-time/hang case: ~2-3 s of waiting; .ci/run's slow step runs it
def test_watch_a_process_started_elsewhere(cache: Path, tmp_path: Path) -> None:
    victim = subprocess.Popen(
        [PY, "-c", "import time; x=bytearray(30<<20); time.sleep(2); import os; os.kill(os.getpid(), 9)"]
    )
    rep = tmp_path / "rep"
    t0 = time.monotonic()
    r = run_cli(
        ["watch", "--pid", str(victim.pid), "--no-gpu", "--interval", "0.2", "--report", str(rep)], cache
    )
    victim.wait()
    assert r.returncode == 1
    doc = json.loads((rep / "run.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["kind"] == "watch" and doc["exit"]["signal"] == 9 and doc["exit"]["source"] == "zombie"
    assert doc["verdict"]["outcome"] == "killed"
    assert max(s["rss"] or 0 for s in doc["samples"]) > 30 << 20
    assert time.monotonic() - t0 < 2 + 15  # ends within seconds of the process


def test_watch_rejects_a_missing_pid(cache: Path) -> None:
    r = run_cli(["watch", "--pid", "999999999"], cache)
    assert r.returncode == 2 and r.stderr.startswith(b"compat: error: no running process with pid 999999999")


def test_explain_last_without_a_record_and_with_a_file(cache: Path) -> None:
    r = run_cli(["explain", "--last"], cache)
    assert r.returncode == 2 and r.stderr.startswith(b"compat: error: no recorded run in ")
    r = run_cli(["explain", "--last", "x.log"], cache)
    assert r.returncode == 2 and b"not both" in r.stderr


def test_pynvml_never_loads_in_compats_own_process(cache: Path) -> None:
    code = (
        "import sys\nfrom compat.record.run import run_command\n"
        "rc = run_command([sys.executable, '-c', 'import time; time.sleep(1)'], interval=0.2, summary=False)\n"
        "print('RC', rc, 'pynvml' in sys.modules)\n"
    )
    r = subprocess.run([PY, "-c", code], env=cli_env(cache), capture_output=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == b"RC 0 False"


def test_sampler_clock_event_reasons() -> None:
    from compat.record.gpu_sampler import reasons

    # nvml.h / nvidia-ml-py 13.615.71 pynvml.py: nvmlClocksEventReasonSwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20
    assert reasons(0x4 | 0x8 | 0x20) == ["sw_power_cap", "hw_slowdown", "sw_thermal"]
    assert reasons(0) == []
