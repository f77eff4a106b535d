"""`compat suggest`: what to install on this machine."""

from __future__ import annotations

from typing import Optional

import typer

from compat.commands.check import resolve_gpu_name
from compat.commands.common import FORMAT_OPT, JSON_OPT, MATRIX_OPT, emit_document, load, options
from compat.commands.values import OS_NAMES, choices
from compat.facts import Facts, apply_flags, apply_overrides, host_os, make_fact


def _live_facts(python: Optional[str]) -> Facts:
    """What is not given comes from this machine, where the live probes exist; the Python version from the
    interpreter of the active environment (`python`; None: compat's own)."""
    try:
        from compat.probes import gather_facts  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        from compat.installed import installed_facts

        return installed_facts()
    facts: Facts = gather_facts(python, frameworks=False)
    return facts


def register(app: typer.Typer) -> None:
    @app.command("suggest")
    def suggest_cmd(
        driver: Optional[str] = typer.Option(
            None, "--driver", metavar="V", help="NVIDIA driver version (or a branch: 535)."
        ),
        gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU name."),
        cc: Optional[str] = typer.Option(None, "--cc", metavar="X.Y", help="GPU compute capability."),
        python: Optional[str] = typer.Option(
            None,
            "--python",
            metavar="X.Y",
            help="Python version (default: that of the interpreter `compat doctor` inspects; see README, Which "
            "Python is inspected).",
        ),
        os_name: Optional[str] = typer.Option(
            None,
            "--os",
            metavar="linux|windows|macos",
            autocompletion=choices(OS_NAMES),
            help="linux, windows or macos (also win32, win, darwin, mac, osx).",
        ),
        no_probe: bool = typer.Option(
            False, "--no-probe", help="Do not fill missing facts from this machine."
        ),
        json_out: bool = JSON_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        matrix: Optional[str] = MATRIX_OPT,
    ) -> None:
        """Which PyTorch, TensorFlow and JAX to install here, with the exact command, and what blocks newer ones.

        Example: compat suggest --driver 535.104.05 --gpu "RTX 4090"
        """
        from compat.suggest import suggest
        from compat.suggest_document import SuggestionDocument

        opts = options(fmt, json_out)
        m = load(matrix)
        flags = {
            k: v
            for k, v in {"driver": driver, "gpu": gpu, "cc": cc, "python": python, "os": os_name}.items()
            if v is not None
        }
        resolve_gpu_name(m, gpu, cc)
        from compat.target import find_target

        target = None if no_probe else find_target(None)
        base = Facts() if target is None else apply_overrides(_live_facts(target.argument))
        # Only machine facts matter here: drop installed framework versions.
        base = Facts(
            values={k: v for k, v in base.values.items() if k in ("os", "python", "driver", "driver_cuda")},
            gpus=base.gpus,
            gpus_source=base.gpus_source,
        )
        if base.get("os") is None and "os" not in flags:
            base = base.with_values({"os": make_fact("os", host_os(), "this machine")})
        facts = apply_flags(base, flags)
        s = suggest(facts, m)
        doc = SuggestionDocument(s, facts.to_json(), interpreter=None if target is None else target.to_json())
        raise typer.Exit(emit_document(doc, opts))
