"""What the smoke-training child scripts share: argv, progress markers, timings and the result file.

Standard library only, Python 3.7+ syntax: this runs inside the environment under test (possibly another
interpreter given with --python), which may be broken and need not have compat installed. The child scripts
load this file by path, never as part of the compat package.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, Optional

MARKER = "@@compat-smoke"
"""Prefix of the progress lines written to stderr: `@@compat-smoke stage <name> <seconds since child start>`."""

# = compat.schema_version.SCHEMA_VERSION: this script never imports compat (a test keeps them equal)
SCHEMA_VERSION = 1

# Forward pass on the GPU vs the same weights and input on the CPU (TF32 off): a difference beyond
# ATOL + RTOL * max|cpu output| is silent corruption, not rounding.
RTOL = 5e-3
ATOL = 1e-3


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="compat-smoke-child")
    p.add_argument("--out", required=True, help="where to write the JSON result")
    p.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--find-max-batch", action="store_true")
    p.add_argument(
        "--max-batch-cap",
        type=int,
        default=0,
        help="stop doubling at this batch size; also allows --find-max-batch on the CPU",
    )
    p.add_argument(
        "--compare",
        default="auto",
        choices=("auto", "always", "never"),
        help="compare a forward pass with the CPU (auto: on a GPU only)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--t0", type=float, default=0.0, help="the parent's time.time() just before the spawn")
    p.add_argument(
        "--probe-out",
        default=None,
        help="also write what compat's framework probe learns from an import to this file, right after the "
        "import: the doctor then does not import the framework a second time",
    )
    return p.parse_args(list(argv))


FRAMEWORK_CHILD = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probes", "_framework_child.py"
)


def write_probe(framework: str, path: str, import_seconds: Optional[float]) -> None:
    """The framework probe's answer (compat/probes/_framework_child.py, loaded by path) for the framework this
    process has just imported: the same document the probe's own child would write. Never raises: the smoke
    job must not fail because of it (the doctor then runs the probe's own child)."""
    try:
        import importlib.util

        spec = importlib.util.spec_from_file_location("_compat_framework_child", FRAMEWORK_CHILD)
        if spec is None or spec.loader is None:
            return
        fc: Any = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fc)
        out = fc.Out(path)
        out.doc["mode"] = framework
        out.doc["via"] = "smoke"
        out.stage("import")
        try:
            getattr(fc, "probe_" + framework)(out)
        except Exception as exc:
            out.doc["error"] = "%s: %s" % (type(exc).__name__, exc)
            out.doc["libs"] = fc.loaded_libs()
            out.save()
            return
        if import_seconds is not None:
            out.doc["import_seconds"] = round(import_seconds, 3)  # the real import, not the re-import
        out.doc["libs"] = fc.loaded_libs()
        out.stage("done")
    except Exception:
        return


def host_cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "cpu"


def peak_rss_bytes() -> Optional[int]:
    """Peak resident set size of this process (Linux reports KiB, macOS bytes); None without `resource`."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024)


def no_core_dumps() -> None:
    """A crash is expected and reported; a core file of a process holding a CUDA context can be gigabytes."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    except (ImportError, ValueError, OSError):
        pass


def losses_decreased(losses: Sequence[float]) -> tuple[bool, str]:
    """(ok, reason): every loss finite and the last below the first."""
    if len(losses) < 2:
        return False, "fewer than two steps ran, so no decrease can be seen"
    for i, v in enumerate(losses):
        if not math.isfinite(v):
            return False, f"the loss was not finite at step {i + 1} ({v})"
    if not losses[-1] < losses[0]:
        return (
            False,
            f"the loss did not decrease: {losses[0]:.6g} at step 1, {losses[-1]:.6g} at step {len(losses)}",
        )
    return True, ""


def forward_matches(max_abs_diff: float, ref_scale: float) -> bool:
    return math.isfinite(max_abs_diff) and max_abs_diff <= ATOL + RTOL * ref_scale


class OutOfMemory(Exception):
    """Raised by a try_batch function when the device ran out of memory for that batch."""


def find_max_batch(
    try_batch: Callable[[int], Optional[int]], start: int, cap: int = 0, limit: int = 1 << 22
) -> dict[str, Any]:
    """Double the batch size from `start` until try_batch raises OutOfMemory, or the cap or limit is passed.

    try_batch(n) runs one training step at batch n and returns the peak memory in bytes it used (or None).
    Returns max_batch (the largest batch that fit; 0 when not even `start` did), bytes_per_sample (the growth of
    peak memory between the last two sizes that fit, which leaves out the fixed cost of weights and workspace;
    else peak/batch), stopped ("out_of_memory", "cap" or "limit") and tried: [[batch, peak|None, "ok"|"oom"]].
    """
    tried: list[list[Any]] = []
    best = 0
    n = max(1, int(start))
    top = min(cap, limit) if cap > 0 else limit
    stopped = "cap" if 0 < cap <= limit else "limit"
    while n <= top:
        try:
            peak = try_batch(n)
        except OutOfMemory:
            tried.append([n, None, "oom"])
            stopped = "out_of_memory"
            break
        tried.append([n, peak, "ok"])
        best = n
        n *= 2
    fits = [(b, p) for b, p, s in tried if s == "ok" and p]
    per_sample: Optional[int] = None
    if len(fits) >= 2 and fits[-1][1] > fits[-2][1]:
        per_sample = int((fits[-1][1] - fits[-2][1]) / (fits[-1][0] - fits[-2][0]))
    elif fits:
        per_sample = int(fits[-1][1] / fits[-1][0])
    return {"max_batch": best, "bytes_per_sample": per_sample, "stopped": stopped, "tried": tried}


