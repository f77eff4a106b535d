"""How a framework probe's child interpreter ended, in one sentence: the probe and the doctor's checks word it alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def describe_child(child: Mapping[str, Any]) -> str:
    """One sentence: how the child ended."""
    doc = child.get("result") or {}
    stage = doc.get("stage")
    where = f" (during {stage})" if stage and stage not in ("done", "start") else ""
    st = child.get("status")
    if st == "timeout":
        return f"did not finish within {child.get('timeout', 0):g} s and was killed{where}"
    if st == "crashed":
        return f"crashed with {child.get('signal')}{where}"
    if st == "import-error":
        return f"failed: {doc.get('error')}"
    if st == "not-run":
        return f"could not be started: {child.get('describe')}"
    if st == "failed":
        from compat._proc import (
            first_line,  # only here: reading a snapshot's checks starts no process machinery
        )

        first = first_line(str(child.get("output") or ""))
        return f"exited with status {child.get('returncode')}{where}" + (f": {first}" if first else "")
    return "ran"
