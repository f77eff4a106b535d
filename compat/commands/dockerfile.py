"""`compat dockerfile`: catch a broken GPU image before it is built."""

from __future__ import annotations

import os
from typing import List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FAIL_ON_OPT,
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    MATRIX_OPT,
    SELECT_OPT,
    SHOW_SKIPPED_OPT,
    emit_report,
    load,
    options,
)
from compat.errors import InputError


def parse_build_args(items: list[str], environ: Optional[dict[str, str]] = None) -> dict[str, str]:
    """`K=V` pairs; a bare `K` takes K from the environment, as `docker build --build-arg K` does."""
    env = dict(os.environ) if environ is None else environ
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not key.strip() or not key.replace("_", "a").isalnum() or key[0].isdigit():
            raise InputError(f"--build-arg {item!r}: expected NAME=VALUE")
        if not eq:
            if key not in env:
                raise InputError(
                    f"--build-arg {item!r} has no '=' and {key} is not set in the environment "
                    "(expected NAME=VALUE)"
                )
            value = env[key]
        out[key] = value
    return out


def register(app: typer.Typer) -> None:
    @app.command("dockerfile")
    def dockerfile(
        path: str = typer.Argument(..., metavar="PATH", help="The Dockerfile (or a directory holding one)."),
        target_driver: Optional[str] = typer.Option(
            None,
            "--target-driver",
            metavar="V",
            help="NVIDIA driver of the machines that will run the image (or a branch: 570, its first release).",
        ),
        target_gpu: Optional[str] = typer.Option(
            None, "--target-gpu", metavar="NAME", help="GPU the image will run on."
        ),
        target_cc: Optional[str] = typer.Option(
            None,
            "--target-cc",
            metavar="X.Y",
            help="Compute capability of that GPU (instead of --target-gpu).",
        ),
        build_arg: List[str] = typer.Option(  # noqa: UP006
            [], "--build-arg", metavar="K=V", help="As for docker build; repeatable."
        ),
        context: Optional[str] = typer.Option(
            None,
            "--context",
            metavar="DIR",
            help="Build context for COPY'd requirements files (default: PATH's folder).",
        ),
        json_out: bool = JSON_OPT,
        show_skipped: bool = SHOW_SKIPPED_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        fail_on: Optional[str] = FAIL_ON_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        matrix: Optional[str] = MATRIX_OPT,
    ) -> None:
        """Check a Dockerfile's CUDA / cuDNN / framework / Python stack without building it.

        Example: compat dockerfile Dockerfile --target-driver 535.104.05 --target-gpu A100
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        if target_gpu is not None and target_cc is not None:
            raise InputError("give --target-gpu or --target-cc, not both")
        args = parse_build_args(build_arg)
        from compat.facts import make_fact
        from compat.versions import parse_cc

        if target_driver is not None:
            make_fact("driver", target_driver, "--target-driver")
        if target_cc is not None:
            parse_cc(target_cc)
        m = load(matrix)
        if target_gpu is not None and m.gpu(target_gpu) is None:
            sugg = m.gpu_suggestions(target_gpu)
            hint = f"; did you mean: {', '.join(repr(s) for s in sugg)}" if sugg else ""
            raise InputError(
                f"unknown GPU {target_gpu!r}{hint} (or give its compute capability with --target-cc X.Y)"
            )
        from compat.dockerfile import check_dockerfile

        report = check_dockerfile(
            path,
            m,
            target_driver=target_driver,
            target_gpu=target_gpu,
            target_cc=target_cc,
            build_args=args,
            context=context,
        )
        shown = os.path.join(path, "Dockerfile") if os.path.isdir(path) else path
        raise typer.Exit(
            emit_report(
                report,
                opts,
                title=f"compat dockerfile {path}",
                kind="dockerfile",
                file=shown,
                show_skipped=show_skipped,
            )
        )
