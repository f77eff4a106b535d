"""compat.guard(): fail fast at the top of a training script, with the real reason and its fix.

Only cheap, in-process facts: the driver (from /proc or NVML, no CUDA context), distribution metadata, and the
versions of frameworks that are already imported. Never imports a framework, never prints, never touches
os.environ. The verdict is cached on disk, keyed on everything that could change it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence

from compat.errors import CompatError, CompatWarning, GuardError, IncompatibleEnvironment, InputError

TYPE_CHECKING = False  # not `from typing import ...`: importing typing costs milliseconds on the warm path

if (
    TYPE_CHECKING
):  # the warm path avoids typing, dataclasses, pathlib, re and hashlib: each costs milliseconds
    from typing import Any, Optional

    from compat.findings import Finding
    from compat.guard_cache import Tagged

GUARD_ENV = "COMPAT_GUARD"
MODES = ("off", "warn", "error")
_SIZE_RE = r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$"
_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def parse_size(value: int | str) -> int:
    """`"20GiB"` → bytes; an int is bytes already."""
    if isinstance(value, int):
        return value
    import re

    m = re.match(_SIZE_RE, value, re.IGNORECASE)
    if m is None:
        raise InputError(f"malformed memory size {value!r} (expected e.g. 20GiB or 512MB)")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "B").lower()])


def _finding(
    id: str,
    severity: str,
    title: str,
    message: str,
    fixes: tuple[tuple[str, Optional[str]], ...] = (),
    group: str = "stack",
) -> Finding:
    from compat.findings import Finding, Fix

    return Finding(id, severity, title, message, tuple(Fix(t, c) for t, c in fixes), group=group)


def _tag(
    id: str,
    severity: str,
    title: str,
    message: str,
    fixes: tuple[tuple[str, Optional[str]], ...] = (),
    frameworks: tuple[str, ...] = (),
) -> Tagged:
    return _finding(id, severity, title, message, fixes, group="guard"), frameworks


class GuardResult:
    """What guard() found; returned when it does not raise."""

    def __init__(
        self, findings: Optional[list[Finding]] = None, cached: bool = False, mode: str = "error"
    ) -> None:
        self.findings = findings or []
        self.cached = cached
        self.mode = mode

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def _nvml_gpus() -> tuple[Optional[str], Optional[list[dict[str, Any]]], str]:
    """(driver version, GPUs with cc and free memory, why-not) via NVML in a child process: no CUDA context."""
    from compat.probes.nvml import read_nvml_light

    return read_nvml_light()


_FACT_FRAMEWORKS = (("torch", ("torch",)), ("tensorflow", ("tensorflow", "tf_")), ("jax", ("jax",)))


def _frameworks_of(f: Finding) -> tuple[str, ...]:
    """The frameworks a finding is about: from the facts it rests on (torch, torch_cuda, tensorflow, tf_build...)."""
    out = [fw for fw, prefixes in _FACT_FRAMEWORKS if any(k.startswith(prefixes) for k in f.facts)]
    if not out:  # a finding that names no framework fact (e.g. a known-issue row): its title may
        low = f.title.lower()
        out = [
            fw
            for fw, words in (("torch", ("torch",)), ("tensorflow", ("tensorflow",)))
            if any(w in low for w in words)
        ]
    return tuple(out)


def _evaluate(
    environ: Mapping[str, str],
    require_gpu: bool,
    nvml: tuple[Optional[str], Optional[list[dict[str, Any]]], str],
) -> list[Tagged]:
    from compat.facts import Fact, Facts, Gpu, apply_overrides, make_fact, missing
    from compat.guard_cache import imported_frameworks, matrix_dir
    from compat.installed import installed_facts
    from compat.matrix import get_matrix
    from compat.pipeline.check import check_stack
    from compat.versions import parse_cc

    def fact(name: str, raw: Any, source: str) -> Fact:
        # What a driver or an imported module reports is data, not the caller's input: garbage is a missing fact.
        try:
            return make_fact(name, str(raw), source)
        except InputError as exc:
            return missing(source, f"{source} gave a malformed value: {exc}")

    def cc(raw: Any) -> Optional[str]:
        try:
            return str(parse_cc(str(raw))) if raw else None
        except InputError:
            return None

    facts = installed_facts()
    imported = imported_frameworks()
    updates = {}
    if "torch" in imported and imported["torch"].get("version"):
        updates["torch"] = fact("torch", imported["torch"]["version"], "torch.__version__")
    if "tensorflow" in imported and imported["tensorflow"].get("version"):
        updates["tensorflow"] = fact("tensorflow", imported["tensorflow"]["version"], "tf.__version__")
    if updates:
        facts = facts.with_values(updates)
    if "torch" in imported and imported["torch"].get("cuda"):
        facts = facts.with_values(
            {"torch_cuda": fact("torch_cuda", imported["torch"]["cuda"], "torch.version.cuda")}
        )
    driver, gpus, why = nvml
    facts = facts.with_values({"driver": fact("driver", driver, "nvml") if driver else missing("nvml", why)})
    if gpus is not None:
        facts = facts.with_gpus(
            tuple(Gpu(g.get("name"), cc(g.get("cc")), "nvml", i) for i, g in enumerate(gpus)), "nvml"
        )
    facts = apply_overrides(
        Facts(values=facts.values, gpus=facts.gpus, gpus_source=facts.gpus_source), environ
    )
    report = check_stack(facts, get_matrix(matrix_dir(environ)), require_gpu=require_gpu)
    out = []
    for f in report.findings:
        if f.severity == "info":
            continue
        out.append((f, _frameworks_of(f)))
    return out


def _format(findings: Iterable[Finding]) -> str:
    lines = []
    for f in findings:
        lines.append(f"[{f.severity}] {f.title} ({f.id})")
        lines.append(f"    {f.message}")
        for fix in f.fixes:
            lines.append(f"    fix: {fix.text}" + (f": {fix.command}" if fix.command else ""))
    return "\n".join(lines)


def guard(
    *,
    fail_on: str = "error",
    require_gpu: bool = False,
    frameworks: Optional[Sequence[str]] = None,
    min_gpus: Optional[int] = None,
    min_free_gpu_memory: int | str | None = None,
    ignore: Sequence[str] = (),
    environ: Optional[Mapping[str, str]] = None,
) -> GuardResult:
    """Check this environment; raise IncompatibleEnvironment listing every problem, or warn with CompatWarning.

    fail_on: "error" or "warning" — the lowest severity that raises. require_gpu: no GPU is an error.
    frameworks: check only findings about these (e.g. ("torch",)). min_gpus / min_free_gpu_memory ("20GiB"):
    capacity requirements. ignore: finding ids (or id prefixes such as "known.") to drop.
    COMPAT_GUARD=off|warn|error overrides the behaviour without touching code.
    """
    env = os.environ if environ is None else environ
    mode = _mode(env)
    if mode == "off":
        return GuardResult([], False, "off")
    try:
        return _guard(env, mode, fail_on, require_gpu, frameworks, min_gpus, min_free_gpu_memory, ignore)
    except IncompatibleEnvironment:
        raise
    except (CompatError, ValueError) as exc:
        # A bad argument, override or matrix directory: the guard could not check. In warn mode nothing but a
        # warning; otherwise a GuardError, a RuntimeError like every exception the guard raises.
        if mode == "warn":
            import warnings

            warnings.warn(
                CompatWarning(f"compat.guard could not check this environment: {exc}"), stacklevel=3
            )
            return GuardResult([], False, mode)
        if isinstance(exc, GuardError):
            raise
        raise GuardError(str(exc)) from exc


_WARNED_MODES: set[str] = set()


def _mode(env: Mapping[str, str]) -> str:
    raw = env.get(GUARD_ENV) or "error"
    mode = raw.strip().lower()
    if mode in MODES:
        return mode
    if raw not in _WARNED_MODES:  # once per value and process
        _WARNED_MODES.add(raw)
        import warnings

        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        warnings.warn(
            CompatWarning(
                f"{GUARD_ENV}={shown!r} is not one of off, warn, error; using error "
                "(off: no check; warn: problems are warnings; error: errors raise IncompatibleEnvironment)"
            ),
            stacklevel=4,
        )
    return "error"


CRASH_PREFIX = "the NVIDIA driver library crashed"


def _crash_finding(why: str) -> Finding:
    return _finding(
        "driver.nvml",
        "error",
        "The NVIDIA driver library crashed",
        f"{why}. compat ran it in a child process; this training process will crash the same way when CUDA "
        "loads it.",
        (("Run `compat doctor` for the details", "compat doctor"),),
        group="driver",
    )


HANG_PREFIX = "NVML did not answer"  # compat.probes.nvml.read_nvml_light's reason for a hung child


def _hang_finding(why: str) -> Finding:
    """The doctor's driver.nvml finding for a hung NVML (compat.checks.doctor_gpu), for the guard."""
    return _finding(
        "driver.nvml",
        "error",
        "NVML hung: the driver is not answering",
        f"{why}. A GPU that fell off the bus (Xid 79) or a wedged driver does this; training processes hang the "
        "same way.",
        (
            ("Look for Xid errors in the kernel log", "sudo dmesg | grep -i xid"),
            ("Run `compat doctor`", "compat doctor"),
        ),
        group="driver",
    )


