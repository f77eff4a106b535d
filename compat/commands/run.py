"""`compat run [OPTIONS] -- COMMAND [ARGS...]`: run a command under the recorder and say why it died."""

from __future__ import annotations

from typing import Optional

import typer

from compat.errors import InputError

INTERVAL_OPT = typer.Option(1.0, "--interval", metavar="SECONDS", help="Seconds between samples (default 1).")
REPORT_OPT = typer.Option(
    None, "--report", metavar="DIR", help="Write DIR/run.json and a self-contained DIR/report.html."
)
NO_GPU_OPT = typer.Option(False, "--no-gpu", help="Do not sample the GPUs (no NVML sampler child).")
NO_KMSG_OPT = typer.Option(False, "--no-kernel-log", help="Do not read the kernel log (/dev/kmsg).")
REDACT_OPT = typer.Option(
    False,
    "--redact",
    help="Write --report's run.json and report.html redacted, as `compat report --redact` (credentials, addresses, "
    "host and user names, GPU UUIDs and serials); compat's own copy of the record stays whole.",
)


def check_interval(interval: float) -> float:
    if not interval > 0 or interval > 3600:
        raise InputError(f"--interval must be between 0 and 3600 seconds, got {interval}")
    return interval


def register(app: typer.Typer) -> None:
    @app.command(
        "run",
        context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
    )
    def run(
        command: list[str] = typer.Argument(..., metavar="-- COMMAND [ARGS...]", help="The command to run."),
        interval: float = INTERVAL_OPT,
        report: Optional[str] = REPORT_OPT,
        tail: int = typer.Option(200, "--tail", metavar="N", help="Output lines kept for the diagnosis."),
        no_gpu: bool = NO_GPU_OPT,
        no_kernel_log: bool = NO_KMSG_OPT,
        quiet: bool = typer.Option(False, "--quiet", help="No summary on stderr (the record is still kept)."),
        redact: bool = REDACT_OPT,
    ) -> None:
        """Run COMMAND, record GPU and host memory, and on a failure say why it died, with the evidence.

        Output passes through unchanged; the exit status is COMMAND's (128 + signal when a signal ended it),
        also when compat is signalled after COMMAND ended. COMMAND never depends on compat: if compat itself is
        killed (even SIGKILL), COMMAND keeps running and its output still reaches the terminal; only the
        recording is lost. If --report cannot be written, one line says so and the exit status stays COMMAND's.

        Example: compat run --report run-report -- python train.py
        """
        from compat.record.run import run_command

        if not command:
            raise InputError("give the command to run after --")
        if tail < 1 or tail > 100000:
            raise InputError(f"--tail must be between 1 and 100000, got {tail}")
        raise typer.Exit(
            run_command(
                command,
                interval=check_interval(interval),
                report_dir=report,
                ring_lines=tail,
                gpu=not no_gpu,
                kernel_log=not no_kernel_log,
                summary=not quiet,
                hold_signals=True,
                redact=redact,
            )
        )
