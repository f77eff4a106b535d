"""Host readers: pure parsers on recorded text, and the process tree on a live process tree."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from compat.record import host

# A /proc/PID/stat line: field 3 is the state, 4 the parent, 52 the exit code (fields 5-51 zero here).
STAT = "4242 (python (train) x) S 4241 " + " ".join(["0"] * 47) + " 35584"
MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
MOUNTINFO_V2 = (
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
)


def test_parse_stat_handles_parentheses_and_spaces_in_comm() -> None:
    assert host.parse_stat(STAT) == (4241, "python (train) x", "S")
    assert host.parse_stat("garbage") is None


def test_exit_code_field_52() -> None:
    # 35584 = 139 << 8: exited with 139; a SIGKILLed zombie shows 9
    assert host.parse_stat_exit_code(STAT) == 35584
    assert host.parse_stat_exit_code("1 (x) Z 0") is None


def test_statm_rss_in_pages() -> None:
    assert host.parse_statm_rss("1000 250 10 1 0 100 0", page=4096) == 250 * 4096
    assert host.parse_statm_rss("") is None


def test_cgroup_v1_memory_controller_wins_over_v2() -> None:
    groups = host.parse_proc_cgroup("4:memory:/slurm/uid_1/job_7\n0::/\n")
    assert groups == {"memory": "/slurm/uid_1/job_7", "": "/"}
    ref = host.resolve_cgroup(groups, host.parse_mountinfo(MOUNTINFO))
    assert ref is not None and ref.version == 1 and ref.path == "/slurm/uid_1/job_7"


def test_cgroup_v2_only() -> None:
    ref = host.resolve_cgroup(
        host.parse_proc_cgroup("0::/user.slice/job.scope\n"), host.parse_mountinfo(MOUNTINFO_V2)
    )
    assert ref is not None and ref.version == 2 and ref.path == "/user.slice/job.scope"
    assert host.resolve_cgroup({}, {}) is None


def test_limits_and_counters() -> None:
    assert host.parse_limit("max\n") is None
    assert host.parse_limit("9223372036854771712\n") is None  # v1 "no limit"
    assert host.parse_limit("25769803776\n") == 24 << 30
    ev = host.parse_kv("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n")
    assert ev["oom_kill"] == 2 and ev["oom"] == 3


def test_read_cgroup_v2_from_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "memory.current").write_text("1048576\n")
    (tmp_path / "memory.peak").write_text("2097152\n")
    (tmp_path / "memory.max").write_text("4194304\n")
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
    r = host.read_cgroup(host.CgroupRef(2, "/job", str(tmp_path)))
    assert (r.current, r.peak, r.limit, r.oom_kill, r.oom) == (1 << 20, 2 << 20, 4 << 20, 1, 1)


def test_meminfo() -> None:
    mi = host.parse_meminfo("MemTotal:       16384000 kB\nSwapTotal:       2048 kB\nSwapFree: 1024 kB\n")
    assert mi["MemTotal"] == 16384000 * 1024 and mi["SwapTotal"] - mi["SwapFree"] == 1024 * 1024


def test_descendants() -> None:
    parents = {10: 1, 11: 10, 12: 11, 13: 1, 14: 12}
    assert host.descendants(10, parents) == {10, 11, 12, 14}
    assert host.descendants(99, parents) == set()


def test_process_tree_finds_grandchildren_and_their_rss() -> None:
    code = "import subprocess,sys,time; p=subprocess.Popen([sys.executable,'-c','import time; x=bytearray(50<<20); time.sleep(30)']); time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        tree = host.ProcessTree(proc.pid)
        deadline = time.time() + 10
        while time.time() < deadline:
            pids = tree.refresh()
            if len(pids) >= 2 and tree.rss() > 50 << 20:
                break
            time.sleep(0.2)
        assert proc.pid in pids and len(pids) == 2
        assert tree.rss() > 50 << 20
    finally:
        for pid in sorted(tree.pids, reverse=True):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        proc.wait()


def test_pid_alive_reads_a_zombie_status() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"])
    deadline = time.time() + 10
    alive, status = True, None
    while time.time() < deadline:
        alive, status = host.pid_alive(proc.pid)
        if not alive:
            break
        time.sleep(0.05)
    assert not alive and status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    proc.wait()
    assert host.pid_alive(proc.pid) == (False, None)
