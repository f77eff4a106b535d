"""The smoke job: pick the framework (without importing it), run the training child, turn what happened into a verdict."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

from compat import _proc
from compat.distributions import providing
from compat.findings import Fix
from compat.smoke import harness, oom
from compat.smoke.result import SmokeOptions, SmokeResult
from compat.smoke.verdict import classify

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
