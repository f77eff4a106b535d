"""`compat smoke`: train a tiny CNN in an isolated child process and say whether the stack really trains."""

from __future__ import annotations

from typing import Optional

import typer

from compat.commands.common import FORMAT_OPT, JSON_OPT, emit_document
from compat.commands.common import options as output_options
from compat.commands.values import SMOKE_DEVICES, SMOKE_FRAMEWORKS, choices
from compat.smoke.result import DEFAULT_BATCH, DEFAULT_STEPS, DEFAULT_TIMEOUT


def register(app: typer.Typer) -> None:
    @app.command("smoke")
    def smoke(
        framework: str = typer.Option(
            "auto",
            "--framework",
            metavar="auto|torch|tensorflow|jax",
            autocompletion=choices(SMOKE_FRAMEWORKS),
            help="Framework to train with (auto: PyTorch if installed, else TensorFlow, else JAX).",
        ),
        device: str = typer.Option(
            "auto",
            "--device",
            metavar="auto|cuda|cpu",
            autocompletion=choices(SMOKE_DEVICES),
            help="Where to train (auto: the GPU when the framework sees one).",
        ),
        steps: int = typer.Option(DEFAULT_STEPS, "--steps", metavar="N", help="Training steps (at least 2)."),
        batch_size: int = typer.Option(DEFAULT_BATCH, "--batch-size", metavar="N", help="Batch size."),
        amp: bool = typer.Option(
            False, "--amp", help="Mixed precision: bf16 where supported, else fp16 with a scaler."
        ),
        find_max_batch: bool = typer.Option(
            False,
            "--find-max-batch",
            help="Double the batch size until the GPU runs out of memory (GPUs only).",
        ),
        timeout: float = typer.Option(
            DEFAULT_TIMEOUT,
            "--timeout",
            metavar="S",
            help="Seconds before the child's whole process group is killed.",
        ),
        python: Optional[str] = typer.Option(
            None,
            "--python",
            metavar="PATH",
            help="Train with this interpreter (default: as `compat doctor` chooses; see README, Which Python is "
            "inspected).",
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        distributed: bool = typer.Option(
            False,
            "--distributed",
            help="DistributedDataParallel across all local GPUs (NCCL), one process per rank; 2 CPU ranks (gloo) "
            "when there is no GPU.",
        ),
        nproc: Optional[int] = typer.Option(
            None,
            "--nproc",
            metavar="N",
            help="With --distributed: ranks to start (default: one per GPU, 2 on CPU).",
        ),
    ) -> None:
        """Train a tiny CNN for a few steps in an isolated child process: a crash is a diagnosis, not a dead terminal.

        Example: compat smoke --framework torch --device cuda --amp
        """
        from compat.errors import InputError
        from compat.smoke import SmokeOptions, run_smoke
        from compat.smoke.document import SmokeDocument
        from compat.target import find_target

        opts = output_options(fmt, json_out)
        target = find_target(python, note=True)
        python = target.argument

        if distributed:
            from compat.smoke.distributed import run_distributed_result

            if framework not in ("auto", "torch"):
                raise InputError("--distributed trains with PyTorch: use --framework torch (or auto)")
            if amp or find_max_batch:
                raise InputError("--amp and --find-max-batch do not apply to --distributed")
            from compat.progress import Progress

            with Progress(f"compat smoke: distributed training ({device}; timeout {timeout:g} s)"):
                dist = run_distributed_result(
                    nproc, device, timeout, steps, python=python, batch_size=batch_size
                )
            raise typer.Exit(
                emit_document(SmokeDocument(dist, distributed=True, interpreter=target.to_json()), opts)
            )
        if nproc is not None:
            raise InputError("--nproc needs --distributed")

        options = SmokeOptions(
            framework=framework,
            device=device,
            steps=steps,
            batch_size=batch_size,
            amp=amp,
            find_max_batch=find_max_batch,
            timeout=timeout,
            python=python,
        ).validate()
        from compat.progress import Progress

        what = "searching the largest batch" if find_max_batch else "training a tiny CNN"
        with Progress(f"compat smoke: {what} ({framework}, {device}; timeout {timeout:g} s)"):
            result = run_smoke(options)
        raise typer.Exit(emit_document(SmokeDocument(result, interpreter=target.to_json()), opts))