def _guard(
    env: Mapping[str, str],
    mode: str,
    fail_on: str,
    require_gpu: bool,
    frameworks: Optional[Sequence[str]],
    min_gpus: Optional[int],
    min_free_gpu_memory: int | str | None,
    ignore: Sequence[str],
) -> GuardResult:
    if fail_on not in ("error", "warning"):
        raise GuardError(f"fail_on must be 'error' or 'warning', got {fail_on!r}")
    from compat.guard_cache import cache_dir, cache_key, imported_frameworks, load_cache, store_cache

    need_free = parse_size(min_free_gpu_memory) if min_free_gpu_memory is not None else None
    need_gpu = require_gpu or bool(min_gpus) or need_free is not None

    options = {"require_gpu": need_gpu}
    key = cache_key(env, options)
    path = os.path.join(cache_dir(env), f"guard-{key}.json")
    cached = load_cache(path)
    nvml: Optional[tuple[Optional[str], Optional[list[dict[str, Any]]], str]] = None
    if cached is None:
        nvml = _nvml_gpus()
        cached_list = _evaluate(env, need_gpu, nvml)
        if nvml[2].startswith(CRASH_PREFIX):
            cached_list.insert(0, (_crash_finding(nvml[2]), ()))
        elif nvml[2].startswith(HANG_PREFIX):
            cached_list.insert(0, (_hang_finding(nvml[2]), ()))
        if nvml[1] is not None:
            # A verdict built on a failed probe (crashed, hung, garbled: no GPU list) is not cached: the key does
            # not cover the driver's state, and a repaired driver must be seen at once.
            store_cache(path, cached_list)
        from_cache = False
    else:
        cached_list = cached
        from_cache = True
    tagged: list[Tagged] = list(cached_list)

    # Live, uncached facts: GPU count and free memory change from run to run.
    if min_gpus or need_free is not None:
        nvml = nvml or _nvml_gpus()
        gpus = nvml[1] or []
        if min_gpus and len(gpus) < min_gpus:
            tagged.append(
                _tag(
                    "guard.min-gpus",
                    "error",
                    f"{len(gpus)} GPU(s) visible, {min_gpus} required",
                    f"guard(min_gpus={min_gpus}) but {len(gpus)} are visible ({nvml[2] or 'NVML'}).",
                    (("Check CUDA_VISIBLE_DEVICES and `compat doctor`", "compat doctor"),),
                )
            )
        if need_free is not None:
            for i, g in enumerate(gpus):
                free = g.get("memory_free")
                if isinstance(free, int) and free < need_free:
                    tagged.append(
                        _tag(
                            "guard.min-free-memory",
                            "error",
                            f"GPU {i} has {free / 2**30:.1f} GiB free, {need_free / 2**30:.1f} GiB required",
                            f"{g.get('name') or 'GPU'} {i}: other processes hold its memory.",
                            (
                                (
                                    "See which processes hold GPU memory",
                                    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
                                ),
                            ),
                        )
                    )

    # CUDA already initialised and the start method is fork: DataLoader workers will die.
    imported = imported_frameworks()
    if imported.get("torch", {}).get("cuda_initialized"):
        import multiprocessing

        method = multiprocessing.get_start_method(allow_none=True) or (
            "fork" if sys.platform.startswith("linux") else "spawn"
        )
        if method == "fork":
            tagged.append(
                _tag(
                    "cuda.fork",
                    "warning",
                    "CUDA is initialised and the multiprocessing start method is fork",
                    "Forked workers (DataLoader num_workers>0, multiprocessing.Pool) cannot use CUDA: 'Cannot re-initialize "
                    "CUDA in forked subprocess'.",
                    (
                        (
                            "Use the spawn start method before creating workers",
                            "multiprocessing.set_start_method('spawn', force=True)",
                        ),
                    ),
                    ("torch",),
                )
            )

    if frameworks is not None:
        wanted = set(frameworks)
        tagged = [(f, fw) for f, fw in tagged if not fw or wanted.intersection(fw)]
    if ignore:
        from compat.selection import matches  # the one id matcher (--ignore, [tool.compat], ignore=)

        tagged = [(f, fw) for f, fw in tagged if not matches(f.id, ignore)]
    findings = [f for f, _ in tagged]
    result = GuardResult(findings, from_cache, mode)
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    failing = [f for f in findings if f.severity in levels]
    below = [f for f in findings if f.severity not in levels]
    if mode == "warn":
        below, failing = findings, []
    if below:
        import warnings

        warnings.warn(CompatWarning("compat found problems:\n" + _format(below)), stacklevel=4)
    if failing:
        raise IncompatibleEnvironment(
            f"compat: this environment cannot train ({len(failing)} problem{'s' if len(failing) != 1 else ''}):\n"
            + _format(failing),
            failing,
        )
    return result
