"""The smoke job: pick the framework (without importing it), run the training child, turn what happened into a verdict."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Optional

from compat import _proc
from compat.distributions import providing
from compat.findings import Fix
from compat.smoke import causes, harness, oom
from compat.smoke.result import SmokeOptions, SmokeResult

HERE = Path(__file__).resolve().parent
CHILD_SCRIPTS = {
    "torch": HERE / "_child_torch.py",
    "tensorflow": HERE / "_child_tf.py",
    "jax": HERE / "_child_jax.py",
}
# Distributions that provide the `tensorflow` module (the one table: compat.distributions).
TF_DISTS = providing("tensorflow")
DISTS = {"torch": providing("torch"), "tensorflow": TF_DISTS, "jax": providing("jax")}
INSTALL = {
    # The wheel that fits this driver and GPU comes from the solver (issue 13): `compat suggest` names it.
    "torch": Fix(
        "Install PyTorch: compat suggest names the wheel for this driver and GPU, re-checked",
        "compat suggest",
    ),
    "tensorflow": Fix(
        "Install TensorFlow: compat suggest names the release for this driver and GPU (with its [and-cuda] "
        "extra on Linux), re-checked",
        "compat suggest",
    ),
    "jax": Fix(
        "Install JAX: compat suggest names the release and CUDA build (jax[cuda12] or jax[cuda13]) for this "
        "driver and GPU, re-checked",
        "compat suggest",
    ),
}
DETECT_TIMEOUT = 60.0
MISMATCH_FIXES = (
    Fix("Check the GPU's memory for ECC errors and retired pages", "nvidia-smi -q -d ECC,PAGE_RETIREMENT"),
    Fix("Run NVIDIA's GPU diagnostics", "dcgmi diag -r 2"),
    Fix("Look for Xid errors in the kernel log", "dmesg | grep -i xid"),
)

# Run in another interpreter (--python): which frameworks it has, by find_spec and metadata only.
DETECT_CODE = """
import importlib.util, json, sys
try:
    from importlib import metadata
except ImportError:
    metadata = None
out = {}
for mod, dists in %r:
    try:
        spec = importlib.util.find_spec(mod)
    except Exception:
        spec = None
    version = None
    if spec is not None:
        for d in dists:
            try:
                version = metadata.version(d)
                break
            except Exception:
                pass
        version = version or "unknown"
    out[mod] = version
