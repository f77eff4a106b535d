"""`compat smoke`: train a tiny CNN in an isolated child process and say whether the stack really trains."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from compat.commands.common import JSON_OPT
from compat.smoke.result import DEFAULT_BATCH, DEFAULT_STEPS, DEFAULT_TIMEOUT


def register(app: typer.Typer) -> None:
    @app.command("smoke")
    def smoke(
        framework: str = typer.Option("auto", "--framework", metavar="auto|torch|tensorflow",
                                      help="Framework to train with (auto: PyTorch if installed, else TensorFlow)."),
        device: str = typer.Option("auto", "--device", metavar="auto|cuda|cpu",
                                   help="Where to train (auto: the GPU when the framework sees one)."),
        steps: int = typer.Option(DEFAULT_STEPS, "--steps", metavar="N", help="Training steps (at least 2)."),
        batch_size: int = typer.Option(DEFAULT_BATCH, "--batch-size", metavar="N", help="Batch size."),
        amp: bool = typer.Option(False, "--amp", help="Mixed precision: bf16 where supported, else fp16 with a scaler."),
        find_max_batch: bool = typer.Option(False, "--find-max-batch",
                                            help="Double the batch size until the GPU runs out of memory (GPUs only)."),
        timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", metavar="S",
                                      help="Seconds before the child's whole process group is killed."),
        python: Optional[str] = typer.Option(None, "--python", metavar="PATH",
                                             help="Train with this interpreter instead of compat's own."),
        json_out: bool = JSON_OPT,
    ) -> None:
        """Train a tiny CNN for a few steps in an isolated child process: a crash is a diagnosis, not a dead terminal."""
        from compat.smoke import SmokeOptions, render_text, run_smoke

        options = SmokeOptions(framework=framework, device=device, steps=steps, batch_size=batch_size, amp=amp,
                               find_max_batch=find_max_batch, timeout=timeout, python=python).validate()
        if not json_out and sys.stderr.isatty():
            sys.stderr.write(f"compat smoke: training a tiny CNN ({framework}, {device}; timeout {timeout:g} s)...\n")
        result = run_smoke(options)
        if json_out:
            from compat.render import dumps

            sys.stdout.write(dumps(result.to_json()) + "\n")
        else:
            sys.stdout.write(render_text(result, sys.stdout))
        raise typer.Exit(result.exit_code)
