"""The smoke job's options and its result document (a public contract: `compat smoke --json`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Optional

from compat._valueclass import valueclass
from compat.errors import InputError
from compat.findings import Fix
from compat.schema_version import SCHEMA_VERSION

FRAMEWORKS = ("auto", "torch", "tensorflow", "jax")
DEVICES = ("auto", "cuda", "cpu")
VERDICTS = ("passed", "failed", "crashed", "timed_out", "skipped")
DEFAULT_STEPS = 20
DEFAULT_BATCH = 32
DEFAULT_TIMEOUT = 300.0


@valueclass
class SmokeOptions:
    """What to run: the `compat smoke` flags (the doctor builds one with its own defaults)."""

    framework: str = "auto"
    """auto (PyTorch if installed, else TensorFlow), torch or tensorflow."""
    device: str = "auto"
    """auto (the GPU when the framework sees one, else the CPU), cuda or cpu."""
    steps: int = DEFAULT_STEPS
    batch_size: int = DEFAULT_BATCH
    amp: bool = False
    """Mixed precision: bf16 where the device supports it, else fp16 with a loss scaler."""
    find_max_batch: bool = False
    """Double the batch size until the GPU runs out of memory (GPUs only, unless max_batch_cap is set)."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds for the whole child process, start-up and import included."""
    python: Optional[str] = None
    """Run the child with this interpreter instead of the current one."""
    max_batch_cap: int = 0
    """Stop --find-max-batch at this batch size; a cap also lets it run on the CPU (bounded, so the host's
    RAM is never eaten). Not a command-line flag."""
    compare: str = "auto"
    """Forward pass vs the CPU: auto (on a GPU), always, never. Not a command-line flag."""

    def validate(self) -> SmokeOptions:
        """Raise InputError (exit 2, one line) for a bad value; return self."""
        if self.framework not in FRAMEWORKS:
            raise InputError(f"--framework must be one of {', '.join(FRAMEWORKS)}, got {self.framework!r}")
        if self.device not in DEVICES:
            raise InputError(f"--device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if self.steps < 2:
            raise InputError(
                f"--steps must be at least 2 (the loss has to be seen to decrease), got {self.steps}"
            )
        if self.batch_size < 1:
            raise InputError(f"--batch-size must be at least 1, got {self.batch_size}")
        if not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise InputError(f"--timeout must be a positive number of seconds, got {self.timeout:g}")
        if self.max_batch_cap < 0:
            raise InputError(f"max_batch_cap must be 0 (none) or positive, got {self.max_batch_cap}")
        if self.compare not in ("auto", "always", "never"):
            raise InputError(f"compare must be auto, always or never, got {self.compare!r}")
        if self.python is not None and not (os.path.isfile(self.python) and os.access(self.python, os.X_OK)):
            raise InputError(f"--python {self.python!r} is not an executable file")
        return self


@valueclass
class SmokeResult:
    """The verdict of one smoke run. to_json() is the `compat smoke --json` document."""

    verdict: str
    """One of VERDICTS: passed, failed, crashed, timed_out or skipped (the JSON "status")."""
    framework: Optional[str]
    framework_version: Optional[str] = None
    device: Optional[str] = None
    """cuda or cpu: where it really ran."""
    device_name: Optional[str] = None
    steps: int = 0
    """Steps completed."""
    loss_first: Optional[float] = None
    loss_last: Optional[float] = None
    seconds: float = 0.0
    """Time to verdict, as the parent saw it (child start-up and framework import included)."""
    samples_per_second: Optional[float] = None
    """Training throughput over the steady-state steps (the first step, with its warm-up, left out)."""
    peak_memory_bytes: Optional[int] = None
    """GPU: the framework's peak allocation; CPU: the child's peak resident set size."""
    cudnn_used: Optional[bool] = None
    """None when the run ended before the device was chosen."""
    max_batch: Optional[int] = None
    """With find_max_batch on a GPU: the largest batch that fit."""
    signal: Optional[str] = None
    """The signal that killed the child (SIGSEGV, SIGABRT, SIGKILL ...)."""
    cause: Optional[str] = None
    """A `compat explain` category (gpu_oom, arch_not_supported, segfault, host_oom ...) when one is known."""
    message: str = ""
    fixes: tuple[Fix, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    """Further keys of the document: timings, losses, stage, amp, compare, requested_framework ..."""

    @property
    def exit_code(self) -> int:
        """0 passed; 1 failed, crashed, timed out, or an explicitly requested framework missing; 0 otherwise."""
        if self.verdict == "passed":
            return 0
        if self.verdict == "skipped":
            return 1 if self.details.get("requested_framework", "auto") != "auto" else 0
        return 1

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {k: v for k, v in self.details.items()}
        doc.update(
            {
                "schema_version": SCHEMA_VERSION,
                "status": self.verdict,
                "framework": self.framework,
                "framework_version": self.framework_version,
                "device": self.device,
                "device_name": self.device_name,
                "steps": self.steps,
                "loss_first": self.loss_first,
                "loss_last": self.loss_last,
                "seconds": round(self.seconds, 3),
                "samples_per_second": None
                if self.samples_per_second is None
                else round(self.samples_per_second, 1),
                "peak_memory_bytes": self.peak_memory_bytes,
                "cudnn_used": self.cudnn_used,
                "max_batch": self.max_batch,
                "signal": self.signal,
                "cause": self.cause,
                "message": self.message,
                "fixes": [f.to_json() for f in self.fixes],
            }
        )
        return doc