sys.stdout.write("@@compat-detect " + json.dumps(out) + "\\n")
""" % (tuple(DISTS.items()),)

ChildArgv = Callable[[str, Path, float], Sequence[str]]
"""(framework, result path, t0) -> argv of the child. Tests inject stand-in children through it."""


def installed_here() -> dict[str, Optional[str]]:
    """framework -> installed version (or "unknown"), None when absent. Nothing is imported."""
    out: dict[str, Optional[str]] = {}
    for mod, dists in DISTS.items():
        try:
            spec = importlib.util.find_spec(mod)
        except (ImportError, ValueError):
            spec = None
        version = None
        if spec is not None:
            for d in dists:
                try:
                    version = metadata.version(d)
                    break
                except metadata.PackageNotFoundError:
                    continue
            version = version or "unknown"
        out[mod] = version
    return out


def installed_in(python: str) -> tuple[Optional[dict[str, Optional[str]]], str]:
    """Which frameworks another interpreter has: (mapping or None, why None)."""
    from compat._proc import run

    res = run([python, "-c", DETECT_CODE], DETECT_TIMEOUT)
    if res.status == "timeout":
        return None, f"{python} did not answer within {DETECT_TIMEOUT:g} s"
    if res.status in ("not-found", "error"):
        return None, f"{python} could not run: {res.error}"
    out = res.stdout
    for line in reversed(out.splitlines()):
        if line.startswith("@@compat-detect "):
            try:
                doc = json.loads(line.split(" ", 1)[1])
            except ValueError:
                break
            if isinstance(doc, dict):
                return {k: (str(v) if v is not None else None) for k, v in doc.items()}, ""
    err = res.stderr.strip().splitlines()
    return None, f"{python} exited {res.returncode}" + (f": {err[-1]}" if err else "")


def default_child_argv(python: str, options: SmokeOptions) -> ChildArgv:
    def build(framework: str, result_path: Path, t0: float) -> list[str]:
        argv = [
            python,
            "-X",
            "faulthandler",
            str(CHILD_SCRIPTS[framework]),
            "--out",
            str(result_path),
            "--device",
            options.device,
            "--steps",
            str(options.steps),
            "--batch-size",
            str(options.batch_size),
            "--compare",
            options.compare,
            "--t0",
            repr(t0),
        ]
        if options.amp:
            argv.append("--amp")
        if options.find_max_batch:
            argv.append("--find-max-batch")
        if options.max_batch_cap:
            argv += ["--max-batch-cap", str(options.max_batch_cap)]
        return argv

    return build


def run_smoke(
    options: SmokeOptions,
    *,
    child_argv: Optional[ChildArgv] = None,
    installed: Optional[Mapping[str, Optional[str]]] = None,
    env: Optional[Mapping[str, str]] = None,
    oom_counter: Callable[[], oom.OomCount] = oom.read_oom_count,
    kernel_log: Callable[[], tuple[Optional[str], str]] = oom.read_kernel_log,
    grace: float = 3.0,
    stalled: Optional[Callable[[float], bool]] = None,
) -> SmokeResult:
    """Run the smoke-training job in a child process and return its verdict. Never raises for what the child does.

    child_argv, installed, env, oom_counter and kernel_log replace the real ones (tests, other interpreters).
    """
    options.validate()
    t_begin = time.monotonic()
    python = options.python or sys.executable
    base: dict[str, Any] = {
        "requested_framework": options.framework,
        "requested_device": options.device,
        "batch_size": options.batch_size,
        "python": python,
    }
    if installed is None:
        # Not realpath: a virtual environment's python is a link to the base interpreter, with other packages.
        if options.python and os.path.abspath(options.python) != os.path.abspath(sys.executable):
            found, why = installed_in(options.python)
            if found is None:
                return SmokeResult(
                    "failed",
                    None if options.framework == "auto" else options.framework,
                    seconds=time.monotonic() - t_begin,
                    message=f"could not inspect the interpreter: {why}",
                    details=base,
                )
            installed = found
        else:
            installed = installed_here()
    if options.framework == "auto":
        framework = next((f for f in ("torch", "tensorflow", "jax") if installed.get(f)), None)
        if framework is None:
            return SmokeResult(
                "skipped",
                None,
                seconds=time.monotonic() - t_begin,
                message=f"no deep-learning framework is installed for {python} (no torch, tensorflow or "
                "jax): nothing to train",
                fixes=(INSTALL["torch"], INSTALL["tensorflow"]),
                details=base,
            )
    else:
        framework = options.framework
        if not installed.get(framework):
            return SmokeResult(
                "skipped",
                framework,
                seconds=time.monotonic() - t_begin,
                message=f"{framework} was asked for but is not installed for {python}",
                fixes=(INSTALL[framework],),
                details=base,
            )
    build = child_argv or default_child_argv(python, options)
    workdir = _proc.track_dir(tempfile.mkdtemp(prefix="compat-smoke-"))
    try:
        result_path = Path(workdir) / "result.json"
        argv = list(build(framework, result_path, time.time()))
        run = harness.run_child(
            argv,
            result_path,
            timeout=options.timeout,
            env=env,
            cwd=workdir,
            grace=grace,
            oom_counter=oom_counter,
            kernel_log=kernel_log,
            stalled=stalled,
        )
    finally:
        _proc.remove_dir(workdir)
    return classify(
        run,
        options=options,
        framework=framework,
        version=installed.get(framework),
        base=base,
        t_begin=t_begin,
    )


def _float(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _int(v: Any) -> Optional[int]:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _loss_value(v: Any) -> float:
    """A loss as the child wrote it: a number, or "nan"/"inf" for the values JSON cannot hold."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    try:
        return float(str(v))
    except ValueError:
        return math.nan


def _printable(line: str) -> str:
    """No control characters: a junk-writing child must not drive the user's terminal (escape sequences)."""
    return "".join(ch if ch.isprintable() or ch == "\t" else "\ufffd" for ch in line)


def _tail(text: str, lines: int = 30) -> str:
    kept = harness.strip_markers(text).rstrip().splitlines()
    return "\n".join(_printable(line)[:1000] for line in kept[-lines:])


def _timings(
    run: harness.ChildRun, child: Mapping[str, Any], child_end: Any, total: float
) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in (
        "child_start",
        "import",
        "device",
        "setup",
        "first_step",
        "steady_steps",
        "compare",
        "find_max_batch",
    ):
        v = _float(child.get(key))
        if v is not None:
            out[key] = v
    end = _float(child_end)
    if end is not None:
        out["child_exit"] = max(0.0, run.t_exit - end)
    out["total"] = total
    out["overhead"] = max(0.0, total - sum(v for k, v in out.items() if k not in ("total", "child_exit")))
    return {k: round(v, 4) for k, v in out.items()}


