"""`compat compose`: check the GPU services of Compose files (and the Dockerfiles they build) statically."""

from __future__ import annotations

from typing import List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FAIL_ON_OPT,
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    MATRIX_OPT,
    SELECT_OPT,
    emit_report,
    load,
    options,
)
from compat.commands.k8s import target_from_options


def register(app: typer.Typer) -> None:
    @app.command("compose")
    def compose(
        paths: List[str] = typer.Argument(  # noqa: UP006
            None,
            metavar="[FILE]...",
            help="Compose files or folders holding one (default: the current folder).",
        ),
        target_driver: Optional[str] = typer.Option(
            None, "--target-driver", metavar="V", help="NVIDIA driver of the machines that will run it."
        ),
        target_gpu: Optional[str] = typer.Option(
            None, "--target-gpu", metavar="NAME", help="GPU it will run on."
        ),
        target_cc: Optional[str] = typer.Option(
            None,
            "--target-cc",
            metavar="X.Y",
            help="Compute capability of that GPU (instead of --target-gpu).",
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        fail_on: Optional[str] = FAIL_ON_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        matrix: Optional[str] = MATRIX_OPT,
    ) -> None:
        """Check Compose files: GPU reservations, runtime, shared memory and the images each service builds.

        Example: compat compose docker-compose.yml --target-driver 550.54.15
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        m = load(matrix)
        target = target_from_options(m, target_driver, target_gpu, target_cc)
        from compat.sources.compose import check_compose

        files = list(paths or ["."])
        report = check_compose(files, m, target)
        raise typer.Exit(emit_report(report, opts, title=f"compat compose {' '.join(files)}", kind="compose"))
