"""`compat doctor`: probe this machine, explain every problem with its fix, never hang or crash."""

from __future__ import annotations

import math
import os
import sys
import time
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
"""(findings, result document, the framework import finished, why the smoke job did not run)."""


class _SmokeFirst:
    """The smoke job, started before the probes, whose child also answers the framework probe for the framework
    it imports (`--probe-out`): each framework is imported once, not by the probe's child and again by the
    smoke's. The probes run meanwhile; the frameworks probe waits for that answer (`answers()`) instead of
    importing the framework itself, and imports the others in parallel with the smoke job.

    The smoke child is stopped once its import has taken as long as the probe's own import may take (then the
    probe reports that import as timed out, as it did before); an import that fails or crashes before answering
    is re-checked by the probe's own child."""

    def __init__(self, timeout: float, started: float) -> None:
        import tempfile
        import threading

        from compat import _proc
        from compat.probes import FRAMEWORK_TIMEOUT_CAP
        from compat.smoke import SmokeOptions
        from compat.smoke.job import default_child_argv, installed_here, smoke_budget

        self.ft = min(4 * timeout, FRAMEWORK_TIMEOUT_CAP)
        self.options = SmokeOptions(python=None, timeout=smoke_budget(started, timeout, SMOKE_TIMEOUT))
        installed = installed_here()
        self.framework = next((f for f in ("torch", "tensorflow", "jax") if installed.get(f)), None)
        self.work = _proc.track_dir(tempfile.mkdtemp(prefix="compat-doctor-"))
        self.probe_out = os.path.join(self.work, "probe.json")
        self.result_path: Optional[str] = None
        self.t0 = time.monotonic()
        self._base = default_child_argv(sys.executable, self.options)
        self._box: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._run, name="compat-doctor-smoke", daemon=True)
        self._thread.start()

    def _argv(self, framework: str, result_path: Any, t0: float) -> list[str]:
        self.result_path = str(result_path)
        return [*self._base(framework, result_path, t0), "--probe-out", self.probe_out]

    @staticmethod
    def _doc(path: Optional[str]) -> Optional[dict[str, Any]]:
        import json

        from compat.cache import read_regular

        data = read_regular(path, 16 << 20) if path else None
        try:
            doc = json.loads(data) if data else None
        except (ValueError, RecursionError):
            return None
        return doc if isinstance(doc, dict) else None

    def _stalled(self, seconds: float) -> bool:  # still importing after the probe's own import budget
        doc = self._doc(self.result_path)
        return seconds > self.ft and (doc or {}).get("stage") in (None, "start", "import")

    def _run(self) -> None:
        from compat.smoke import run_smoke

        try:
            self._box["result"] = run_smoke(self.options, child_argv=self._argv, stalled=self._stalled)
        except BaseException as exc:  # InputError: the smoke job could not start
            self._box["error"] = exc

    def answers(self) -> dict[str, Any]:
        """For gather_facts(framework_answers=...): the smoke framework's probe answer, waited for."""
        return {self.framework: self._answer} if self.framework else {}

    def _answer(self) -> Optional[dict[str, Any]]:
        from compat.probes import frameworks as fwmod

        while True:
            doc = self._doc(self.probe_out)
            if doc is not None and doc.get("stage") == "done":
                seconds = time.monotonic() - self.t0
                return fwmod.answer_record(self.framework or "", doc, seconds, self.ft)
            if not self._thread.is_alive():
                return None  # ended without an answer (crashed or failed importing): the probe imports it
            waited = time.monotonic() - self.t0
            if waited > self.ft:  # the probe's own child would have been killed by now: within its deadline
                return {
                    "status": "timeout",
                    "mode": self.framework,
                    "returncode": None,
                    "signal": None,
                    "seconds": round(waited, 2),
                    "describe": "the smoke job's import did not finish",
                    "output": "",
                    "result": doc or {"stage": "import", "mode": self.framework},
                    "bad_json": None,
                    "timeout": self.ft,
                }
            time.sleep(0.02)

    def result(self) -> SmokeFirst:
        """Wait for the smoke job; its findings and document, whether its import finished, or why it did not run."""
        from compat import _proc
        from compat.smoke import smoke_findings

        self._thread.join()
        try:
            if "error" in self._box:
                err = self._box["error"]
                if isinstance(err, InputError):
                    return [], None, True, f"the smoke job could not start: {err}"
                raise err
            result = self._box["result"]
            doc = self._doc(self.probe_out)
            imported = self.framework is None or (
                doc is not None and doc.get("stage") == "done" and not doc.get("error")
            )
            return list(smoke_findings(result)), result.to_json(), imported, None
        finally:
            _proc.remove_dir(self.work)


def _start_probes(
    python: Optional[str], timeout: float, cache: bool, answers: Optional[dict[str, Any]] = None
) -> Any:
    """Start gather_facts in a thread; the returned function waits for its Facts (or re-raises its error)."""
    import threading

    from compat.probes import gather_facts

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["facts"] = gather_facts(python, timeout=timeout, cache=cache, framework_answers=answers)
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
        smoke: Optional[_SmokeFirst] = None
        if not no_smoke and not no_cache and python is None:
            # The smoke job starts first and its child answers the framework probe too (each framework
            # imported once); the probes run meanwhile. The matrix loads first: a bad --matrix fails before
            # any training.
            m = load(matrix)
            if not json_out and sys.stderr.isatty():
                sys.stderr.write("compat doctor: smoke-training a tiny CNN...\n")
            smoke = _SmokeFirst(timeout, started)
            probing = _start_probes(python, timeout, True, smoke.answers())
        else:
            probing = _start_probes(python, timeout, not no_cache)
            # While the probes wait on their children, this thread loads the matrix and the checks. A bad
            # --matrix still fails at once: the probes' children go with the process (compat._proc kills them).
            m = load(matrix)
        from compat.probes.checks import doctor_checks
        from compat.resolver import resolve

        facts = probing()
        if smoke is not None:
            smoke_first = smoke.result()
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
