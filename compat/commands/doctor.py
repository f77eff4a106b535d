"""`compat doctor`: probe this machine, explain every problem with its fix, never hang or crash."""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Optional

import typer

from compat.commands.common import FAIL_ON_OPT, JSON_OPT, MATRIX_OPT, check_fail_on, emit, load
from compat.errors import InputError

SMOKE_TIMEOUT = 120.0
"""Seconds the doctor gives the smoke-training child (compat smoke defaults to more)."""


def _validate(python: Optional[str], timeout: float, save_snapshot: Optional[str]) -> None:
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise InputError(f"--python {python!r} is not an executable file")
    if not (timeout > 0 and math.isfinite(timeout)) or timeout > 60:
        raise InputError(f"--timeout must be a number of seconds between 0 and 60, got {timeout:g}")
    if save_snapshot is not None:
        parent = os.path.dirname(os.path.abspath(save_snapshot))
        if not os.path.isdir(parent):
            raise InputError(f"--save-snapshot {save_snapshot!r}: directory {parent!r} does not exist")


def _smoke(
    python: Optional[str], probes: Any = None, started: float = 0.0, timeout: float = 5.0
) -> tuple[list[Any], Optional[dict[str, Any]], Optional[str]]:
    """(findings, result document, skip reason): the smoke job, imported lazily."""
    from compat.smoke import SmokeOptions, run_smoke, smoke_findings
    from compat.smoke.job import broken_by_probe, smoke_budget

    broken = broken_by_probe(probes or {})
    if broken is not None:
        return [], None, broken
    try:
        budget = smoke_budget(started, timeout, SMOKE_TIMEOUT) if started else SMOKE_TIMEOUT
        result = run_smoke(SmokeOptions(python=python, timeout=budget))
    except InputError as exc:
        return [], None, f"the smoke job could not start: {exc}"
    return list(smoke_findings(result)), result.to_json(), None


SmokeFirst = tuple[list[Any], Optional[dict[str, Any]], bool, Optional[str]]


def _smoke_importing_once(timeout: float, started: float) -> SmokeFirst:
    """The smoke job, run before the probes, whose child also answers the framework probe for the framework it
    imports (kept in the import cache, where the probe finds it): each framework is imported once, not by the
    probe's child and again by the smoke's. (findings, result document, the framework import finished, why the
    smoke job did not run).

    The child is stopped once its import has taken as long as the probe's own import may take, so a hanging
    import costs what it cost before; the probe then re-checks that import and decides as before."""
    import json
    import tempfile

    from compat import _proc
    from compat.probes import FRAMEWORK_TIMEOUT_CAP
    from compat.probes import frameworks as fwmod
    from compat.smoke import SmokeOptions, run_smoke, smoke_findings
    from compat.smoke.job import default_child_argv, smoke_budget

    ft = min(4 * timeout, FRAMEWORK_TIMEOUT_CAP)
    options = SmokeOptions(python=None, timeout=smoke_budget(started, timeout, SMOKE_TIMEOUT))
    work = _proc.track_dir(tempfile.mkdtemp(prefix="compat-doctor-"))
    probe_out = os.path.join(work, "probe.json")
    base = default_child_argv(sys.executable, options)
    seen: dict[str, Any] = {}

    def argv(framework: str, result_path: Any, t0: float) -> list[str]:
        seen["framework"], seen["result"] = framework, str(result_path)
        return [*base(framework, result_path, t0), "--probe-out", probe_out]

    def stage(path: str) -> Optional[str]:
        from compat.cache import read_regular

        data = read_regular(path, 1 << 20)
        try:
            doc = json.loads(data) if data else None
        except (ValueError, RecursionError):
            return None
        return doc.get("stage") if isinstance(doc, dict) else None

    def stalled(seconds: float) -> bool:  # still importing after the probe's import budget
        return seconds > ft + 5.0 and stage(seen.get("result", "")) in (None, "start", "import")

    try:
        try:
            result = run_smoke(options, child_argv=argv, stalled=stalled)
        except InputError as exc:
            return [], None, True, f"the smoke job could not start: {exc}"
        imported = False
        from compat.cache import read_regular

        data = read_regular(probe_out, fwmod.CHILD_JSON_MAX)
        try:
            doc = json.loads(data) if data else None
        except (ValueError, RecursionError):
            doc = None
        fw = seen.get("framework")
        if isinstance(doc, dict) and fw:
            imported = doc.get("stage") == "done" and not doc.get("error")
            seconds = (
                float((result.details.get("timings") or {}).get("import") or 0.0) if result.details else 0.0
            )
            fwmod.store_answer(fw, doc, seconds, ft, os.environ)
        return list(smoke_findings(result)), result.to_json(), imported or fw is None, None
    finally:
        _proc.remove_dir(work)


