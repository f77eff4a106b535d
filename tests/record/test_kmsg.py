"""Kernel-log lines: recorded real lines from public issues (each with its source) and from this project's own
cgroup OOM test, parsed into the events the diagnosis uses."""

from __future__ import annotations

import os

import pytest

from compat.record.kmsg import KernelLog, concerns, parse_line, strip_record

# (id, line as posted, kind, pid, xid). Sources:
REAL = [
    (
        # https://github.com/0jc1/py-autovod/issues/7 (dmesg -T, global OOM, a python process)
        "autovod-oomkill",
        "[Sun Mar 30 08:24:00 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,"
        "global_oom,task_memcg=/init.scope,task=python,pid=7899,uid=0",
        "oom_kill",
        7899,
        None,
    ),
    (
        "autovod-killed",
        "[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26,184,840kB, "
        "anon-rss:153,700,88kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0",
        "oom_kill",
        7899,
        None,
    ),
    (
        # https://github.com/equinor/ert/issues/7797 (dmesg --time-format iso)
        "ert-killed-iso",
        "2024-04-29T14:55:41,679700+02:00 Out of memory: Killed process 1440763 (perl) total-vm:87033376kB, "
        "anon-rss:60356340kB, file-rss:0kB, shmem-rss:0kB, UID:21417 pgtables:169956kB oom_score_adj:0",
        "oom_kill",
        1440763,
        None,
    ),
    (
        # https://github.com/leptonai/gpud/pull/70 (a PyTorch worker in a Kubernetes pod's memory cgroup)
        "gpud-memcg-pytorch",
        "Aug 30 06:58:55.050705 ... kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
        "cpuset=cri-containerd-ec9ee26695deb4cc72bc665efff1cf3a03fdfb12f1303e02fe9252985e084a95.scope,mems_allowed=0-1,"
        "oom_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice/"
        "kubepods-burstable-podeded8c65_6e8e_4c6e_a889_3e427565c740.slice,task_memcg=/lxc.payload.ny2g2r5hh3-lxc/"
        "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podeded8c65_6e8e_4c6e_a889_3e427565c740.slice/"
        "cri-containerd-ec9ee26695deb4cc72bc665efff1cf3a03fdfb12f1303e02fe9252985e084a95.scope,task=pt_main_thread,"
        "pid=461754,uid=0",
        "oom_kill",
        461754,
        None,
    ),
    (
        # https://github.com/docker/for-linux/issues/1001 (syslog form, a container's memory cgroup)
        "docker-memcg-syslog",
        "May 15 23:09:27 ubuntu-s-1vcpu-2gb-ams3-01 kernel: [  514.682838] Memory cgroup out of memory: Killed "
        "process 15617 (python3) total-vm:11892kB, anon-rss:4292kB, file-rss:3428kB, shmem-rss:0kB",
        "oom_kill",
        15617,
        None,
    ),
    (
        # https://github.com/intel/platform-resource-manager/issues/42 (older kernels: "Kill process ... score")
        "eris-old-format",
        "[Thu Mar 14 01:57:55 2019] Killed process 89746 (python) total-vm:118026216kB, anon-rss:109819332kB, "
        "file-rss:3324kB, shmem-rss:0kB",
        "oom_kill",
        89746,
        None,
    ),
    (
        # /dev/kmsg record written by this machine's kernel during the cgroup OOM test (tests/record/test_run.py)
        "own-kmsg-memcg",
        "6,2270,2029092857,-;Memory cgroup out of memory: Killed process 2466 (python3) total-vm:82356kB, "
        "anon-rss:72192kB, file-rss:6736kB, shmem-rss:0kB, UID:0 pgtables:196kB oom_score_adj:0",
        "oom_kill",
        2466,
        None,
    ),
    (
        # this machine's kernel log: a segfault in a child that loaded libnvidia-ml (dmesg)
        "own-segfault",
        "[ 1830.444275] python[31614]: segfault at 0 ip 00007f5d417a612c sp 00007ffec0ab7390 error 6 in "
        "libnvidia-ml.so.1[112c,7f5d417a6000+1000] likely on CPU 1 (core 1, socket 0)",
        "segfault",
        31614,
        None,
    ),
    (
        # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150
        "xid45-pid",
        "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
        "xid",
        1818990,
        45,
    ),
    (
        # https://github.com/leptonai/gpud/pull/46 (pid unknown: still a GPU fault for every user of the GPU)
        "xid13-unknown-pid",
        "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM "
        "Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
        "xid",
        None,
        13,
    ),
    (
        # https://github.com/leptonai/gpud/pull/46
        "xid109-pt-main-thread",
        "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, "
        "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005",
        "xid",
        1797828,
        109,
    ),
]


@pytest.mark.parametrize(("line", "kind", "pid", "xid"), [r[1:] for r in REAL], ids=[r[0] for r in REAL])
def test_real_lines(line: str, kind: str, pid: int | None, xid: int | None) -> None:
    ev = parse_line(line)
    assert ev is not None
    assert (ev.kind, ev.pid, ev.xid) == (kind, pid, xid)


@pytest.mark.parametrize(
    "line",
    [
        "[ 7063.263325] oom_reaper: reaped process 63214 (uwsgi), now anon-rss:0kB, file-rss:0kB, shmem-rss:92kB",
        "[    2.757687] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  530.41.03  Release Build",
        "6,1,2,-;eth0: link up",
    ],
)
def test_unrelated_lines_are_not_events(line: str) -> None:
    assert parse_line(line) is None


def test_strip_record_forms() -> None:
    assert strip_record("6,1234,5678,-;hello world\n SUBSYSTEM=x") == "hello world"
    assert strip_record("[ 12.345678] hello") == "hello"


def test_concerns_only_our_pids_but_every_xid() -> None:
    oom = parse_line(REAL[1][1])
    xid = parse_line(REAL[9][1])
    assert oom is not None and xid is not None
    assert concerns(oom, {7899}) and not concerns(oom, {1, 2})
    assert concerns(xid, set())


def test_unreadable_kernel_log_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = KernelLog(str(tmp_path / "no-kmsg"))
    assert not log.readable and "cannot read the kernel log" in log.reason
    assert log.poll({1}) == []


@pytest.mark.skipif(
    not (os.access("/dev/kmsg", os.R_OK) and os.access("/dev/kmsg", os.W_OK)),
    reason="/dev/kmsg not readable+writable",
)
def test_live_kmsg_follows_new_records_only() -> None:
    log = KernelLog()
    assert log.readable
    pid = 4_000_000 + os.getpid() % 100_000  # above pid_max's default: names no real process
    with open("/dev/kmsg", "w") as fh:  # a record in the real kernel log, as the OOM killer would write it
        fh.write(f"compat-test: Killed process {pid} (compat-test) total-vm:1kB\n")
    events = log.poll({pid})
    assert [(e.kind, e.pid) for e in events] == [("oom_kill", pid)]
    assert log.poll({pid}) == []  # read once
    log.close()
