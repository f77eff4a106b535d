"""OOM-kill evidence: cgroup counters and the kernel log, parsed from recorded outputs."""

from __future__ import annotations

from pathlib import Path

from compat.smoke.oom import (
    OomCount,
    cgroup_paths,
    counter_files,
    judge,
    parse_kernel_log,
    parse_oom_kill,
    read_oom_count,
)
from tests.smoke.helpers import DATA


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_v1_oom_control_counts() -> None:
    assert parse_oom_kill(_read("cgroup_v1_memory.oom_control.txt")) == 0
    assert parse_oom_kill(_read("cgroup_v1_memory.oom_control_after_kill.txt")) == 1


def test_v2_memory_events_counts() -> None:
    assert parse_oom_kill(_read("cgroup_v2_memory.events_after_kill.txt")) == 1
    assert parse_oom_kill("oom 3\n") is None  # oom (limit hits) is not oom_kill
    assert parse_oom_kill("") is None


def test_cgroup_paths_v1_hybrid_and_v2() -> None:
    assert cgroup_paths(_read("cgroup_v1_proc_self_cgroup.txt")) == (
        "/",
        "/process_api/f338b55b837ecd82352e91f80162e6cf",
    )
    v2, v1 = cgroup_paths(_read("cgroup_v2_proc_self_cgroup.txt"))
    assert (v2, v1) == ("/user.slice/user-1000.slice/user@1000.service/app.slice/labm6.service", None)


def test_counter_files_prefer_the_own_cgroup(tmp_path: Path) -> None:
    files = counter_files(_read("cgroup_v1_proc_self_cgroup.txt"), tmp_path)
    own = tmp_path / "memory" / "process_api" / "f338b55b837ecd82352e91f80162e6cf" / "memory.oom_control"
    assert own in files
    assert files.index(own) < files.index(tmp_path / "memory" / "memory.oom_control")
    assert len(files) == len(set(files))


def test_read_oom_count_from_a_fake_cgroup_tree(tmp_path: Path) -> None:
    proc_cgroup = _read("cgroup_v2_proc_self_cgroup.txt")
    own = tmp_path / proc_cgroup.strip().split("::", 1)[1].lstrip("/")
    own.mkdir(parents=True)
    (own / "memory.events").write_text(_read("cgroup_v2_memory.events_after_kill.txt"))
    count = read_oom_count(tmp_path, proc_cgroup)
    assert count == OomCount(1, str(own / "memory.events"))
    assert read_oom_count(tmp_path / "nowhere", proc_cgroup).value is None


def test_read_oom_count_here_never_raises() -> None:
    count = read_oom_count()
    assert count.value is None or count.value >= 0
    assert count.source


def test_kernel_log_names_the_victim() -> None:
    log = _read("dmesg_oom_kill.txt")
    assert parse_kernel_log(log) == [4649]
    assert parse_kernel_log(log, since=700.0) == [4649]
    assert parse_kernel_log(log, since=800.0) == []  # an older kill is not this run's


def test_judge() -> None:
    log = _read("dmesg_oom_kill.txt")
    rose = judge(1, OomCount(0, "f"), OomCount(1, "f"), None, "no log", None)
    assert rose.confirmed is True
    by_log = judge(4649, OomCount(None, "unreadable"), OomCount(None, "unreadable"), log, "dmesg", 700.0)
    assert by_log.confirmed is True and "4649" in by_log.evidence
    not_it = judge(1234, OomCount(5, "f"), OomCount(5, "f"), log, "dmesg", 700.0)
    assert not_it.confirmed is False
    unknown = judge(1234, OomCount(None, "x"), OomCount(None, "x"), None, "dmesg: not permitted", None)
    assert unknown.confirmed is None
