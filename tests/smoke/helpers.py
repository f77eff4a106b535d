"""Stand-in children for the smoke harness, and a check that nothing they started is left running."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

from compat.smoke import SmokeOptions, SmokeResult, run_smoke
from compat.smoke.oom import OomCount

DATA = Path(__file__).resolve().parent.parent / "data" / "smoke"
STANDIN = DATA / "standin.py"


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent that may never reap it (PID 1 in some containers)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


def group_alive(pgid: int) -> list[int]:
    from compat.smoke.harness import group_members

    members = group_members(pgid)
    assert members is not None, "these tests need /proc"
    return members


class Run:
    """A stand-in run: the verdict, and the id of the child's process group."""

    def __init__(self, result: SmokeResult, pgid: int) -> None:
        self.result = result
        self.pgid = pgid


def standin(
    tmp_path: Path,
    mode: str,
    *,
    timeout: float = 30.0,
    text: Optional[str] = None,
    pidfile: Optional[Path] = None,
    oom_counts: Optional[list[int]] = None,
    kernel_log: Optional[str] = None,
    grace: float = 0.5,
    **options: Any,
) -> Run:
    """Run the smoke job with the stand-in child in `mode` in place of the real one."""
    selfpid = tmp_path / f"standin-{mode}.pid"
    extra: list[str] = ["--selfpid", str(selfpid)]
    if text is not None:
        extra += ["--text", str(DATA / text)]
    if pidfile is not None:
        extra += ["--pidfile", str(pidfile)]
    counts = list(oom_counts) if oom_counts is not None else None

    def argv(framework: str, result: Path, t0: float) -> list[str]:
        return [sys.executable, str(STANDIN), mode, "--out", str(result), *extra]

    def counter() -> OomCount:
        if counts is None:
            return OomCount(None, "not read in this test")
        return OomCount(counts.pop(0) if len(counts) > 1 else counts[0], "test counter")

    def klog() -> tuple[Optional[str], str]:
        return (kernel_log, "test kernel log") if kernel_log is not None else (None, "not read in this test")

    result = run_smoke(
        SmokeOptions(framework="torch", timeout=timeout, **options),
        child_argv=argv,
        installed={"torch": "9.9.9", "tensorflow": None},
        oom_counter=counter,
        kernel_log=klog,
        grace=grace,
    )
    return Run(result, int(selfpid.read_text()))
