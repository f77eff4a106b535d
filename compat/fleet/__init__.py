"""`compat fleet`: check every node of a cluster, group them by stack, call out drift and sick GPUs.

compat.fleet.report builds the fleet report from what each node said (pure); compat.fleet.cluster gathers it
on Ray (an optional extra, imported lazily); compat.fleet.merge reads doctor reports collected any other way.
Importing this package imports neither Ray nor anything heavy.
"""

from __future__ import annotations

from compat.fleet.report import NodeInput, build_fleet, render_text

__all__ = ["NodeInput", "build_fleet", "render_text"]
