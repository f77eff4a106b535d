"""Cross-checking log diagnoses against a machine's facts through the resolver, so `compat explain` and
`compat check` / `compat doctor` agree by construction."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from packaging.version import Version

from compat.errors import InputError, MatrixError
from compat.explain.diagnosis import Diagnosis
from compat.facts import Fact, Facts, Gpu, make_fact
from compat.findings import Finding, Fix, Report
from compat.versions import parse_cc

# Resolver and doctor check ids (stable: compat.resolver, compat.checks.doctor) that confirm each category.
CONFIRMING: dict[str, tuple[str, ...]] = {
    "driver_too_old": ("driver.cuda", "cudnn.driver"),
    "arch_not_supported": ("wheel.arch", "toolkit.arch", "cudnn.arch"),
    "cudnn_mismatch": ("tensorflow.cudnn", "cudnn.cuda", "cudnn.multiple", "libs.shadowed"),
    "cuda_libs_missing": ("tensorflow.cuda", "libs.shadowed", "toolkit.multiple", "framework.import-failed"),
    "no_gpu_visible": (
        "framework.cpu-build",
        "gpu.required",
        "gpu.none",
        "driver.missing",
        "driver.nouveau",
        "env.cuda-visible-devices",
        "driver.container",
        "framework.cuda-unavailable",
    ),
    "nvml_mismatch": ("driver.mismatch", "driver.nvml"),
    "hardware_xid": ("gpu.xid", "gpu.ecc", "gpu.retired-pages", "gpu.pcie"),
    "host_oom": ("host.oom", "host.cgroup-oom", "host.memory"),
    "dataloader_shm": ("host.shm", "host.nofile"),
    "gpu_oom": ("gpu.memory-in-use", "gpu.mig"),
}

# Log facts that map onto compat's scalar facts (only used where the machine's facts lack them).
LOG_TO_FACT = (
    ("driver", "driver"),
    ("driver_cuda", "driver_cuda"),
    ("torch_build", "torch_build"),
    ("cudnn_runtime", "cudnn"),
)

LOG_SOURCE = "the log"


def merge_log_facts(facts: Facts, log: Mapping[str, Any]) -> Facts:
    """`facts` with what the log revealed filled in where the machine's facts say nothing."""
    updates: dict[str, Fact] = {}
    for log_name, name in LOG_TO_FACT:
        raw = log.get(log_name)
        if raw and facts.get(name) is None:
            try:
                updates[name] = make_fact(name, str(raw), LOG_SOURCE)
            except InputError:
                continue
    out = facts.with_values(updates) if updates else facts
    if out.gpus is None and (log.get("gpu") or log.get("cc")):
        cc: str | None = None
        if log.get("cc"):
            try:
                cc = str(parse_cc(str(log["cc"])))
            except InputError:
                cc = None
        gpu_name = str(log["gpu"]).strip() if log.get("gpu") else None
        out = out.with_gpus((Gpu(name=gpu_name, cc=cc, source=LOG_SOURCE, index=0),), LOG_SOURCE)
    return out


def _extra_checks() -> tuple[Callable[[Any], Iterator[Any]], ...]:
    try:
        from compat.checks.doctor import doctor_checks
    except ImportError:  # the doctor's checks are optional here
        return ()
    return tuple(doctor_checks)


def _findings(report: Report, ids: tuple[str, ...]) -> list[Finding]:
    return [
        f
        for f in report.sorted_findings()
        if f.severity in ("error", "warning") and any(f.id == i or f.id.startswith(i + ".") for i in ids)
    ]


def _with(d: Diagnosis, status: str, note: str, fixes: tuple[Fix, ...] = (), **facts: Any) -> Diagnosis:
    new_facts = dict(d.facts)
    new_facts["cross_check"] = status
    new_facts.update({k: v for k, v in facts.items() if v is not None})
    conf = d.confidence
    if status == "confirmed":
        conf = min(0.99, conf + 0.1)
    elif status == "contradicted":
        conf = conf * 0.6
    merged: list[Fix] = []
    seen: set[str] = set()
    for f in fixes + d.fixes:
        if f.text not in seen:
            seen.add(f.text)
            merged.append(f)
    return replace(
        d,
        confidence=round(conf, 2),
        explanation=f"{d.explanation} Cross-check: {note}",
        facts=new_facts,
        fixes=tuple(merged),
    )


def _torch_commands(facts: Facts, m: Any, limit: int = 2) -> list[Fix]:
    """The solver's torch fixes for this stack's driver.cuda finding (re-checked; compat.solver)."""
    from compat.pipeline.check import fixes_for

    return fixes_for(facts, m, "driver.cuda", "torch", "torch")[:limit]