def classify(
    run: harness.ChildRun,
    *,
    options: SmokeOptions,
    framework: str,
    version: Optional[str],
    base: Mapping[str, Any],
    t_begin: float,
) -> SmokeResult:
    """Pure but for the clock: what the child run means."""
    r: dict[str, Any] = run.result if isinstance(run.result, dict) else {}
    child_status = r.get("status")
    if child_status not in ("passed", "failed", "running"):
        r, child_status = {}, None
    details: dict[str, Any] = dict(base)
    losses = _list(r.get("losses"))
    loss_values = [_loss_value(v) for v in losses]
    details["losses"] = [v if isinstance(v, (int, float, str)) else None for v in losses]
    for key in ("amp", "cudnn_version", "compute_capability", "cuda_build", "keras_version"):
        if r.get(key) is not None:
            details[key] = r[key]
    details["stage"] = run.stage
    if isinstance(r.get("compare"), dict):
        details["compare"] = r["compare"]
    max_batch = None
    if isinstance(r.get("max_batch"), dict):
        mb = r["max_batch"]
        max_batch = _int(mb.get("max_batch"))
        details["memory_per_sample_bytes"] = _int(mb.get("bytes_per_sample"))
        details["max_batch_search"] = {"stopped": mb.get("stopped"), "tried": mb.get("tried")}
    if options.find_max_batch and max_batch is None and r.get("device") == "cpu" and child_status is not None:
        details["max_batch_note"] = "--find-max-batch applies to GPUs only: not run on the CPU"
    if run.leftovers:
        details["leftover_processes"] = run.leftovers
    if run.oom is not None:
        details["oom_kill_confirmed"] = run.oom.confirmed
        details["oom_evidence"] = run.oom.evidence
    details["child_exit_code"] = run.returncode
    total = time.monotonic() - t_begin
    details["timings"] = _timings(run, _dict(r.get("timings")), r.get("child_end_time"), total)

    stage = run.stage or "start-up"
    error = _dict(r.get("error"))
    error_text = str(error.get("traceback") or error.get("text") or "")  # the traceback ends with the text
    stderr = harness.strip_markers(run.stderr)
    status: str
    message: str
    sig: Optional[str] = None
    cause: Optional[causes.Cause] = None
    fixes: tuple[Fix, ...] = ()

    if run.start_error is not None:
        status, message = "failed", f"the smoke child could not start: {run.start_error}"
    elif run.timed_out:
        status = "timed_out"
        message = (
            f"no verdict within {options.timeout:g} s: the child hung during {stage}; its process group was "
            "killed (SIGTERM, then SIGKILL)"
        )
        cause = causes.diagnose(error_text + "\n" + stderr)
        fixes = (
            Fix(
                "If the GPU or the framework is only slow to start (first CUDA use, kernel compilation), "
                "allow more time",
                f"compat smoke --timeout {max(600, int(options.timeout * 3))}",
            ),
        )
    elif run.signal is not None:
        status = "crashed"
        sig = harness.signal_name(run.signal)
        confirmed = run.oom.confirmed if run.oom is not None else None
        if sig == "SIGKILL":
            cause = causes.signal_cause(run.signal, confirmed) or causes.diagnose(error_text + "\n" + stderr)
            why = {
                True: "the kernel's OOM killer (" + (run.oom.evidence if run.oom else "") + ")",
                False: "not the OOM killer as far as the counters show ("
                + (run.oom.evidence if run.oom else "")
                + "): another process, a supervisor or a container limit",
                None: "possibly the kernel's OOM killer, which could not be confirmed ("
                + (run.oom.evidence if run.oom else "")
                + ")",
            }[confirmed]
            message = f"the smoke child was killed (SIGKILL) during {stage}: {why}"
        else:
            cause = causes.diagnose(error_text + "\n" + stderr) or causes.signal_cause(run.signal, None)
            message = f"the smoke child died of {sig} during {stage}"
    elif child_status is None:
        status = "failed"
        if run.returncode == 0:
            message = f"garbage output: the child exited 0 but {run.result_problem or 'wrote no verdict'}"
        else:
            message = (
                f"the child exited with code {run.returncode} during {stage} before writing a verdict"
                f" ({run.result_problem})"
            )
            cause = causes.diagnose(stderr)
        details["stdout_tail"] = _tail(run.stdout, 10)
    elif child_status == "failed":
        status = "failed"
        message = str(r.get("message") or "the training step failed")
        if error_text:
            cause = causes.diagnose(error_text + "\n" + stderr)
        if _dict(r.get("compare")).get("match") is False:
            fixes = MISMATCH_FIXES
    elif child_status == "running":
        status = "failed"
        message = f"the child exited with code {run.returncode} during {stage} without a verdict"
        cause = causes.diagnose(stderr)
    elif run.returncode != 0:
        status = "failed"
        message = f"the child reported success but exited with code {run.returncode}"
    else:
        status, message = "passed", ""
        ok, why = _losses_ok(loss_values)
        if not ok:  # the parent checks the child's claim too
            status, message = "failed", why

    if status == "passed":
        device = r.get("device")
        a, b = loss_values[0], loss_values[-1]
        message = (
            f"{framework} {r.get('framework_version') or version or ''} trained a tiny CNN for "
            f"{len(loss_values)} steps on {device}: loss {a:.4g} → {b:.4g}"
        ).replace("  ", " ")
    else:
        details["stderr_tail"] = _tail(run.stderr)
    if cause is not None:
        details["diagnosis"] = cause.to_json()
        fixes = cause.fixes + fixes
    if run.notes:
        details["notes"] = list(run.notes)
        flood = [n for n in run.notes if "output passed" in n]
        if flood and status != "passed":  # say why it was killed, in the text too (issue 19, item 11)
            message = f"{message}; {flood[0]}"

    peak = _int(r.get("peak_memory_bytes"))
    if peak is not None:
        details["peak_memory_kind"] = r.get("peak_memory_kind")
    cudnn = r.get("cudnn_used") if isinstance(r.get("cudnn_used"), bool) and r.get("device") else None
    return SmokeResult(
        status=status,
        framework=framework,
        framework_version=_str(r.get("framework_version")) or version,
        device=_str(r.get("device")),
        device_name=_str(r.get("device_name")),
        steps=_int(r.get("steps")) or len(loss_values),
        loss_first=_float(r.get("loss_first")) if loss_values else None,
        loss_last=_float(r.get("loss_last")) if loss_values else None,
        seconds=total,
        samples_per_second=_float(r.get("samples_per_second")),
        peak_memory_bytes=peak,
        cudnn_used=cudnn,
        max_batch=max_batch,
        signal=sig,
        cause=cause.category if cause is not None else None,
        message=message,
        fixes=fixes,
        details=details,
    )