def clean_float(v: Any) -> Any:
    """JSON has no NaN or infinity: keep those as strings so the parent still sees them."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else str(f)


class Child:
    """One smoke run: collects the result, rewrites it after every stage, exits 0 (passed) or 1 (failed)."""

    def __init__(self, framework: str, argv: Sequence[str]) -> None:
        self.t_start = time.time()
        self.args = parse_args(argv)
        no_core_dumps()
        self.timings: dict[str, float] = {}
        if self.args.t0:
            self.timings["child_start"] = max(0.0, self.t_start - self.args.t0)
        self.result: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "status": "running",
            "framework": framework,
            "framework_version": None,
            "device": None,
            "device_name": None,
            "steps": 0,
            "batch_size": self.args.batch_size,
            "amp": None,
            "losses": [],
            "loss_first": None,
            "loss_last": None,
            "samples_per_second": None,
            "peak_memory_bytes": None,
            "peak_memory_kind": None,
            "cudnn_used": False,
            "cudnn_version": None,
            "compare": None,
            "max_batch": None,
            "stage": "start",
            "message": None,
            "error": None,
            "python": sys.version.split()[0],
            "timings": self.timings,
        }

    def stage(self, name: str) -> None:
        """Mark the start of a stage on stderr (the parent reads the last one to say where a crash happened)."""
        if self.result["stage"] == "import" and name == "device" and self.args.probe_out:
            # The framework is imported (the stage after "import" starts): answer the doctor's framework probe.
            write_probe(self.result["framework"], self.args.probe_out, self.timings.get("import"))
        self.result["stage"] = name
        sys.stderr.write(f"{MARKER} stage {name} {time.time() - self.t_start:.3f}\n")
        sys.stderr.flush()
        self.write()

    def timer(self, name: str) -> Timer:
        return Timer(self, name)

    def write(self) -> None:
        """Atomic (write, then rename): the parent never reads half a file, even after a crash right here."""
        out = self.args.out
        tmp = out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.result, f, sort_keys=True, allow_nan=False, default=str)
        os.replace(tmp, out)

    def set_losses(self, losses: Sequence[float]) -> None:
        self.result["losses"] = [clean_float(v) for v in losses]
        self.result["steps"] = len(losses)
        if losses:
            self.result["loss_first"] = clean_float(losses[0])
            self.result["loss_last"] = clean_float(losses[-1])

    def fail(self, message: str) -> None:
        self.result["status"] = "failed"
        self.result["message"] = message

    def run(self, body: Callable[[Child], None]) -> None:
        """Run body(self); an exception becomes a failed result carrying its text. Exits the process."""
        try:
            body(self)
            if self.result["status"] == "running":
                self.result["status"] = "passed"
        except BaseException as exc:  # KeyboardInterrupt and SystemExit too: every ending is a verdict
            text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            last = text.splitlines()[-1] if text else type(exc).__name__
            self.result["status"] = "failed"
            self.result["error"] = {
                "type": f"{type(exc).__module__}.{type(exc).__name__}",
                "text": text[-20000:],
                "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-20000:],
            }
            self.result["message"] = f"{last[:500]} (during {self.result['stage']})"
        self.timings["child_total"] = time.time() - self.t_start
        self.result["child_end_time"] = time.time()
        if self.result["status"] == "passed":
            self.stage("done")
        else:  # "stage" keeps naming where it failed
            self.write()
        sys.stdout.flush()
        sys.stderr.flush()
        # os._exit, not sys.exit: interpreter teardown of a framework can take seconds or crash on its own
        # (atexit handlers, CUDA context destruction), and the verdict is already on disk.
        os._exit(0 if self.result["status"] == "passed" else 1)


class Timer:
    def __init__(self, child: Child, name: str) -> None:
        self.child = child
        self.name = name
        self.t = 0.0

    def __enter__(self) -> Timer:
        self.t = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.child.timings[self.name] = self.child.timings.get(self.name, 0.0) + time.perf_counter() - self.t


def drop_own_folder(script_file: str) -> None:
    """For the child scripts: take their own folder (compat/smoke) off sys.path, so that no module of the
    package can shadow one the framework imports."""
    here = os.path.realpath(os.path.dirname(os.path.abspath(script_file)))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
