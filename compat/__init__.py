"""compat: tells you whether your GPU stack can train, and why not.

`import compat` stays light: no framework, typer, rich, yaml or pynvml is imported here.
"""

from __future__ import annotations

from compat.about import __version__
from compat.errors import CompatWarning, IncompatibleEnvironment

TYPE_CHECKING = False  # `from typing import TYPE_CHECKING` would import typing: milliseconds at start-up

__all__ = ["CompatWarning", "IncompatibleEnvironment", "__version__", "guard"]

if TYPE_CHECKING:
    from compat.startup import guard as guard
else:

    def guard(*args, **kwargs):
        """Check this environment at start-up; see compat.startup.guard for the options."""
        from compat.startup import guard as _guard

        return _guard(*args, **kwargs)


def load_ipython_extension(ipython):  # type: ignore[no-untyped-def]
    """`%load_ext compat`: say why the previous kernel died, then watch this one (see compat.record.notebook)."""
    from compat.record.notebook import load

    load(ipython)
