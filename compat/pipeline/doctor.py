"""The doctor's run: probe this machine (the smoke job alongside), resolve the facts with the doctor's checks, and
the report with what the probes found; or the same report rebuilt from a saved snapshot.

The start-up order matters (bench/bench_startup.py): the probes start first and the matrix and the checks load
while they wait on their children, so everything beyond the standard library is imported inside the functions.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

from compat.errors import InputError

SMOKE_TIMEOUT = 120.0
"""Seconds the doctor gives the smoke-training child (compat smoke defaults to more)."""


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
                return fwmod.child_answer(self.framework or "", doc, seconds, self.ft)
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


def _doctor_terms(python: str) -> tuple[tuple[str, str], ...]:
    """The resolver's skip reasons name `compat check` flags; the doctor has none of them: it says what it
    found on this machine and in the environment it inspected (issue 20)."""
    return (
        ("no PyTorch version given (--torch)", f"PyTorch is not installed in {python}"),
        ("no TensorFlow version given (--tensorflow)", f"TensorFlow is not installed in {python}"),
        ("no known framework release given (--torch, --tensorflow)", f"no PyTorch or TensorFlow in {python}"),
        ("no framework given (--torch, --tensorflow)", f"no PyTorch or TensorFlow in {python}"),
        ("no cuDNN version given (--cudnn)", "no cuDNN found on this machine"),
        ("no system cuDNN version (give --cudnn)", "no cuDNN found on this machine"),
        ("no CUDA version given (--cuda)", "no CUDA toolkit found on this machine"),
        (
            "(give --torch, --tensorflow or --cuda)",
            f"(no CUDA framework in {python} and no CUDA toolkit found)",
        ),
        ("(give --torch or --tensorflow)", f"(no CUDA build of PyTorch or TensorFlow in {python})"),
        ("(--torch, --tensorflow)", f"(neither PyTorch nor TensorFlow is installed in {python})"),
        ("(give --cuda)", "(no CUDA toolkit found: no nvcc)"),
        ("(give --gpu or --cc)", "(no NVIDIA GPU found)"),
        ("(give --driver)", "(no NVIDIA driver found)"),
        ("(give --python)", f"(the Python version of {python} could not be read)"),
        ("(give --os)", "(this machine's OS could not be read)"),
    )


def inspected_python(probes: Any, default: str = "the inspected interpreter") -> str:
    """The interpreter whose environment the framework probe read (a doctor snapshot says it too)."""
    from collections.abc import Mapping

    fw = (
        probes.get("frameworks") if isinstance(probes, Mapping) else None
    )  # Facts.probes: a ProbeSet (a Mapping)
    exe = fw.get("executable") if isinstance(fw, Mapping) else None
    return exe if isinstance(exe, str) and exe else default


def in_doctor_terms(skipped: list[Any], python: str) -> list[Any]:
    """`skipped` with every reason in the doctor's language; a flag of another command never shows."""
    import re
    from dataclasses import replace

    terms = _doctor_terms(python)
    out = []
    for sk in skipped:
        reason = sk.reason
        for old, new in terms:
            reason = reason.replace(old, new)
        reason = re.sub(r"\s*\((?:give )?--(?!no-smoke)[a-z][^)]*\)", "", reason)  # any flag not listed above
        out.append(replace(sk, reason=reason))
    return out


def doctor_report(
    m: Any,
    target: Any,
    *,
    timeout: float = 5.0,
    smoke: bool = True,
    require_gpu: bool = False,
    cache: bool = True,
    save_snapshot: Optional[str] = None,
    progress: bool = True,
) -> Any:
    """Probe this machine and the environment of `target` (compat.target.Target): the doctor's Report.

    `m`: the Matrix, or a function that loads it: called (and the checks imported) while the probes run, so that
    start-up work overlaps the probes' waiting on their children (nvcc, the compiler, NVML)."""
    from compat.progress import Progress

    python = target.argument
    started = time.monotonic()
    first: Optional[_SmokeFirst] = None
    with Progress("compat doctor: probing this machine", enabled=progress):
        if smoke and cache and python is None:
            # compat's own environment: the smoke job starts first and its child answers the framework probe
            # too (each framework imported once, issue 12); the probes run meanwhile.
            first = _SmokeFirst(timeout, started)
            probing = _start_probes(python, timeout, True, first.answers())
        else:
            probing = _start_probes(python, timeout, cache)
        if callable(m):
            m = m()  # a broken matrix ends the command here: compat._proc kills the probes' children at exit
        from compat.checks.doctor import doctor_checks
        from compat.pipeline.check import check_stack

        facts = probing()
    if save_snapshot is not None:
        from compat.facts import save_snapshot as _save

        try:
            _save(facts, save_snapshot)
        except OSError as exc:
            raise InputError(f"--save-snapshot {save_snapshot!r}: {exc.strerror or exc}") from None
    report = check_stack(facts, m, require_gpu=require_gpu, extra_checks=doctor_checks)
    from compat.findings import Skip

    if not smoke:
        report.skipped.append(Skip("smoke", "--no-smoke"))
    else:
        with Progress("compat doctor: smoke-training a tiny CNN", enabled=progress):
            if first is not None:
                found, doc, imported, why = first.result()
            else:
                found, doc, why = _smoke(python, facts.probes, started, timeout)
                imported = True
        if not imported:  # the smoke's import did not finish: what the probe found about it decides
            from compat.smoke.job import broken_by_probe

            why = broken_by_probe(facts.probes)
            if why is not None:
                found, doc = [], None
        report.findings.extend(found)
        if doc is not None:
            report.extra["smoke"] = doc
        if why is not None:
            report.skipped.append(Skip("smoke", why))
    report.extra["interpreter"] = target.to_json()
    from compat.facts import host_name

    report.extra["host"] = host_name()  # names the node in `compat fleet merge`
    _add_probes(report, facts)
    report.skipped[:] = in_doctor_terms(report.skipped, inspected_python(facts.probes, target.python))
    return report


def _add_probes(report: Any, facts: Any) -> None:
    """The probe results and GPUs a doctor report carries, through the one codec of probe results (its keys: a
    public contract)."""
    from compat.probes.probeset import probe_set

    report.extra["probes"] = probe_set(facts.probes).to_json()
    report.extra["gpus"] = None if facts.gpus is None else [g.to_json() for g in facts.gpus]


def snapshot_report(m: Any, path: str) -> Any:
    """The doctor's Report rebuilt from a saved snapshot (`compat doctor --save-snapshot`, examples/*.json)."""
    from compat.checks.doctor import doctor_checks
    from compat.facts import load_snapshot
    from compat.pipeline.check import check_stack

    facts = load_snapshot(path)
    report = check_stack(facts, m, extra_checks=doctor_checks if facts.probes else ())
    _add_probes(report, facts)
    report.extra["snapshot"] = os.path.basename(path)
    report.skipped[:] = in_doctor_terms(report.skipped, inspected_python(facts.probes))
    return report


def doctor_document(report: Any, *, show_skipped: bool = False) -> Any:
    """The doctor's report as a document (compat.output): its JSON, text and the other formats."""
    from compat.output.documents import ReportDocument

    return ReportDocument(
        report, title="compat doctor", kind="doctor", show_skipped=show_skipped, inventory=True
    )
