"""The smoke-training job: train a tiny CNN in an isolated child process and report whether the stack really trains.

run_smoke(options) -> SmokeResult runs it; smoke_findings(result) -> list[Finding] (group "smoke") is what the
doctor shows; SmokeResult.to_json() is the `compat smoke --json` document. Neither PyTorch nor TensorFlow is ever
imported in this process: the child scripts (_child_torch.py, _child_tf.py) do that.
"""

from __future__ import annotations

from compat.smoke.job import installed_here, run_smoke
from compat.smoke.report import render_text, smoke_findings
from compat.smoke.result import DEVICES, FRAMEWORKS, VERDICTS, SmokeOptions, SmokeResult
from compat.smoke.verdict import classify

__all__ = [
    "DEVICES",
    "FRAMEWORKS",
    "SmokeOptions",
    "SmokeResult",
    "VERDICTS",
    "classify",
    "installed_here",
    "render_text",
    "run_smoke",
    "smoke_findings",
]
