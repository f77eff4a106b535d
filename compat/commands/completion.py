"""`compat completion SHELL`: the tab-completion script for bash, zsh, fish or PowerShell (typer's)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from compat.commands.values import SHELLS, choices
from compat.errors import EXIT_OK, InputError


def completion_script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    from compat.cli import COMPLETE_VAR

    return get_completion_script(prog_name="compat", complete_var=COMPLETE_VAR, shell=shell) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("completion")
    def completion(
        shell: Optional[str] = typer.Argument(
            None,
            metavar="SHELL",
            autocompletion=choices(SHELLS),
            help="bash, zsh, fish, powershell or pwsh (default: $SHELL's name).",
        ),
    ) -> None:
        """Print the shell completion script for bash, zsh, fish or PowerShell.

        Example: eval "$(compat completion bash)"   (or add that line to ~/.bashrc; zsh: ~/.zshrc)
        """
        import os

        name = (shell or os.path.basename(os.environ.get("SHELL", ""))).strip().lower()
        if name not in SHELLS:
            got = f"got {shell!r}" if shell else "and $SHELL does not name one"
            raise InputError(f"give the shell: one of {', '.join(SHELLS)} ({got})")
        sys.stdout.write(completion_script(name))
        raise typer.Exit(EXIT_OK)
