"""`compat record`: this machine's NVML answers as a replayable profile, to attach to a bug report."""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Optional

import typer

from compat.errors import EXIT_INCOMPATIBLE, EXIT_OK, InputError


def register(app: typer.Typer) -> None:
    @app.command("record")
    def record_cmd(
        out: Optional[str] = typer.Option(
            None, "--out", metavar="FILE", help="Write the profile to FILE (default: stdout)."
        ),
        timeout: float = typer.Option(
            30.0,
            "--timeout",
            metavar="S",
            help="Seconds the NVML capture may take (it runs in a child process).",
        ),
    ) -> None:
        """Record every NVML answer compat uses (UUIDs replaced, no serials or host names) as a profile that the
        test suite's fake NVML library replays; attach it to a bug report.

        Example: compat record --out gpu-profile.json
        """
        if not (timeout > 0 and math.isfinite(timeout)) or timeout > 600:
            raise InputError(f"--timeout must be a number of seconds between 0 and 600, got {timeout:g}")
        if out is not None:
            parent = os.path.dirname(os.path.abspath(out))
            if not os.path.isdir(parent):
                raise InputError(f"--out {out!r}: directory {parent!r} does not exist")
        from compat.probes.nvml_profile import profile

        doc, why = profile(timeout)
        if doc is None:
            sys.stderr.write(f"compat: record: {why}\n")
            raise typer.Exit(EXIT_INCOMPATIBLE)
        text = json.dumps(doc, indent=1, sort_keys=False, ensure_ascii=True) + "\n"
        if out is None:
            sys.stdout.write(text)
        else:
            try:
                with open(out, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as exc:
                raise InputError(f"--out {out!r}: {exc.strerror or exc}") from None
            n = len(doc.get("devices") or [])
            sys.stderr.write(f"compat: recorded {n} GPU(s) to {out}\n")
        raise typer.Exit(EXIT_OK)
