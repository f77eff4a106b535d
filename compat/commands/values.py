"""What tab completion offers for an option's value: its fixed choices, or the check ids for --select/--ignore."""

from __future__ import annotations

from collections.abc import Callable, Sequence

Completer = Callable[[str], list[str]]


def choices(values: Sequence[str]) -> Completer:
    """A completer offering `values` (in the order given) that start with what was typed."""

    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


def check_ids() -> list[str]:
    """Every finding id the check registry declares, and each family prefix (`driver`, `gpu`, ...), sorted."""
    from compat import resolver  # noqa: F401  # registers the resolver's checks
    from compat.checks import doctor  # noqa: F401  # and the doctor's
    from compat.checks.registry import declared_ids

    ids = set(declared_ids())
    ids |= {i.split(".", 1)[0] for i in ids}
    return sorted(ids)


def complete_ids(incomplete: str) -> list[str]:
    """`--select driver,gp<Tab>`: the value is a comma-separated list, so only its last item is completed."""
    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    return [prefix + i for i in check_ids() if i.startswith(last)]


# The option value sets, named once here so that the options and the completion agree.
FORMATS = ("text", "json", "markdown", "sarif", "github")
FAIL_ON = ("error", "warning")
OS_NAMES = ("linux", "windows", "macos")
SMOKE_FRAMEWORKS = ("auto", "torch", "tensorflow", "jax")
SMOKE_DEVICES = ("auto", "cuda", "cpu")
COLOR_MODES = ("auto", "always", "never")
SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
