"""`compat fleet`: the doctor on every node of a Ray cluster; `compat fleet merge`: the same from report files."""

from __future__ import annotations

import math
from typing import List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FAIL_ON_OPT,
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    SELECT_OPT,
    emit_document,
    options,
)
from compat.commands.values import choices
from compat.errors import InputError

DEFAULT_TIMEOUT = 180.0


def register(app: typer.Typer) -> None:
    fleet_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)

    @fleet_app.callback(invoke_without_command=True)
    def fleet(
        ctx: typer.Context,
        address: Optional[str] = typer.Option(
            None,
            "--address",
            metavar="auto|ray://HOST:PORT",
            autocompletion=choices(("auto", "ray://")),
            help="The Ray cluster (default: $RAY_ADDRESS, else auto: the cluster this machine belongs to).",
        ),
        smoke: bool = typer.Option(
            False, "--smoke", help="Also run the smoke-training job on every node (its GPUs are requested)."
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        timeout: float = typer.Option(
            DEFAULT_TIMEOUT,
            "--timeout",
            metavar="S",
            help="Seconds to wait for every node; nodes silent by then are unreachable.",
        ),
        fail_on: Optional[str] = FAIL_ON_OPT,
    ) -> None:
        """Run `compat doctor` on every node of a Ray cluster: stacks grouped, drift from the majority, sick GPUs.

        Reports gathered another way (Slurm, Kubernetes jobs): `compat fleet merge REPORT.json ...`.

        Example: compat fleet --address auto --json > fleet.json
        """
        if ctx.invoked_subcommand is not None:
            return
        opts = options(fmt, json_out, fail_on, select, ignore)
        if not (timeout > 0 and math.isfinite(timeout)):
            raise InputError(f"--timeout must be a positive number of seconds, got {timeout:g}")
        from compat.fleet.cluster import collect
        from compat.fleet.document import FleetDocument
        from compat.fleet.report import build_fleet
        from compat.output.options import select_nodes
        from compat.progress import Progress

        with Progress(f"compat fleet: running compat doctor on every node (timeout {timeout:g} s)"):
            inputs, extra = collect(address, smoke=smoke, timeout=timeout)
        doc = build_fleet(select_nodes(inputs, opts), source="ray", extra=extra)
        raise typer.Exit(emit_document(FleetDocument(doc), opts))

    @fleet_app.command("merge")
    def merge(
        reports: list[str] = typer.Argument(
            ...,
            metavar="REPORT.json",
            help="Files of `compat doctor --json` output (one or more documents each).",
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        fail_on: Optional[str] = FAIL_ON_OPT,
    ) -> None:
        """Build the fleet report from doctor reports collected any other way.

        Slurm: srun --ntasks-per-node=1 --output='reports/%N.json' --error='reports/%N.err' compat doctor --json
        --no-smoke, then compat fleet merge reports/*.json. A node reported twice is a warning (the first report
        is used); a malformed file is an error (exit 2).

        Example: compat fleet merge reports/*.json
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        from compat.fleet.merge import merge_inputs
        from compat.fleet.report import build_fleet

        inputs, duplicates = merge_inputs(reports)
        from compat.fleet.document import FleetDocument
        from compat.output.options import select_nodes

        doc = build_fleet(select_nodes(inputs, opts), source="files", duplicates=duplicates)
        raise typer.Exit(emit_document(FleetDocument(doc, merge=True), opts))

    app.add_typer(
        fleet_app,
        name="fleet",
        help="Check every node of a GPU cluster (Ray, or merged doctor reports): drift, sick GPUs, failed smokes."
        "\n\nExample: compat fleet --address auto --json > fleet.json",
    )
