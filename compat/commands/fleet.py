"""`compat fleet`: the doctor on every node of a Ray cluster; `compat fleet merge`: the same from report files."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any, Optional

import typer

from compat.commands.common import FAIL_ON_OPT, JSON_OPT, check_fail_on
from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK, InputError

DEFAULT_TIMEOUT = 180.0


def _emit(doc: Mapping[str, Any], *, json_out: bool, fail_on: str) -> int:
    from compat.fleet.report import at_or_above, render_text

    if json_out:
        from compat.render import dumps

        sys.stdout.write(dumps(doc) + "\n")
    else:
        sys.stdout.write(render_text(doc, sys.stdout))
    return EXIT_INCOMPATIBLE if at_or_above(doc, fail_on) else EXIT_OK


def register(app: typer.Typer) -> None:
    fleet_app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)

    @fleet_app.callback(invoke_without_command=True)
    def fleet(
        ctx: typer.Context,
        address: Optional[str] = typer.Option(
            None,
            "--address",
            metavar="auto|ray://HOST:PORT",
            help="The Ray cluster (default: $RAY_ADDRESS, else auto: the cluster this machine belongs to).",
        ),
        smoke: bool = typer.Option(
            False, "--smoke", help="Also run the smoke-training job on every node (its GPUs are requested)."
        ),
        json_out: bool = JSON_OPT,
        timeout: float = typer.Option(
            DEFAULT_TIMEOUT,
            "--timeout",
            metavar="S",
            help="Seconds to wait for every node; nodes silent by then are unreachable.",
        ),
        fail_on: str = FAIL_ON_OPT,
    ) -> None:
        """Run `compat doctor` on every node of a Ray cluster: stacks grouped, drift from the majority, sick GPUs.

        Reports gathered another way (Slurm, Kubernetes jobs): `compat fleet merge REPORT.json ...`.

        Example: compat fleet --address auto --json > fleet.json
        """
        if ctx.invoked_subcommand is not None:
            return
        check_fail_on(fail_on)
        if not (timeout > 0 and math.isfinite(timeout)):
            raise InputError(f"--timeout must be a positive number of seconds, got {timeout:g}")
        from compat.fleet.cluster import collect
        from compat.fleet.report import build_fleet
        from compat.progress import Progress

        with Progress(f"compat fleet: running compat doctor on every node (timeout {timeout:g} s)"):
            inputs, extra = collect(address, smoke=smoke, timeout=timeout)
        doc = build_fleet(inputs, source="ray", extra=extra)
        raise typer.Exit(_emit(doc, json_out=json_out, fail_on=fail_on))

    @fleet_app.command("merge")
    def merge(
        reports: list[str] = typer.Argument(
            ...,
            metavar="REPORT.json",
            help="Files of `compat doctor --json` output (one or more documents each).",
        ),
        json_out: bool = JSON_OPT,
        fail_on: str = FAIL_ON_OPT,
    ) -> None:
        """Build the fleet report from doctor reports collected any other way.

        Slurm: srun --ntasks-per-node=1 --output='reports/%N.json' --error='reports/%N.err' compat doctor --json
        --no-smoke, then compat fleet merge reports/*.json. A node reported twice is a warning (the first report
        is used); a malformed file is an error (exit 2).

        Example: compat fleet merge reports/*.json
        """
        check_fail_on(fail_on)
        from compat.fleet.merge import merge_inputs
        from compat.fleet.report import build_fleet

        inputs, duplicates = merge_inputs(reports)
        doc = build_fleet(inputs, source="files", duplicates=duplicates)
        raise typer.Exit(_emit(doc, json_out=json_out, fail_on=fail_on))

    app.add_typer(
        fleet_app,
        name="fleet",
        help="Check every node of a GPU cluster (Ray, or merged doctor reports): drift, sick GPUs, failed smokes."
        "\n\nExample: compat fleet --address auto --json > fleet.json",
    )
