"""`compat k8s`: check Pod, Job and Deployment manifests for GPU workloads statically."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

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
from compat.errors import InputError

if TYPE_CHECKING:
    from compat.matrix import Matrix
    from compat.sources.images import DeploymentTarget


def target_from_options(
    m: Matrix, driver: Optional[str], gpu: Optional[str], cc: Optional[str]
) -> DeploymentTarget:
    """--target-driver / --target-gpu / --target-cc, validated (InputError: one line, exit 2)."""
    from compat.facts import make_fact
    from compat.sources.images import DeploymentTarget
    from compat.versions import parse_cc

    if gpu is not None and cc is not None:
        raise InputError("give --target-gpu or --target-cc, not both")
    if driver is not None:
        make_fact("driver", driver, "--target-driver")
    if cc is not None:
        parse_cc(cc)
    if gpu is not None and m.gpu(gpu) is None:
        sugg = m.gpu_suggestions(gpu)
        hint = f"; did you mean: {', '.join(repr(s) for s in sugg)}" if sugg else ""
        raise InputError(f"unknown GPU {gpu!r}{hint} (or give its compute capability with --target-cc X.Y)")
    return DeploymentTarget(driver=driver, gpu=gpu, cc=cc)


def register(app: typer.Typer) -> None:
    @app.command("k8s")
    def k8s(
        paths: List[str] = typer.Argument(  # noqa: UP006
            ..., metavar="FILE...", help="Kubernetes manifests (multi-document YAML)."
        ),
        target_driver: Optional[str] = typer.Option(
            None, "--target-driver", metavar="V", help="NVIDIA driver of the nodes."
        ),
        target_gpu: Optional[str] = typer.Option(
            None,
            "--target-gpu",
            metavar="NAME",
            help="GPU of the nodes (default: the manifest's node selector).",
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
        """Check Kubernetes workloads: nvidia.com/gpu limits, /dev/shm, GPU node selectors and the images' needs.

        Example: compat k8s deploy/ --target-driver 550.54.15
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        m = load(matrix)
        target = target_from_options(m, target_driver, target_gpu, target_cc)
        from compat.sources.k8s import check_k8s

        report = check_k8s(paths, m, target)
        raise typer.Exit(emit_report(report, opts, title=f"compat k8s {' '.join(paths)}", kind="k8s"))
