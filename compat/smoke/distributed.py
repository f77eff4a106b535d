"""`compat smoke --distributed`: a short DistributedDataParallel run across the local GPUs (NCCL), or 2 CPU ranks (gloo).

run_distributed(nproc, device, timeout, steps) -> dict runs _child_ddp.py (a launcher that starts one process per
rank) through the smoke job's harness: its own session, one deadline, the whole process group killed at the end,
so no rank outlives the run. The launcher's verdict names every rank's outcome; here it becomes the smoke result
document (schema_version 1) plus "world_size", "backend" and "ranks", and a failure is classified: a rank that
died, a collective that timed out, an NCCL error (compat.explain's nccl_distributed signatures), or the root cause
one rank hit (out of memory, a hardware fault ...). torch is never imported in this process.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Optional

from compat import _proc
from compat.errors import InputError
from compat.smoke import harness
from compat.smoke.distributed_classify import classify
from compat.smoke.result import DEVICES, SmokeResult

CHILD = Path(__file__).resolve().parent / "_child_ddp.py"
DEFAULT_STEPS = 5
DEFAULT_BATCH = 32
DEFAULT_TIMEOUT = 300.0
MAX_NPROC = 64
CPU_RANKS = 2

ChildArgv = Callable[[Path, Path, float], Sequence[str]]
"""(result path, work directory, t0) -> argv of the launcher. Tests inject stand-ins through it."""


def budgets(timeout: float) -> dict[str, float]:
    """How the whole run's seconds are split: the launcher's deadline comes before the harness kills it, a
    collective gives up (pg_timeout) well before that, and after a rank died the others get `grace` seconds."""
    margin = min(10.0, max(2.0, 0.1 * timeout))
    pg = min(120.0, max(5.0, 0.4 * timeout))
    return {"deadline": max(1.0, timeout - margin), "pg_timeout": pg, "grace": min(10.0, max(2.0, 0.25 * pg))}


def validate(
    nproc: Optional[int], device: str, timeout: float, steps: int, batch_size: int = DEFAULT_BATCH
) -> None:
    if nproc is not None and not 1 <= nproc <= MAX_NPROC:
        raise InputError(f"--nproc must be between 1 and {MAX_NPROC}, got {nproc}")
    if device not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if steps < 2:
        raise InputError(f"--steps must be at least 2 (the loss has to be seen to decrease), got {steps}")
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise InputError(f"--timeout must be a positive number of seconds, got {timeout:g}")


def default_argv(
    python: str,
    nproc: Optional[int],
    device: str,
    steps: int,
    timeout: float,
    batch_size: int = DEFAULT_BATCH,
) -> ChildArgv:
    b = budgets(timeout)

    def build(result: Path, workdir: Path, t0: float) -> list[str]:
        return [
            python,
            "-X",
            "faulthandler",
            str(CHILD),
            "--out",
            str(result),
            "--workdir",
            str(workdir),
            "--device",
            device,
            "--steps",
            str(steps),
            "--batch-size",
            str(batch_size),
            "--nproc",
            str(nproc or 0),
            "--deadline",
            repr(b["deadline"]),
            "--pg-timeout",
            repr(b["pg_timeout"]),
            "--grace",
            repr(b["grace"]),
            "--t0",
            repr(t0),
        ]

    return build


def run_distributed(
    nproc: Optional[int],
    device: str,
    timeout: float,
    steps: int,
    *,
    python: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    child_argv: Optional[ChildArgv] = None,
    installed: Optional[Mapping[str, Optional[str]]] = None,
    grace: float = 3.0,
    batch_size: int = DEFAULT_BATCH,
) -> dict[str, Any]:
    """Run the distributed smoke job and return its result document. Never raises for what the ranks do.

    nproc: ranks (None: one per visible GPU, 2 on the CPU); device: auto, cuda or cpu. env, child_argv and
    installed replace the real ones (tests).
    """
    return run_distributed_result(
        nproc,
        device,
        timeout,
        steps,
        python=python,
        env=env,
        child_argv=child_argv,
        installed=installed,
        grace=grace,
        batch_size=batch_size,
    ).to_json()


def run_distributed_result(
    nproc: Optional[int],
    device: str,
    timeout: float,
    steps: int,
    *,
    python: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    child_argv: Optional[ChildArgv] = None,
    installed: Optional[Mapping[str, Optional[str]]] = None,
    grace: float = 3.0,
    batch_size: int = DEFAULT_BATCH,
) -> SmokeResult:
    """run_distributed, as a SmokeResult (for render_text and smoke_findings)."""
    validate(nproc, device, timeout, steps, batch_size)
    t_begin = time.monotonic()
    exe = python or sys.executable
    base: dict[str, Any] = {
        "distributed": True,
        "requested_framework": "torch",
        "requested_device": device,
        "requested_nproc": nproc,
        "batch_size": batch_size,
        "python": exe,
        "world_size": None,
        "backend": None,
        "ranks": [],
    }
    if installed is None:
        if python is not None:
            from compat.smoke.job import installed_in

            found, why = installed_in(python)
            if found is None:
                return SmokeResult(
                    "failed",
                    "torch",
                    seconds=time.monotonic() - t_begin,
                    message=f"could not inspect the interpreter: {why}",
                    details=base,
                )
            installed = found
        else:
            from compat.smoke.job import installed_here

            installed = installed_here()
    if not installed.get("torch"):
        from compat.smoke.job import INSTALL

        return SmokeResult(
            "skipped",
            "torch",
            seconds=time.monotonic() - t_begin,
            message=f"the distributed smoke job needs PyTorch, which is not installed for {exe}",
            fixes=(INSTALL["torch"],),
            details=base,
        )
    build = child_argv or default_argv(exe, nproc, device, steps, timeout, batch_size)
    workdir = Path(_proc.track_dir(tempfile.mkdtemp(prefix="compat-ddp-")))
    try:
        result_path = workdir / "result.json"
        argv = list(build(result_path, workdir, time.time()))
        run = harness.run_child(argv, result_path, timeout=timeout, env=env, cwd=str(workdir), grace=grace)
    finally:
        _proc.remove_dir(str(workdir))
    return classify(run, timeout=timeout, version=installed.get("torch"), base=base, t_begin=t_begin)


# ------------------------------------------------------------------------------------------------ output


def exit_code(doc: Mapping[str, Any]) -> int:
    """0 passed; 1 otherwise (PyTorch missing included: the distributed job was asked for explicitly)."""
    return 0 if doc.get("status") == "passed" else 1


def render_text(result: SmokeResult, stream: Optional[IO[str]] = None) -> str:
    """`compat smoke --distributed` without --json: the smoke job's text plus one line per rank."""
    from compat.render import Style, use_color
    from compat.smoke.report import render_text as smoke_text

    out = stream or sys.stdout
    st = Style(use_color(out))
    text = smoke_text(result, stream).rstrip("\n")
    head, _, rest = text.partition("\n")
    world = result.details.get("world_size")
    if world:
        head += f"  ·  {world} ranks, {result.details.get('backend')}"
    lines = [head] + ([rest] if rest else [])
    ranks = result.details.get("ranks") or []
    if ranks:
        lines.append("")
        lines.append(st("Ranks", "bold"))
        for e in ranks:
            kind = "ok" if e.get("status") == "passed" else "error"
            what = (
                f"loss {e['loss_first']:.4g} → {e['loss_last']:.4g}"
                if (
                    e.get("status") == "passed"
                    and e.get("loss_first") is not None
                    and e.get("loss_last") is not None
                )
                else (e.get("message") or "")
            )
            extra = f" [{e['cause']}]" if e.get("cause") else ""
            lines.append(
                f"  rank {e.get('rank')}: {st(str(e.get('status')).upper().replace('_', ' '), kind)}  "
                f"{what}{extra}".rstrip()
            )
    return "\n".join(lines) + "\n"


__all__ = [
    "DEFAULT_STEPS",
    "DEFAULT_TIMEOUT",
    "budgets",
    "classify",
    "exit_code",
    "render_text",
    "run_distributed",
    "run_distributed_result",
    "validate",
]
