"""`compat watch --pid PID [--report DIR]`: record a process started elsewhere until it ends, then say why."""

from __future__ import annotations

from typing import Optional

import typer

from compat.commands.run import INTERVAL_OPT, NO_GPU_OPT, NO_KMSG_OPT, REDACT_OPT, REPORT_OPT, check_interval
from compat.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command("watch")
    def watch(
        pid: int = typer.Option(..., "--pid", metavar="PID", help="The process to watch."),
        interval: float = INTERVAL_OPT,
        report: Optional[str] = REPORT_OPT,
        no_gpu: bool = NO_GPU_OPT,
        no_kernel_log: bool = NO_KMSG_OPT,
        redact: bool = REDACT_OPT,
    ) -> None:
        """Attach to a running process (a notebook kernel, a job started elsewhere), record it until it ends,
        then write the record and the diagnosis. Exit 0 when it ended well, or ended with its status unknown (its
        parent collected it first) and nothing recorded shows a failure; 1 when it failed; 2 when --report could
        not be written (one line says why). TERM, HUP or INT end the watch: the partial record and report are
        written, then 128 + signal (143, 129, 130).

        Example: compat watch --pid 12345 --report watch-report
        """
        from compat.record.watch import watch_pid

        if pid <= 0:
            raise InputError(f"--pid must be a positive process id, got {pid}")
        raise typer.Exit(
            watch_pid(
                pid,
                interval=check_interval(interval),
                report_dir=report,
                gpu=not no_gpu,
                kernel_log=not no_kernel_log,
                hold_signals=True,
                redact=redact,
            )
        )