def _losses_ok(losses: Sequence[float]) -> tuple[bool, str]:
    if len(losses) < 2:
        return False, "the child reported success but fewer than two losses"
    if not all(math.isfinite(v) for v in losses):
        return False, "the loss was not finite"
    if not losses[-1] < losses[0]:
        return False, f"the loss did not decrease ({losses[0]:.6g} → {losses[-1]:.6g})"
    return True, ""


def broken_by_probe(probes: Mapping[str, Any], framework: str = "auto") -> Optional[str]:
    """Why the doctor's smoke job must not run because its framework probe already found the import broken.

    A Python whose `import torch` hangs cost 141 s before (the 20 s import probe, then a 120 s smoke timeout on
    the same hang, issue 19 item 10): what a probe found broken is not retried. None when the smoke may run.
    """
    fw = probes.get("frameworks") if isinstance(probes, Mapping) else None
    if not isinstance(fw, Mapping):
        return None
    meta = fw.get("meta")
    if isinstance(meta, Mapping) and meta.get("status") in ("timeout", "crashed"):
        # The other interpreter itself hung or crashed at start-up: the smoke child would use it too.
        return f"{fw.get('error') or 'the interpreter did not start'}; the smoke job would fail the same way"
    children = fw.get("children")
    if not isinstance(children, Mapping):
        return None
    order = ("torch", "tensorflow", "jax") if framework == "auto" else (framework,)
    for name in order:
        child = children.get(name)
        if not isinstance(child, Mapping):
            continue
        status = child.get("status")
        if status in ("timeout", "crashed"):
            what = "hung" if status == "timeout" else f"crashed ({child.get('signal') or 'signal'})"
            return (
                f"the framework probe found `import {name}` {what}; the smoke job would fail the same way "
                "(see the frameworks findings)"
            )
        if status in ("ok", "import-error", "failed"):
            return None  # the framework the smoke job would pick answered: run it
    return None


def smoke_budget(started: float, timeout: float, default: float) -> float:
    """Seconds left for the doctor's smoke job so that `doctor --timeout T` bounds the whole run.

    The whole doctor run takes at most DOCTOR_BUDGET_FACTOR * T seconds (150 s with the default 5 s); the smoke
    job gets what the probes left, at most `default`, at least 1 s.
    """
    left = DOCTOR_BUDGET_FACTOR * timeout - (time.monotonic() - started)
    return max(1.0, min(default, left))


DOCTOR_BUDGET_FACTOR = 30.0
"""`compat doctor --timeout T` finishes within about 30 * T seconds: the probes (at most 4T + T + 2 s, capped at
27 s by default) and the smoke job in what is left."""
