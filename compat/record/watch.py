"""`compat watch`: record a process that is not our child until it ends, then write the record and the verdict.

Also the detached watcher the notebook extension starts: `python -m compat.record.watch --pid PID --notebook
BASE [--kernel-id ID] --detach`. It never signals the watched process and exits within a poll (0.2 s) plus the
final reading (about a second) after the process is gone."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from typing import Any

from compat.cache import read_own, write_private
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK, EXIT_USAGE, InputError
from compat.record import host
from compat.record.document import ExitInfo, RunRecord, signal_name
from compat.record.recorder import Recorder

POLL = 0.2
FAULT_LINES = 40


def watch_pid(
    pid: int,
    *,
    interval: float = 1.0,
    report_dir: str | None = None,
    gpu: bool = True,
    kernel_log: bool = True,
    kind: str = "watch",
    notebook_base: str | None = None,
    kernel_id: str | None = None,
    summary: bool = True,
    hold_signals: bool = False,
    redact: bool = False,
) -> int:
    """Watch `pid` until it ends; returns the exit code. TERM, HUP or INT to compat while it watches end the watch:
    the partial record and report are written, then 128 + signal. A signal after the process has ended is noted
    and ignored (its answer is being written). `hold_signals` (the CLI): they stay ignored after the return."""
    alive, _ = host.pid_alive(pid)
    if not alive:
        raise InputError(f"no running process with pid {pid}")
    rec = RunRecord(kind, pid, kernel_id=kernel_id)
    rec.started = time.time()
    t0 = time.monotonic()
    got: list[int] = []
    old = _catch(got)
    try:
        recorder = Recorder(rec, pid, interval=interval, gpu=gpu, kernel_log=kernel_log)
        recorder.start()
        status: int | None = None
        while not got:
            alive, status = host.pid_alive(pid)
            if not alive:
                break
            time.sleep(POLL)
        if got:  # the process may have ended between two polls: then it is its end that counts
            alive, status = host.pid_alive(pid)
        stopped = (
            list(got) if alive else []
        )  # a signal from here on came during the wrap-up: the answer stands
        rec.wall_s = time.monotonic() - t0
        if stopped:
            rec.notes.append(
                f"the watch was interrupted by {signal_name(stopped[0])} before the process ended (compat never "
                "signals the process it watches)"
            )
        elif not alive:
            rec.exit = (
                ExitInfo.from_wait_status(status, "zombie")
                if status is not None
                else ExitInfo("vanished", source="none")
            )
        recorder.stop()
        if notebook_base:
            _notebook_evidence(rec, notebook_base)
        from compat.record.conclude import conclude

        name: str | None
        if kind == "notebook":
            # The next kernel shows any stored notebook record as a death: an interrupted watcher's is not one.
            name = None if stopped else os.path.basename(notebook_base or f"notebook-{pid}") + ".json"
        else:
            name = f"watch-{int(rec.started)}-{pid}.json"
        verdict, failed = conclude(rec, report_dir, name, redact=redact)
        if summary:
            from compat.record.summary import summary as render

            with contextlib.suppress(OSError):
                sys.stderr.write(render(rec, None if failed else report_dir))
        if failed:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"compat: watch: {failed}\n")
    finally:
        if not hold_signals:
            for signum, h in old.items():
                signal.signal(signum, h)
    if stopped:
        return 128 + stopped[0]
    if failed:
        return EXIT_USAGE
    # "unknown": the process ended, its status could not be read, and nothing recorded shows a failure.
    return EXIT_OK if verdict.outcome in ("ok", "unknown") else EXIT_INCOMPATIBLE


def _catch(got: list[int]) -> dict[signal.Signals, Any]:
    """TERM, HUP and INT append to `got` instead of ending compat (main thread only; elsewhere left alone)."""
    old: dict[signal.Signals, Any] = {}
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            old[s] = signal.signal(s, lambda signum, _frame: got.append(signum))
        except (ValueError, OSError):
            pass
    return old


def _read_own_text(path: str, limit: int) -> str | None:
    """One of the notebook's side files, through compat's capped reader (a regular file of this user, or None)."""
    data = read_own(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def _notebook_evidence(rec: RunRecord, base: str) -> None:
    """The kernel's own reports: an exit marker written at a clean exit, faulthandler output at a crash."""
    time.sleep(0.2)
    marker = _read_own_text(base + ".exit", 64)
    if marker is not None and rec.exit.status in ("vanished", "exited"):
        try:
            code = int(marker.strip() or 0)
        except ValueError:
            code = 0
        if rec.exit.status == "vanished":
            rec.exit = ExitInfo("exited", code, None, False, None, "atexit")
    fault = _read_own_text(base + ".fault", 16384)
    if fault and fault.strip():
        rec.fault_report = [ln[:500] for ln in fault.splitlines()[:FAULT_LINES]]
        if rec.exit.status == "vanished":
            sig = _fault_signal(fault)
            if sig is not None:
                rec.exit = ExitInfo("signaled", None, sig, False, None, "faulthandler")
    for ext in (".exit", ".fault", ".watcher"):
        try:
            os.unlink(base + ext)
        except OSError:
            pass


def _fault_signal(text: str) -> int | None:
    for name, sig in (
        ("Segmentation fault", signal.SIGSEGV),
        ("Bus error", signal.SIGBUS),
        ("Aborted", signal.SIGABRT),
        ("Floating point exception", signal.SIGFPE),
        ("Illegal instruction", signal.SIGILL),
    ):
        if f"Fatal Python error: {name}" in text:
            return int(sig)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m compat.record.watch")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--notebook", metavar="BASE", default=None)
    ap.add_argument("--kernel-id", default=None)
    ap.add_argument("--detach", action="store_true")
    ap.add_argument("--no-gpu", action="store_true")
    args = ap.parse_args(argv)
    if args.detach:
        # Double fork: the kernel reaps the first child at once, the watcher is adopted by init and lives in its
        # own session, so neither a kernel restart nor a signal to the kernel's group touches it.
        if os.fork() > 0:
            os._exit(0)
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):
            os.dup2(devnull, fd)
        # The log sits beside the notebook's records (a private directory); never a fixed name in /tmp, and a
        # link there is not followed (issue 32: files another user can plant).
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            log = os.open(args.notebook + ".log", flags, 0o600) if args.notebook else devnull
        except OSError:
            log = devnull
        os.dup2(log, 2)
        if args.notebook:
            with contextlib.suppress(OSError):
                write_private(args.notebook + ".watcher", str(os.getpid()).encode())
    try:
        return watch_pid(
            args.pid,
            interval=args.interval,
            gpu=not args.no_gpu,
            kind="notebook" if args.notebook else "watch",
            notebook_base=args.notebook,
            kernel_id=args.kernel_id,
            summary=not args.detach,
        )
    except InputError as exc:
        sys.stderr.write(f"compat: error: {exc}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover - run as a detached child
    raise SystemExit(main())