def _start_probes(python: Optional[str], timeout: float, cache: bool) -> Any:
    """Start gather_facts in a thread; the returned function waits for its Facts (or re-raises its error)."""
    import threading

    from compat.probes import gather_facts

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["facts"] = gather_facts(python, timeout=timeout, cache=cache)
        except BaseException as exc:  # handed to the main thread, which reports it as before
            box["error"] = exc

    worker = threading.Thread(target=run, name="compat-doctor-probes", daemon=True)
    worker.start()

    def wait() -> Any:
        worker.join()
        if "error" in box:
            raise box["error"]
        return box["facts"]

    return wait


def register(app: typer.Typer) -> None:
    @app.command("doctor")
    def doctor(
        json_out: bool = JSON_OPT,
        no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the smoke-training job."),
        python: Optional[str] = typer.Option(
            None,
            "--python",
            metavar="PATH",
            help="Inspect the environment of this interpreter instead of compat's own.",
        ),
        save_snapshot: Optional[str] = typer.Option(
            None,
            "--save-snapshot",
            metavar="FILE",
            help="Write the facts to FILE; `compat check --snapshot FILE` reproduces the findings elsewhere.",
        ),
        require_gpu: bool = typer.Option(
            False, "--require-gpu", help="A missing or unusable GPU is an error."
        ),
        fail_on: str = FAIL_ON_OPT,
        matrix: Optional[str] = MATRIX_OPT,
        timeout: float = typer.Option(
            5.0,
            "--timeout",
            metavar="S",
            help="Seconds each probe may take (framework imports get 4x, at most 20 s); the whole run, smoke included, takes at most 30x.",
        ),
        no_cache: bool = typer.Option(
            False,
            "--no-cache",
            help="Import every framework afresh even if nothing changed since the last successful import.",
        ),
    ) -> None:
        """Probe this machine: driver, GPUs and their health, CUDA, cuDNN, frameworks, resources; every problem with its fix."""
        check_fail_on(fail_on)
        _validate(python, timeout, save_snapshot)
        if not json_out and sys.stderr.isatty():
            sys.stderr.write("compat doctor: probing this machine...\n")
        import time

        started = time.monotonic()
        smoke_first: Optional[SmokeFirst] = None
        if not no_smoke and not no_cache and python is None:
            # Smoke first: its child answers the framework probe too (each framework imported once). The
            # matrix loads first so that a bad --matrix fails before any training.
            m = load(matrix)
            if not json_out and sys.stderr.isatty():
                sys.stderr.write("compat doctor: smoke-training a tiny CNN...\n")
            smoke_first = _smoke_importing_once(timeout, started)
            probing = _start_probes(python, timeout, True)
        else:
            probing = _start_probes(python, timeout, not no_cache)
            # While the probes wait on their children, this thread loads the matrix and the checks. A bad
            # --matrix still fails at once: the probes' children go with the process (compat._proc kills them).
            m = load(matrix)
        from compat.probes.checks import doctor_checks
        from compat.resolver import resolve

        facts = probing()
        if save_snapshot is not None:
            from compat.facts import save_snapshot as _save

            try:
                _save(facts, save_snapshot)
            except OSError as exc:
                raise InputError(f"--save-snapshot {save_snapshot!r}: {exc.strerror or exc}") from None
        report = resolve(facts, m, require_gpu=require_gpu, extra_checks=doctor_checks)
        if no_smoke:
            from compat.findings import Skip

            report.skipped.append(Skip("smoke", "--no-smoke"))
        elif smoke_first is not None:
            found, doc, imported, why = smoke_first
            if not imported:  # the smoke's import did not finish: what the probe found about it decides
                from compat.smoke.job import broken_by_probe

                why = broken_by_probe(facts.probes)
                if why is not None:
                    found, doc = [], None
            report.findings.extend(found)
            if doc is not None:
                report.extra["smoke"] = doc
            if why is not None:
                from compat.findings import Skip

                report.skipped.append(Skip("smoke", why))
        else:
            if not json_out and sys.stderr.isatty():
                sys.stderr.write("compat doctor: smoke-training a tiny CNN...\n")
            found, doc, why = _smoke(python, facts.probes, started, timeout)
            report.findings.extend(found)
            if doc is not None:
                report.extra["smoke"] = doc
            if why is not None:
                from compat.findings import Skip

                report.skipped.append(Skip("smoke", why))
        import socket

        report.extra["host"] = socket.gethostname()  # names the node in `compat fleet merge`
        report.extra["probes"] = dict(facts.probes)
        report.extra["gpus"] = None if facts.gpus is None else [g.to_json() for g in facts.gpus]
        raise typer.Exit(emit(report, json_out=json_out, title="compat doctor", fail_on=fail_on))