def _driver_too_old(d: Diagnosis, facts: Facts, m: Any) -> Diagnosis:
    from compat.checks.context import build_context, runtimes
    from compat.checks.rules import driver_can_run, driver_requirement

    ctx = build_context(facts, m)
    rts = runtimes(ctx)
    if not rts:
        return _with(
            d,
            "not checked",
            "no CUDA runtime is known for this machine (no CUDA build of torch or "
            "TensorFlow installed, no CUDA toolkit given), so the driver cannot be checked against it.",
        )
    os_name = ctx.driver_os()
    if ctx.driver is not None:
        for rt in rts:
            if driver_can_run(m, ctx.driver, rt.cuda, os_name) != "no":
                continue
            floor, own, _ = driver_requirement(m, rt.cuda, os_name)
            need = floor or own
            cmds = _torch_commands(facts, m) if rt.who.startswith("torch") else []
            how = "bundled with" if rt.who.startswith("torch") else "of"
            full = f" (≥ {own} for full CUDA {rt.cuda_raw} support)" if own and floor and own != floor else ""
            note = (
                f"your driver {ctx.driver_raw} cannot run the CUDA {rt.cuda_raw} runtime {how} {rt.who}: "
                f"install driver ≥ {need}{full}" + (f", or `{cmds[0].command}`" if cmds else "") + "."
            )
            fixes = tuple([Fix(f"Install NVIDIA driver ≥ {need}{full}")] + cmds)
            return _with(
                d, "confirmed", note, fixes, driver=ctx.driver_raw, runtime_cuda=rt.cuda_raw, min_driver=need
            )
        runnable = ", ".join(f"CUDA {rt.cuda_raw} ({rt.who})" for rt in rts)
        return _with(
            d,
            "contradicted",
            f"driver {ctx.driver_raw} on this machine can run {runnable}; the log was "
            "probably written in another environment (a container image, another node, an older venv).",
        )
    dc = facts.get("driver_cuda")
    if dc is not None and dc.value:
        have = Version(dc.value)
        for rt in rts:
            if rt.cuda.release[0] > have.release[0] or (
                m.minor_compat.get(rt.cuda.release[0]) is None and rt.cuda.release[:2] > have.release[:2]
            ):
                floor, own, _ = driver_requirement(m, rt.cuda, os_name)
                need = floor or own
                cmds = _torch_commands(facts, m)
                note = (
                    f"the driver supports CUDA {dc.raw} ({dc.source}) but {rt.who} needs the CUDA "
                    f"{rt.cuda_raw} runtime"
                    + (f": install driver ≥ {need}" if need else "")
                    + (f", or `{cmds[0].command}`" if cmds else "")
                    + "."
                )
                fixes = tuple(([Fix(f"Install NVIDIA driver ≥ {need}")] if need else []) + cmds)
                return _with(d, "confirmed", note, fixes, runtime_cuda=rt.cuda_raw, min_driver=need)
        status = "not confirmed" if dc.source == LOG_SOURCE else "contradicted"
        return _with(
            d,
            status,
            f"the driver supports CUDA {dc.raw}, enough for "
            + ", ".join(f"{rt.who} (CUDA {rt.cuda_raw})" for rt in rts)
            + " on this machine.",
        )
    return _with(d, "not checked", "the driver version of this machine is unknown.")


def _from_findings(d: Diagnosis, report: Report) -> Diagnosis | None:
    found = _findings(report, CONFIRMING.get(d.category, ()))
    if not found:
        return None
    f = found[0]
    fixes: tuple[Fix, ...] = ()
    for g in found:
        fixes += g.fixes
    return _with(d, "confirmed", f"{f.title}. {f.message}", fixes, check=f.id)


def _no_gpu(d: Diagnosis, facts: Facts) -> Diagnosis:
    if facts.gpus == ():
        return _with(d, "confirmed", f"this machine shows no NVIDIA GPU ({facts.gpus_source or 'probed'}).")
    if facts.gpus:
        names = ", ".join(sorted({g.name or "GPU" for g in facts.gpus}))
        return _with(
            d,
            "refined",
            f"the machine has {len(facts.gpus)} GPU(s) ({names}); the process could not "
            "see them: check CUDA_VISIBLE_DEVICES, the container's --gpus flag and the framework build.",
        )
    return _with(d, "not checked", "it is unknown whether this machine has a GPU.")


def cross_check(diags: list[Diagnosis], facts: Facts, matrix: Any = None) -> list[Diagnosis]:
    """Each diagnosis confirmed, refined or contradicted by the machine's facts (the log's facts merged in)."""
    m = matrix
    if m is None:
        from compat.matrix import get_matrix

        try:
            m = get_matrix()
        except (MatrixError, InputError) as exc:
            note = f"unavailable: the matrix did not load ({str(exc).splitlines()[0][:200]})"
            return [replace(d, facts={**d.facts, "cross_check": note}) for d in diags]
    log: dict[str, Any] = {}
    for d in diags:
        for k, v in d.facts.items():
            log.setdefault(k, v)
    merged = merge_log_facts(facts, log)
    from compat.pipeline.check import check_stack

    report = check_stack(merged, m, extra_checks=_extra_checks())
    out: list[Diagnosis] = []
    for d in diags:
        if d.category == "driver_too_old":
            out.append(_driver_too_old(d, merged, m))
            continue
        confirmed = _from_findings(d, report)
        if confirmed is not None:
            out.append(confirmed)
        elif d.category == "no_gpu_visible":
            out.append(_no_gpu(d, merged))
        elif d.category in CONFIRMING:
            out.append(
                _with(
                    d,
                    "not confirmed",
                    "the facts of this machine show no matching problem now "
                    "(it may have been transient, or the log comes from another environment).",
                )
            )
        else:
            out.append(replace(d, facts={**d.facts, "cross_check": "not applicable"}))
    return out


__all__ = ["CONFIRMING", "cross_check", "merge_log_facts"]
