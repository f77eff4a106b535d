"""Live probes of this machine: gather_facts() runs them in parallel, each bounded, and returns Facts.

One module per subject (nvml, nvidia_smi, driver, toolkits, cudnn, frameworks, resources, health, environment),
each a small acquire step and pure parsers. Nothing heavy is imported here: `import compat.probes` stays cheap.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from compat.errors import InputError
from compat.facts import Fact, Facts, Gpu, apply_overrides, host_os, host_python, make_fact, missing

if TYPE_CHECKING:
    from compat.probes.probeset import ProbeSet

DEFAULT_TIMEOUT = 5.0
"""Seconds any single external call (NVML, nvidia-smi, nvcc, dmesg) may take."""
FRAMEWORK_TIMEOUT_CAP = 20.0
"""Importing a framework in the child may take this long at most (4x the probe timeout by default)."""


def _fact(name: str, raw: Any, source: str, why_missing: str) -> Fact:
    if raw is None or str(raw).strip() == "":
        return missing(source, why_missing)
    try:
        return make_fact(name, str(raw), source)
    except InputError as exc:
        return missing(source, f"{source} gave a malformed value: {exc}")


def _timed(fn: Callable[[], Any], seconds: dict[str, float], name: str) -> Callable[[], Any]:
    def run() -> Any:
        t0 = time.monotonic()
        try:
            return fn()
        finally:
            seconds[name] = round(time.monotonic() - t0, 3)

    return run


def _gpu_probe(nvml_backend: Any, timeout: float, environ: Mapping[str, str]) -> dict[str, Any]:
    from compat.probes import nvidia_smi, nvml, nvml_parse

    raw = nvml.probe(nvml_backend, timeout)
    parsed = nvml_parse.parse(raw)
    from compat.probes.sanity import nvml_garbage  # issue 18: values no driver returns are a finding

    parsed["garbage"] = nvml_garbage(raw)
    out: dict[str, Any] = {"nvml_raw_status": raw.get("status"), "nvml": parsed}
    if parsed["ok"]:
        out["nvidia_smi"] = {"ok": False, "kind": "skipped", "message": "not needed: NVML answered"}
    else:
        smi_raw = nvidia_smi.probe(timeout, environ)
        out["nvidia_smi"] = {
            **nvidia_smi.parse(smi_raw),
            "status": smi_raw.get("status"),
            "fields": smi_raw.get("fields"),
        }
    return out


def gather_facts(
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    framework_timeout: float | None = None,
    frameworks: bool = True,
    cache: bool = True,
    nvml: Any = None,
    root: str = "/",
    cwd: str | None = None,
    framework_answers: Mapping[str, Callable[[], Any]] | None = None,
) -> Facts:
    """Probe this machine (or, with `python`, another interpreter's environment on it) and return Facts.

    Every probe runs in its own daemon thread under one deadline; a probe that hangs, crashes or is denied is
    recorded in Facts.probes with its status and error, never raised. `cache=False` re-imports every framework
    even when nothing changed since the last successful import (see frameworks.cache_key) and asks nvcc and the
    compiler again (compat.probes.toolcache). `nvml` replaces the pynvml module (tests),
    `root` re-roots /proc, /sys and /dev reads (tests). COMPAT_OVERRIDE_<FACT> variables in `environ` apply last.
    """
    from compat.probes import cudnn, driver, environment, health, resources, toolchain, toolkits
    from compat.probes import frameworks as fwmod
    from compat.probes.host import HostFS, run_bounded

    env: dict[str, str] = dict(os.environ if environ is None else environ)
    fs = HostFS(env.get("COMPAT_HOST_ROOT") or root)  # a recorded host's /proc, /sys, /dev (tests, replays)
    ft = framework_timeout if framework_timeout is not None else min(4 * timeout, FRAMEWORK_TIMEOUT_CAP)
    seconds: dict[str, float] = {}
    tasks: dict[str, Callable[[], Any]] = {
        "gpu": lambda: _gpu_probe(nvml, timeout, env),
        "driver": lambda: driver.probe(fs, env),
        "toolkits": lambda: toolkits.probe(fs, env, timeout, cache),
        "cudnn": lambda: cudnn.probe(fs, env),
        "frameworks": lambda: fwmod.probe(
            python,
            env,
            timeout=ft,
            frameworks=frameworks,
            cache=cache,
            meta_timeout=timeout,
            answers=framework_answers,
        ),
        "resources": lambda: resources.probe(fs, env, cwd),
        "health": lambda: health.probe(fs, env, timeout),
        "environment": lambda: environment.probe(fs, env),
        "toolchain": lambda: toolchain.probe(env, timeout, cache),
    }
    # One after the other: NVML then nvidia-smi; dmesg, /dev/kmsg then journalctl; another interpreter's metadata
    # then its framework imports. With the defaults (5 s, 20 s) the worst case is 27 s.
    deadline = max(ft + timeout + 2.0, 3 * timeout + 2.0)
    t0 = time.monotonic()
    res = run_bounded({k: _timed(fn, seconds, k) for k, fn in tasks.items()}, deadline)
    probes = assemble_probes(res)
    probes["meta"] = {
        "timeout": timeout,
        "framework_timeout": ft,
        "seconds": dict(sorted(seconds.items())),
        "total_seconds": round(time.monotonic() - t0, 3),
        "python": python,
        "probes": sorted(k for k in probes if k != "meta" and not k.startswith("_")),
    }
    facts = facts_from_probes(probes, res)
    return apply_overrides(facts, env)


def _status(p: Any) -> dict[str, Any]:
    return p if isinstance(p, dict) else {"status": "error", "error": f"unexpected probe result {p!r}"}


def assemble_probes(res: Mapping[str, Any]) -> dict[str, Any]:
    """Raw probe results -> Facts.probes: each subject with its status and the analysis the checks read."""
    from compat.probes import cudnn, driver, toolkits

    probes: dict[str, Any] = {}
    gpu = _status(res.get("gpu"))
    if gpu.get("status") in ("timeout", "error"):
        probes["nvml"] = {
            "status": gpu["status"],
            "kind": "hang" if gpu["status"] == "timeout" else "error",
            "message": str(gpu.get("error")),
        }
        probes["nvidia_smi"] = {"ok": False, "kind": "skipped", "message": "not reached"}
    else:
        nv = gpu["nvml"]
        probes["nvml"] = (
            {
                "status": "ok",
                "driver": nv.get("driver"),
                "driver_cuda": nv.get("driver_cuda"),
                "nvml_version": nv.get("nvml_version"),
                "device_count": len(nv.get("gpus") or []),
                **({"garbage": nv["garbage"]} if nv.get("garbage") else {}),
            }
            if nv.get("ok")
            else {
                "status": gpu.get("nvml_raw_status") or "error",
                "kind": nv.get("kind"),
                "message": nv.get("message"),
                "code": nv.get("code"),
            }
        )
        probes["nvidia_smi"] = {k: v for k, v in gpu["nvidia_smi"].items() if k != "gpus"}
        probes["_gpus"] = nv.get("gpus") if nv.get("ok") else gpu["nvidia_smi"].get("gpus")
        probes["_gpu_source"] = (
            "nvml" if nv.get("ok") else ("nvidia-smi" if gpu["nvidia_smi"].get("ok") else None)
        )
    d = _status(res.get("driver"))
    probes["driver"] = (
        {"status": "ok", **driver.analyse(d), "errors": d.get("errors") or {}}
        if d.get("status") == "ok"
        else d
    )
    t = _status(res.get("toolkits"))
    probes["toolkits"] = {**t, **toolkits.analyse(t)} if t.get("status") == "ok" else t
    fw = _status(res.get("frameworks"))
    probes["frameworks"] = fw
    c = _status(res.get("cudnn"))
    probes["cudnn"] = (
        {**c, **cudnn.analyse(c, fw.get("distributions") or {})} if c.get("status") == "ok" else c
    )
    for name in ("resources", "health", "environment", "toolchain"):
        probes[name] = _status(res.get(name))
    return probes


def facts_from_probes(probes: dict[str, Any], res: Mapping[str, Any] | None = None) -> Facts:
    """The scalar facts and GPUs the resolver reads, and the typed probe results (compat.probes.probeset.ProbeSet),
    from assembled probes (pops the private _gpus keys)."""
    from compat.installed import installed_facts, jax_from_distributions
    from compat.probes.frameworks import tf_facts, torch_facts
    from compat.probes.model import Cudnn, DriverState, Frameworks, NvidiaSmi, NvmlState, Toolkits
    from compat.probes.probeset import ProbeSet

    values: dict[str, Fact] = {"os": make_fact("os", host_os(), "this machine")}
    gpus_raw = probes.pop("_gpus", None)
    gpu_source = probes.pop("_gpu_source", None)
    # What crosses into the checks, the report and snapshots: the typed probe results; read here typed as well.
    ps = ProbeSet.from_json(probes)
    nv = ps.nvml
    smi = ps.nvidia_smi or NvidiaSmi()
    drv = ps.driver if isinstance(ps.driver, DriverState) else DriverState()
    why_no_driver = _why_no_driver(ps)

    # driver: NVML, else nvidia-smi, else the kernel module's own version.
    if isinstance(nv, NvmlState) and nv.status == "ok" and nv.driver:
        values["driver"] = _fact("driver", nv.driver, "nvml", why_no_driver)
    elif smi.ok and smi.driver:
        values["driver"] = _fact("driver", smi.driver, "nvidia-smi", why_no_driver)
    elif drv.kernel_version and not drv.tegra:
        values["driver"] = _fact("driver", drv.kernel_version, "/proc/driver/nvidia/version", why_no_driver)
    else:
        values["driver"] = missing("nvml", why_no_driver)
    if isinstance(nv, NvmlState) and nv.status == "ok" and nv.driver_cuda:
        values["driver_cuda"] = _fact("driver_cuda", nv.driver_cuda, "nvmlSystemGetCudaDriverVersion", "")
    else:
        values["driver_cuda"] = missing("nvml", why_no_driver)

    tk = ps.toolkits
    chosen = tk.chosen if isinstance(tk, Toolkits) and tk.status == "ok" else None
    values["cuda"] = (
        _fact("cuda", chosen.version, str(chosen.source), "")
        if chosen is not None and chosen.version
        else missing(
            "toolkits",
            "no CUDA toolkit found (nvcc not on PATH, no CUDA_HOME, no /usr/local/cuda)"
            if isinstance(tk, Toolkits) and tk.status == "ok"
            else f"toolkits probe: {tk.reason if tk is not None and not isinstance(tk, Toolkits) else None}",
        )
    )
    cd = ps.cudnn
    cc = cd.chosen if isinstance(cd, Cudnn) and cd.status == "ok" else None
    values["cudnn"] = (
        _fact("cudnn", cc.version, str(cc.source), "")
        if cc is not None and cc.version
        else missing(
            "cudnn", "no cuDNN found (no cudnn_version.h, no libcudnn.so.X.Y.Z, no nvidia-cudnn-cu*)"
        )
    )

    fw = ps.frameworks if isinstance(ps.frameworks, Frameworks) else Frameworks()
    target = ps.meta.python if ps.meta is not None else None
    if fw.python:
        values["python"] = _fact(
            "python", fw.python, f"{target} (sys.version)" if target else "sys.version", ""
        )
    else:
        values["python"] = make_fact("python", host_python(), "sys.version")
    if fw.status == "ok":
        # The cheap facts (versions, the CUDA and cuDNN their nvidia-* pins imply); the child's answers win below.
        dists = dict(fw.distributions)
        base = installed_facts(dists, {k: list(v) for k, v in fw.requires.items()})
        for name in ("torch", "torch_cuda", "torch_cudnn", "torch_build", "tensorflow", "tf_build"):
            f = base.values.get(name)
            if f is not None and f.present:
                values[name] = f
        jax_fact = jax_from_distributions(dists)
        if jax_fact is not None:
            values["jax"] = _fact(
                "jax", jax_fact, "installed distributions (jax, jaxlib, jax-cudaNN-plugin)", ""
            )
            if dists.get("jaxlib"):
                values["jaxlib"] = _fact("jaxlib", str(dists["jaxlib"]), "installed distribution jaxlib", "")
        # The static reads (a framework's files, not imported) and the children's answers are the frameworks
        # module's own JSON shapes, which torch_facts and tf_facts parse.
        st = fw.static.get("torch")
        if isinstance(st, dict) and st.get("version"):
            for name, raw in torch_facts(st).items():
                if name in ("torch_cuda", "torch_build") and raw is not None:
                    values[name] = _fact(name, raw, f"{st.get('path')} (not imported)", "")
        stf = fw.static.get("tensorflow")
        if isinstance(stf, dict) and isinstance(stf.get("build_info"), dict) and stf["build_info"]:
            for name, raw in tf_facts({"build_info": stf["build_info"]}).items():
                if name != "tensorflow" and raw is not None:
                    values[name] = _fact(name, raw, f"{stf.get('path')} (not imported)", "")
        t = fw.children.get("torch")
        if t is not None and t.status == "ok" and t.result is not None and t.result.to_json():
            for name, raw in torch_facts(t.result.to_json()).items():
                if raw is not None:
                    values[name] = _fact(name, raw, _TORCH_SOURCES[name], "")
                elif name != "torch":
                    values.pop(name, None)
        tf = fw.children.get("tensorflow")
        if tf is not None and tf.status == "ok" and tf.result is not None and tf.result.to_json():
            for name, raw in tf_facts(tf.result.to_json()).items():
                if raw is not None:
                    values[name] = _fact(name, raw, _TF_SOURCES[name], "")
    gpus, gsrc = _gpus(gpus_raw, gpu_source, ps, why_no_driver)
    return Facts(values=values, gpus=gpus, gpus_source=gsrc, probes=ps)


_TORCH_SOURCES = {
    "torch": "torch.__version__",
    "torch_cuda": "torch.version.cuda",
    "torch_cudnn": "torch.backends.cudnn.version()",
    "torch_archs": "torch._C._cuda_getArchFlags()",
    "torch_build": "torch.version",
}
_TF_SOURCES = {
    "tensorflow": "tf.__version__",
    "tf_cuda": "tf.sysconfig.get_build_info()",
    "tf_cudnn": "tf.sysconfig.get_build_info()",
    "tf_archs": "tf.sysconfig.get_build_info()",
    "tf_build": "tf.sysconfig.get_build_info()",
}


def _why_no_driver(ps: ProbeSet) -> str:
    from compat.probes.model import DriverState, ProbeFailed

    nv = ps.nvml
    kind = nv.cause if isinstance(nv, ProbeFailed) else None
    if kind == "library-not-found":
        base = "no NVIDIA driver (libnvidia-ml.so.1 not found)"
    elif kind == "driver-not-loaded":
        base = "the NVIDIA kernel module is not loaded"
    elif kind == "version-mismatch":
        base = "driver/library version mismatch (the driver was upgraded without a reboot)"
    elif kind == "hang":
        base = "NVML hung"
    elif isinstance(nv, ProbeFailed) and nv.reason:
        base = f"NVML: {nv.reason}"
    else:
        base = "NVIDIA driver not found"
    if isinstance(ps.driver, DriverState) and ps.driver.tegra:
        base += "; Jetson (L4T) prints no desktop driver version"
    return base


def _gpus(
    gpus_raw: Any,
    source: str | None,
    ps: ProbeSet,
    why: str,
) -> tuple[tuple[Gpu, ...] | None, str]:
    from compat.probes.model import DriverState, NvidiaSmi, ProbeFailed

    if gpus_raw is not None and source:
        out = []
        for i, g in enumerate(gpus_raw):
            cc = g.get("cc")
            try:
                from compat.versions import parse_cc

                cc = str(parse_cc(cc)) if cc else None
            except InputError:
                cc = None
            out.append(
                Gpu(
                    name=g.get("name"),
                    cc=cc,
                    source=source,
                    index=g.get("index") if isinstance(g.get("index"), int) else i,
                    details=g.get("details") or {},
                )
            )
        return tuple(out), source
    kind = ps.nvml.cause if isinstance(ps.nvml, ProbeFailed) else None
    smi = ps.nvidia_smi or NvidiaSmi()
    # Known to have no usable GPU: no driver library at all, or the module is not loaded, and nvidia-smi agrees.
    if kind in ("library-not-found", "driver-not-loaded", "version-mismatch", "binding-missing") and (
        smi.kind in ("missing", "no-driver", "no-devices", "version-mismatch", "skipped", None)
    ):
        pci = ps.driver.pci_gpus if isinstance(ps.driver, DriverState) else ()
        if pci:
            return (), f"{len(pci)} NVIDIA GPU(s) on the PCI bus but {why}"
        return (), why
    if smi.kind == "no-devices":
        return (), "nvidia-smi: No devices were found"
    return None, f"unknown: {why}" + (f"; nvidia-smi: {smi.message}" if smi.message else "")


__all__ = ["DEFAULT_TIMEOUT", "assemble_probes", "facts_from_probes", "gather_facts"]
