"""The doctor's checks: pure functions of Facts (their .probes and .gpus) for compat.resolver.resolve(extra_checks=).

Each yields Findings with a stable id, or a Skip with the reason when the probe it needs could not run. They read
only Facts, so `compat check --snapshot FILE` on another machine reproduces them (`doctor_checks`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from typing import Any, Callable

from packaging.version import InvalidVersion, Version

from compat.findings import SEVERITIES, Finding, Fix, Skip
from compat.resolver import GPU_REQUIRED, Ctx, Result, driver_can_run

# Stable check ids. Never renumber or rename.
GPU_NONE = "gpu.none"
DRIVER_MISSING = "driver.missing"
DRIVER_NOUVEAU = "driver.nouveau"
DRIVER_MISMATCH = "driver.mismatch"
DRIVER_DEV_NODES = "driver.dev-nodes"
DRIVER_NVML = "driver.nvml"
DRIVER_NVIDIA_SMI = "driver.nvidia-smi"
DRIVER_CONTAINER = "driver.container"
DRIVER_WSL = "driver.wsl"
ENV_VISIBLE = "env.cuda-visible-devices"
ENV_LAUNCH_BLOCKING = "env.launch-blocking"
ENV_SETTINGS = "env.settings"
GPU_MEMORY = "gpu.memory-in-use"
GPU_MIG = "gpu.mig"
GPU_THERMAL = "gpu.thermal"
GPU_THROTTLE = "gpu.throttle"
GPU_POWER = "gpu.power"
GPU_ECC = "gpu.ecc"
GPU_RETIRED = "gpu.retired-pages"
GPU_PCIE = "gpu.pcie"
GPU_XID = "gpu.xid"
HOST_OOM = "host.oom"
HOST_CGROUP_OOM = "host.cgroup-oom"
HOST_SHM = "host.shm"
HOST_MEMORY = "host.memory"
HOST_NOFILE = "host.nofile"
HOST_CPU_QUOTA = "host.cpu-quota"
HOST_DISK = "host.disk"
TOOLKIT_MULTIPLE = "toolkit.multiple"
LIBS_SHADOWED = "libs.shadowed"
CUDNN_MULTIPLE = "cudnn.multiple"
FRAMEWORK_IMPORT = "framework.import-failed"
FRAMEWORK_NO_CUDA = "framework.cuda-unavailable"
FRAMEWORK_PINS = "framework.pins-conflict"
PYTHON_INTERPRETER = "python.interpreter"
PROBE_FAILED = "probe.failed"

DOCTOR_CHECK_IDS = (
    GPU_NONE,
    DRIVER_MISSING,
    DRIVER_NOUVEAU,
    DRIVER_MISMATCH,
    DRIVER_DEV_NODES,
    DRIVER_NVML,
    DRIVER_NVIDIA_SMI,
    DRIVER_CONTAINER,
    DRIVER_WSL,
    ENV_VISIBLE,
    ENV_LAUNCH_BLOCKING,
    ENV_SETTINGS,
    GPU_MEMORY,
    GPU_MIG,
    GPU_THERMAL,
    GPU_THROTTLE,
    GPU_POWER,
    GPU_ECC,
    GPU_RETIRED,
    GPU_PCIE,
    GPU_XID,
    HOST_OOM,
    HOST_CGROUP_OOM,
    HOST_SHM,
    HOST_MEMORY,
    HOST_NOFILE,
    HOST_CPU_QUOTA,
    HOST_DISK,
    TOOLKIT_MULTIPLE,
    LIBS_SHADOWED,
    CUDNN_MULTIPLE,
    FRAMEWORK_IMPORT,
    FRAMEWORK_NO_CUDA,
    FRAMEWORK_PINS,
    PYTHON_INTERPRETER,
    PROBE_FAILED,
)

GIB = 1024**3
MIB = 1024**2
SHM_MIN = 1 * GIB  # Docker's default is 64 MiB; DataLoader workers pass batches through /dev/shm.
NOFILE_MIN = 1024
DISK_MIN = 2 * GIB
MEMORY_LOW = 2 * GIB


def _gib(n: Any) -> str:
    if not isinstance(n, (int, float)):
        return "?"
    if n < GIB:
        return f"{n / MIB:.0f} MiB"
    return f"{n / GIB:.1f} GiB"


def _probe(ctx: Ctx, name: str) -> Mapping[str, Any] | None:
    p = ctx.facts.probes.get(name)
    return p if isinstance(p, Mapping) else None


def _failed(p: Mapping[str, Any] | None, name: str) -> str | None:
    """Why probe `name` has no data (None when it has)."""
    if p is None:
        return f"no {name} probe data"
    if p.get("status") in ("timeout", "error"):
        err = p.get("error")
        return f"{name} probe: {err.get('message') if isinstance(err, Mapping) else err}"
    return None


def _gpu_label(g: Any) -> str:
    return f"GPU {g.index} ({g.name or 'unknown'})"


def _real_gpus(ctx: Ctx) -> list[Any]:
    return list(ctx.facts.gpus or [])


# ------------------------------------------------------------------ driver & GPUs


def _nvml(ctx: Ctx) -> Mapping[str, Any]:
    return _probe(ctx, "nvml") or {}


def _smi(ctx: Ctx) -> Mapping[str, Any]:
    return _probe(ctx, "nvidia_smi") or {}


def _drv(ctx: Ctx) -> Mapping[str, Any]:
    return _probe(ctx, "driver") or {}


def _env(ctx: Ctx) -> Mapping[str, Any]:
    return _probe(ctx, "environment") or {}


def _kernel_notes(ctx: Ctx, kind: str) -> list[Mapping[str, Any]]:
    h = _probe(ctx, "health") or {}
    return [n for n in h.get("notes") or [] if n.get("kind") == kind]


def _why_no_gpu(ctx: Ctx) -> str:
    parts = []
    nv = _nvml(ctx)
    if nv.get("status") not in (None, "ok"):
        parts.append(f"NVML: {nv.get('message')}")
    smi = _smi(ctx)
    if smi and not smi.get("ok") and smi.get("kind") != "skipped":
        parts.append(f"nvidia-smi: {smi.get('message')}")
    drv = _drv(ctx)
    if drv.get("pci_readable") and not drv.get("pci_gpus"):
        parts.append("no NVIDIA GPU on the PCI bus")
    return "; ".join(parts) or (ctx.facts.gpus_source or "no GPU reported")


def check_gpu_presence(ctx: Ctx) -> Iterator[Result]:
    """No GPU (info), a GPU without a working driver, nouveau, a container without the NVIDIA runtime."""
    gpus = ctx.facts.gpus
    if gpus:
        return
    drv = _drv(ctx)
    env = _env(ctx)
    pci = list(drv.get("pci_gpus") or [])
    cont = env.get("container") or {}
    pci_txt = ", ".join(
        f"{p.get('address')} (device {p.get('device')}, kernel driver: {p.get('driver') or 'none'})"
        for p in pci[:4]
    )
    if drv.get("nouveau"):
        yield Finding(
            DRIVER_NOUVEAU,
            "error",
            "The open-source nouveau driver holds the GPU, not NVIDIA's driver",
            "The nouveau kernel module is loaded"
            + (f" and has claimed {pci_txt}" if pci_txt else "")
            + ". CUDA only works with NVIDIA's driver, and NVIDIA's module cannot bind a GPU nouveau already owns "
            "(kernel log: 'NVRM: The NVIDIA probe routine was not called').",
            (
                Fix(
                    "Blacklist nouveau, rebuild the initramfs and reboot",
                    "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
                    "/etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot",
                ),
                Fix("Then install NVIDIA's driver (Ubuntu)", "sudo ubuntu-drivers install"),
            ),
            {"pci_gpus": [p.get("address") for p in pci]},
            group="driver",
        )
        return
    if drv.get("mismatch") or _mismatch_evidence(ctx):
        return  # check_driver_state explains it
    if pci:
        nv = _nvml(ctx)
        loaded = drv.get("nvidia_module_loaded")
        notes = _kernel_notes(ctx, "probe-not-called") + _kernel_notes(ctx, "rm-init-failed")
        why = f"NVML says: {nv.get('message')}" if nv.get("message") else "no NVIDIA driver answers"
        msg = (
            f"This machine has {len(pci)} NVIDIA GPU(s) on the PCI bus ({pci_txt}) but {why}. "
            + ("The nvidia kernel module is not loaded. " if loaded is False else "")
            + (f"Kernel log: {notes[0].get('message')}. " if notes else "")
            + "Frameworks will see no GPU and train on the CPU."
        )
        fixes = [
            Fix(
                "Install NVIDIA's driver (Ubuntu; elsewhere use your distribution's package or NVIDIA's "
                "installer)",
                "sudo ubuntu-drivers install",
            )
        ]
        if loaded is False or not drv.get("dev_nodes"):
            fixes.append(
                Fix(
                    "If it is installed, load the module and read why it fails (Secure Boot refuses "
                    "unsigned modules)",
                    "sudo modprobe nvidia; sudo dmesg | grep -i nvrm | tail",
                )
            )
        yield Finding(
            DRIVER_MISSING,
            "error",
            "NVIDIA GPU present but no working NVIDIA driver",
            msg,
            tuple(fixes),
            {"pci_gpus": [p.get("address") for p in pci]},
            group="driver",
        )
        return
    if gpus is None:
        if ctx.require_gpu:
            yield Finding(
                GPU_REQUIRED,
                "error",
                "A GPU is required but none could be confirmed",
                f"A GPU was required (--require-gpu) and the probes could not list one: {_why_no_gpu(ctx)}.",
                (Fix("See the driver findings above"),),
                group="driver",
            )
        return
    in_container = bool(cont.get("in_container"))
    nvd = cont.get("nvidia_visible_devices")
    no_injection = not drv.get("dev_nodes") and not drv.get("userspace_versions")
    if in_container and no_injection and (nvd not in (None, "", "void", "none") or ctx.require_gpu):
        sev = "error" if ctx.require_gpu else "warning"
        yield Finding(
            DRIVER_CONTAINER,
            sev,
            "This container was started without GPU access",
            f"Running in a container ({', '.join(cont.get('signs') or [])})"
            + (f" whose image expects a GPU (NVIDIA_VISIBLE_DEVICES={nvd})" if nvd else "")
            + ", but no /dev/nvidia* device and no libnvidia-ml.so were injected: the container was not started "
            "with the NVIDIA container runtime.",
            (
                Fix("Start it with GPU access", "docker run --gpus all ..."),
                Fix(
                    "Install the NVIDIA Container Toolkit on the host once, then restart Docker",
                    "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
                ),
            ),
            {"container": cont.get("signs")},
            group="driver",
        )
        return
    if ctx.require_gpu:
        return  # the resolver's gpu.required error says it
    hint = (
        " In a container, start it with `docker run --gpus all` to give it the host's GPU."
        if in_container
        else ""
    )
    yield Finding(
        GPU_NONE,
        "info",
        "No NVIDIA GPU on this machine",
        f"No NVIDIA GPU was found ({_why_no_gpu(ctx)}). That is fine for CPU-only work: the checks of frameworks, "
        f"Python and resources still ran; GPU and driver checks were skipped.{hint}",
        (),
        {"gpus": 0},
        group="driver",
    )


def _mismatch_evidence(ctx: Ctx) -> list[str]:
    ev = []
    nv = _nvml(ctx)
    if nv.get("kind") == "version-mismatch":
        ev.append("NVML: Driver/library version mismatch")
    smi = _smi(ctx)
    if smi.get("kind") == "version-mismatch":
        ev.append(
            "nvidia-smi: Failed to initialize NVML: Driver/library version mismatch"
            + (f" (NVML library version {smi.get('library_version')})" if smi.get("library_version") else "")
        )
    for n in _kernel_notes(ctx, "api-mismatch"):
        ev.append(
            f"kernel log: the client has the version {n.get('client')}, the kernel module {n.get('kernel')}"
        )
    return ev


def check_driver_state(ctx: Ctx) -> Iterator[Result]:
    """Kernel module vs user-space libraries, device nodes, a hung or failing NVML, a misbehaving nvidia-smi."""
    drv = _drv(ctx)
    nv = _nvml(ctx)
    env = _env(ctx)
    evidence = _mismatch_evidence(ctx)
    kernel = drv.get("kernel_version")
    user = list(drv.get("userspace_versions") or [])
    if drv.get("mismatch") or evidence:
        smi_lib = _smi(ctx).get("library_version")
        user_txt = ", ".join(user) or smi_lib or "a different version"
        yield Finding(
            DRIVER_MISMATCH,
            "error",
            "Driver/library version mismatch: the driver was upgraded without a reboot",
            f"The loaded kernel module is {kernel or 'unknown'} but the user-space driver libraries are {user_txt}. "
            "CUDA, NVML and nvidia-smi refuse to work until both are the same version"
            + (f" ({'; '.join(evidence)})" if evidence else "")
            + ".",
            (
                Fix("Reboot, so the new kernel module is loaded", "sudo reboot"),
                Fix(
                    "Or reload the modules without rebooting (stop every process using the GPU first)",
                    "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia && "
                    "sudo modprobe nvidia_uvm",
                ),
            ),
            {"kernel_module": kernel, "userspace": user or smi_lib},
            group="driver",
        )
    driver_up = bool(ctx.facts.gpus) or drv.get("nvidia_module_loaded") is True
    if driver_up and not env.get("wsl"):
        nodes = list(drv.get("dev_nodes") or [])
        denied = list(drv.get("dev_inaccessible") or [])
        missing = [
            n
            for n, ok in (
                ("/dev/nvidiactl", drv.get("has_nvidiactl")),
                ("/dev/nvidia-uvm", drv.get("has_uvm")),
            )
            if not ok
        ]
        if nodes and missing:
            yield Finding(
                DRIVER_DEV_NODES,
                "error",
                f"{' and '.join(missing)} missing",
                f"The NVIDIA driver is loaded but {', '.join(missing)} does not exist. Without /dev/nvidia-uvm the "
                "CUDA runtime fails with 'CUDA unknown error' (999) or finds no device.",
                (Fix("Create the device nodes", "sudo nvidia-modprobe -u -c=0"),),
                {"dev_nodes": nodes},
                group="driver",
            )
        elif not nodes and not ctx.facts.gpus and not (env.get("container") or {}).get("in_container"):
            # (in a container the host's modules show in /proc/modules: no device nodes there means no GPU was
            # given to it, which check_gpu_presence reports)
            yield Finding(
                DRIVER_DEV_NODES,
                "error",
                "No /dev/nvidia* device nodes",
                "The NVIDIA kernel module is loaded but no /dev/nvidia* device exists, so no program can open the GPU.",
                (Fix("Create the device nodes", "sudo nvidia-modprobe -u -c=0"),),
                {},
                group="driver",
            )
        if denied:
            yield Finding(
                DRIVER_DEV_NODES,
                "error",
                f"No permission to open {', '.join(denied[:3])}",
                f"This user cannot open {', '.join(denied)} for reading and writing, so CUDA finds no device "
                "(NVML: Insufficient Permissions).",
                (
                    Fix(
                        "Add the user to the group that owns the device nodes, then log in again",
                        "sudo usermod -aG video $USER",
                    ),
                ),
                {"dev_nodes": denied},
                group="driver",
            )
    kind = nv.get("kind")
    if nv.get("status") == "timeout" or kind == "hang":
        yield Finding(
            DRIVER_NVML,
            "error",
            "NVML hung: the driver is not answering",
            f"{nv.get('message')}. A GPU that fell off the bus (Xid 79) or a wedged driver does this; training "
            "processes hang the same way.",
            (
                Fix("Look for Xid errors in the kernel log", "sudo dmesg | grep -i xid"),
                Fix("Reset the GPU, or reboot if that fails", "sudo nvidia-smi -r"),
            ),
            {},
            group="driver",
        )
    elif kind == "crashed":
        yield Finding(
            DRIVER_NVML,
            "error",
            "The NVIDIA driver library crashed",
            f"{nv.get('message')}. compat ran it in a child process; a training process that loads it "
            "(CUDA, PyTorch, TensorFlow, JAX) will crash the same way. A libnvidia-ml.so.1 from another driver "
            "release than the loaded kernel module, or a damaged installation, does this.",
            (
                Fix("See which libnvidia-ml.so.1 is loaded", "ldconfig -p | grep libnvidia-ml"),
                Fix("Reinstall the NVIDIA driver, then reboot"),
            ),
            {},
            group="driver",
        )
    elif kind in ("gpu-lost", "reset-required"):
        yield Finding(
            DRIVER_NVML,
            "error",
            "A GPU is lost or needs a reset",
            f"NVML: {nv.get('message')}.",
            (Fix("Reset the GPU, or reboot if that fails", "sudo nvidia-smi -r"),),
            {},
            group="driver",
        )
    elif kind == "no-permission":
        yield Finding(
            DRIVER_NVML,
            "warning",
            "NVML: insufficient permissions",
            f"NVML: {nv.get('message')}.",
            (Fix("Check the permissions of /dev/nvidia*", "ls -l /dev/nvidia*"),),
            {},
            group="driver",
        )
    elif kind == "binding-missing":
        yield Finding(
            DRIVER_NVML,
            "info",
            "nvidia-ml-py is not installed; GPU details come from nvidia-smi",
            f"{nv.get('message')}.",
            (Fix("Install it", "pip install nvidia-ml-py"),),
            {},
            group="driver",
        )
    elif nv.get("status") == "error" and kind not in (
        "library-not-found",
        "driver-not-loaded",
        "version-mismatch",
    ):
        yield Finding(
            DRIVER_NVML,
            "warning",
            "NVML failed",
            f"NVML: {nv.get('message')}.",
            (Fix("Read the driver's kernel messages", "sudo dmesg | grep -i nvrm | tail"),),
            {},
            group="driver",
        )
    smi = _smi(ctx)
    if smi.get("kind") in ("hang", "crashed", "garbage", "error", "failed", "gpu-lost", "nvml-unknown"):
        text = {
            "hang": "nvidia-smi hung",
            "crashed": "nvidia-smi crashed",
            "garbage": "nvidia-smi printed garbage",
            "gpu-lost": "nvidia-smi: a GPU is lost",
            "nvml-unknown": "nvidia-smi: Failed to initialize NVML: Unknown Error",
        }.get(str(smi.get("kind")), "nvidia-smi failed")
        extra = (
            " In a container this usually means the cgroup device rules were lost (systemd reloaded on the "
            "host): restart the container."
            if smi.get("kind") == "nvml-unknown"
            else ""
        )
        yield Finding(
            DRIVER_NVIDIA_SMI,
            "warning",
            text,
            f"{smi.get('message')}.{extra}",
            (Fix("Run it by hand to see the full output", "nvidia-smi"),),
            {},
            group="driver",
        )
    if env.get("wsl") and env.get("wsl_lib") is False:
        yield Finding(
            DRIVER_WSL,
            "warning",
            "WSL without the Windows GPU driver bridge",
            "This is WSL, but /usr/lib/wsl/lib/libcuda.so is missing: under WSL the GPU driver is the Windows one, "
            "shared into Linux; a Linux NVIDIA driver must not be installed inside WSL.",
            (
                Fix(
                    "Install or update the NVIDIA driver on Windows (it includes WSL support), then `wsl --shutdown`"
                ),
            ),
            {},
            group="driver",
        )


def check_visible_devices(ctx: Ctx) -> Iterator[Result]:
    from compat.probes.environment import visible_devices

    env = _env(ctx)
    value = (env.get("vars") or {}).get("CUDA_VISIBLE_DEVICES")
    gpus = _real_gpus(ctx)
    if value is None or not gpus:
        return
    uuids = [str(g.details.get("uuid")) for g in gpus if g.details.get("uuid")]
    vis = visible_devices(value, len(gpus), uuids or None)
    if vis["hides_all"]:
        yield Finding(
            ENV_VISIBLE,
            "error",
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU",
            f"This machine has {len(gpus)} GPU(s) but CUDA_VISIBLE_DEVICES={value!r}"
            + (
                f" (CUDA stops at {vis['invalid']!r}, which is not a GPU index or UUID)"
                if vis["invalid"]
                else ""
            )
            + ", so torch.cuda.is_available() is False and frameworks train on the CPU.",
            (
                Fix(
                    "Unset it, or name the GPUs to use",
                    "unset CUDA_VISIBLE_DEVICES  # or: export CUDA_VISIBLE_DEVICES=0",
                ),
            ),
            {"CUDA_VISIBLE_DEVICES": value, "gpus": len(gpus)},
            group="environment",
        )
    elif vis["invalid"] is not None:
        yield Finding(
            ENV_VISIBLE,
            "warning",
            f"CUDA_VISIBLE_DEVICES={value!r} stops at {vis['invalid']!r}",
            f"CUDA reads CUDA_VISIBLE_DEVICES up to the first entry that is not a valid GPU: only "
            f"{', '.join(vis['visible'])} are visible and everything from {vis['invalid']!r} on is ignored.",
            (Fix(f"Use indices below {len(gpus)} or GPU UUIDs (nvidia-smi -L)"),),
            {"CUDA_VISIBLE_DEVICES": value, "gpus": len(gpus)},
            group="environment",
        )


def check_gpu_usage(ctx: Ctx) -> Iterator[Result]:
    for g in _real_gpus(ctx):
        d = g.details
        total, used = d.get("memory_total"), d.get("memory_used")
        if isinstance(total, int) and isinstance(used, int) and total > 0 and used / total > 0.5:
            procs = d.get("processes") or []
            who = ", ".join(
                f"pid {p.get('pid')}" + (f" ({_gib(p.get('used_memory'))})" if p.get("used_memory") else "")
                for p in procs[:5]
            )
            yield Finding(
                GPU_MEMORY,
                "warning",
                f"{_gpu_label(g)}: {_gib(used)} of {_gib(total)} already in use",
                f"{_gpu_label(g)} has only {_gib(d.get('memory_free'))} free"
                + (f"; held by {who}" if who else "")
                + ". A new training job may fail with 'CUDA out of memory'.",
                (
                    Fix(
                        "See which processes hold GPU memory",
                        "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                    ),
                ),
                {"gpu": g.index, "memory_used": used, "memory_total": total},
                group="driver",
            )
        mig = d.get("mig_mode")
        if isinstance(mig, Mapping) and (mig.get("current") or mig.get("pending")):
            yield Finding(
                GPU_MIG,
                "info",
                f"{_gpu_label(g)}: MIG mode is {'on' if mig.get('current') else 'pending'}",
                "With MIG on, CUDA sees only the MIG instances (none until they are created), each with a slice of "
                "the memory; select one with CUDA_VISIBLE_DEVICES=MIG-<uuid>.",
                (Fix("List the MIG devices", "nvidia-smi -L"),),
                {"gpu": g.index},
                group="driver",
            )


# ------------------------------------------------------------------ health


def check_gpu_health(ctx: Ctx) -> Iterator[Result]:
    for g in _real_gpus(ctx):
        h = g.details.get("health")
        if not isinstance(h, Mapping):
            continue
        label = _gpu_label(g)
        reasons = list(h.get("throttle_reasons") or [])
        temp, slow = h.get("temperature"), h.get("temperature_slowdown")
        thermal = [r for r in reasons if "thermal" in r]
        if (isinstance(temp, int) and isinstance(slow, int) and temp >= slow - 5) or thermal:
            yield Finding(
                GPU_THERMAL,
                "warning",
                f"{label} is running hot ({temp} °C)",
                f"{label} is at {temp} °C"
                + (f", its slowdown threshold is {slow} °C" if slow else "")
                + (f"; active thermal throttling: {', '.join(thermal)}" if thermal else "")
                + ". Clocks drop and training slows; at the shutdown threshold the GPU turns off.",
                (
                    Fix(
                        "Check the fans, airflow and data-centre cooling",
                        "nvidia-smi -q -d TEMPERATURE,PERFORMANCE",
                    ),
                ),
                {"gpu": g.index, "temperature": temp, "slowdown": slow},
                group="health",
            )
        hw = [r for r in reasons if r in ("hw_slowdown", "hw_power_brake_slowdown")]
        if hw:
            yield Finding(
                GPU_THROTTLE,
                "warning",
                f"{label}: hardware slowdown is engaged",
                f"{label} reports {', '.join(hw)}: the board halves its clocks because of temperature or an external "
                "power-brake signal (power supply). Training runs at a fraction of its speed.",
                (Fix("Check power supply and cooling", "nvidia-smi -q -d PERFORMANCE"),),
                {"gpu": g.index, "reasons": hw},
                group="health",
            )
        limit, default = h.get("power_limit_w"), h.get("power_default_limit_w")
        if (
            isinstance(limit, (int, float))
            and isinstance(default, (int, float))
            and default > 0
            and limit < 0.9 * default
        ):
            yield Finding(
                GPU_POWER,
                "warning",
                f"{label}: power limit lowered to {limit:g} W (default {default:g} W)",
                f"{label} may draw at most {limit:g} W, below its default {default:g} W; it throttles "
                f"(sw_power_cap) under load. Power draw now: {h.get('power_usage_w')} W.",
                (Fix("Restore the default limit", f"sudo nvidia-smi -i {g.index} -pl {default:g}"),),
                {"gpu": g.index, "power_limit_w": limit, "default_w": default},
                group="health",
            )
        vol, agg = h.get("ecc_uncorrected_volatile"), h.get("ecc_uncorrected_aggregate")
        if isinstance(vol, int) and vol > 0:
            yield Finding(
                GPU_ECC,
                "error",
                f"{label}: {vol} uncorrectable ECC error(s) since the driver loaded",
                f"{label} has {vol} uncorrected (double-bit) memory error(s) since the driver was loaded: data was "
                "corrupted and CUDA contexts on it were killed. Repeated errors mean failing memory.",
                (
                    Fix(
                        "Reset the GPU (retires or remaps the bad memory)", f"sudo nvidia-smi -r -i {g.index}"
                    ),
                    Fix("If it happens again, drain the machine and contact the vendor (RMA)"),
                ),
                {"gpu": g.index, "ecc_uncorrected_volatile": vol},
                group="health",
            )
        elif isinstance(agg, int) and agg > 0:
            yield Finding(
                GPU_ECC,
                "warning",
                f"{label}: {agg} uncorrectable ECC error(s) in its lifetime",
                f"{label} has recorded {agg} uncorrected memory error(s) over its lifetime (none since the driver "
                "loaded). Watch it: a rising count predicts failure.",
                (Fix("Watch the counters", "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER"),),
                {"gpu": g.index, "ecc_uncorrected_aggregate": agg},
                group="health",
            )
        rr = h.get("remapped_rows")
        pending = bool(h.get("retired_pages_pending")) or bool(isinstance(rr, Mapping) and rr.get("pending"))
        if isinstance(rr, Mapping) and rr.get("failure"):
            yield Finding(
                GPU_RETIRED,
                "error",
                f"{label}: row remapping failed",
                f"{label} could not remap a failing memory row (uncorrectable rows: {rr.get('uncorrectable')}): its "
                "memory can no longer be trusted.",
                (Fix("Drain the machine and contact the vendor (RMA)"),),
                {"gpu": g.index},
                group="health",
            )
        elif pending:
            yield Finding(
                GPU_RETIRED,
                "warning",
                f"{label}: memory page retirement / row remap pending",
                f"{label} marked bad memory for retirement or remapping; it takes effect only after a GPU reset. "
                "Until then the bad memory can be used again.",
                (Fix("Reset the GPU when it is idle", f"sudo nvidia-smi -r -i {g.index}"),),
                {"gpu": g.index},
                group="health",
            )
        pcie = h.get("pcie")
        if isinstance(pcie, Mapping):
            w, wmax = pcie.get("width"), pcie.get("width_max")
            if isinstance(w, int) and isinstance(wmax, int) and 0 < w < wmax:
                yield Finding(
                    GPU_PCIE,
                    "warning",
                    f"{label}: PCIe link runs at x{w} of x{wmax}",
                    f"{label}'s PCIe link trained at x{w} instead of x{wmax} (generation {pcie.get('gen')} of "
                    f"{pcie.get('gen_max')}; a lower generation at idle is normal power saving, a narrower link is "
                    "not). Host-to-GPU copies are slower; a reseated card or another slot usually fixes it.",
                    (Fix("Check the link", f"nvidia-smi -q -i {g.index} -d PCIE"),),
                    {"gpu": g.index, "width": w, "width_max": wmax},
                    group="health",
                )


def _pci_key(bus_id: str | None) -> str | None:
    """NVML's "00000000:2B:00.0" and the kernel's "0000:2b:00" -> "0000:2b:00"."""
    if not bus_id:
        return None
    parts = str(bus_id).lower().split(":")
    if len(parts) < 3:
        return None
    dom = parts[-3][-4:]
    return f"{dom}:{parts[-2]}:{parts[-1].split('.')[0]}"


def check_kernel_log(ctx: Ctx) -> Iterator[Result]:
    from compat.probes.health import xid_table

    h = _probe(ctx, "health")
    if h is None or h.get("status") != "ok":
        reason = "kernel log not readable: " + str((h or {}).get("error") or "no health probe data")
        yield Skip(GPU_XID, reason)
        yield Skip(HOST_OOM, reason)
        return
    table = xid_table(ctx.m.raw.get("xid.yaml"))
    by_pci = {_pci_key(g.details.get("pci_bus_id")): g for g in _real_gpus(ctx)}
    events = list(h.get("xid") or [])
    groups: dict[int, list[Mapping[str, Any]]] = {}
    for e in events:
        groups.setdefault(int(e["code"]), []).append(e)
    for code in sorted(groups):
        evs = groups[code]
        row = table.get(code)
        sev = str(row.get("severity")) if row else "warning"
        if sev not in SEVERITIES:
            sev = "warning"
        where = sorted({str(e.get("pci")) for e in evs})
        gpu_txt = ", ".join((f"GPU {by_pci[w].index} ({w})" if w in by_pci else w) for w in where)
        procs = sorted({str(e.get("process")) for e in evs if e.get("process")})
        name = row.get("name") if row else "not in compat's Xid table"
        last = evs[-1]
        msg = (
            f"The kernel log has {len(evs)} Xid {code} event(s) on {gpu_txt}"
            + (f" (processes: {', '.join(procs[:5])})" if procs else "")
            + f". Last: {last.get('message')!r}. "
        )
        if row:
            msg += f"{row.get('meaning')} (cause: {row.get('cause')}; NVIDIA's catalog: {row.get('source')})"
            fixes: tuple[Fix, ...] = (Fix(str(row.get("action"))),)
        else:
            msg += "See NVIDIA's Xid catalog for this code."
            fixes = (
                Fix(
                    "Look the code up in NVIDIA's Xid catalog",
                    "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
                ),
            )
        yield Finding(
            GPU_XID,
            sev,
            f"Xid {code} ({name}) on {gpu_txt}",
            msg,
            fixes,
            {"xid": code, "count": len(evs), "pci": where},
            group="health",
        )
    ooms = list(h.get("oom") or [])
    if ooms:
        cg = [o for o in ooms if o.get("cgroup")]
        who = ", ".join(
            f"{o.get('process')} (pid {o.get('pid')}"
            + (f", {_gib(o.get('anon_rss'))}" if o.get("anon_rss") else "")
            + ")"
            for o in ooms[-5:]
        )
        yield Finding(
            HOST_OOM,
            "warning",
            f"The kernel's OOM killer killed {h.get('oom_total', len(ooms))} process(es)",
            f"Out-of-memory kills in the kernel log ({h.get('source')}): {who}"
            + (f"; {len(cg)} of them at a cgroup (container) memory limit" if cg else "")
            + ". A training script or its DataLoader workers that die with 'Killed' or "
            "'DataLoader worker (pid N) is killed by signal: Killed' ran out of host RAM, not GPU memory.",
            (
                Fix(
                    "Use fewer DataLoader workers or a smaller batch, or give the job more memory "
                    "(docker run --memory ...)"
                ),
            ),
            {"oom_kills": len(ooms)},
            group="health",
        )


# ------------------------------------------------------------------ resources


def check_resources(ctx: Ctx) -> Iterator[Result]:
    r = _probe(ctx, "resources")
    why = _failed(r, "resources")
    if why or r is None:
        for cid in (HOST_SHM, HOST_MEMORY, HOST_CGROUP_OOM, HOST_NOFILE, HOST_DISK):
            yield Skip(cid, why or "no resources probe data")
        return
    env = _env(ctx)
    in_container = bool((env.get("container") or {}).get("in_container"))
    cg = r.get("cgroup") or {}
    kills = cg.get("oom_kills")
    if isinstance(kills, int) and kills > 0:
        yield Finding(
            HOST_CGROUP_OOM,
            "warning",
            f"{kills} process(es) in this cgroup were OOM-killed",
            f"The memory cgroup this process runs in (cgroup v{cg.get('version')}, limit "
            f"{_gib(cg.get('memory_limit')) if cg.get('memory_limit') else 'none'}) counted {kills} OOM kill(s). "
            "A job that vanished with 'Killed' (or a Jupyter 'kernel died') hit this limit.",
            (
                Fix(
                    "Raise the container's memory limit or use less memory (fewer DataLoader workers, smaller batches)",
                    "docker run --memory 32g ...",
                ),
            ),
            {"oom_kills": kills},
            group="resources",
        )
    elif "error" in cg:
        yield Skip(HOST_CGROUP_OOM, str(cg["error"]))
    shm = r.get("shm") or {}
    if isinstance(shm.get("total"), int):
        if shm["total"] < SHM_MIN:
            yield Finding(
                HOST_SHM,
                "warning",
                f"/dev/shm is only {_gib(shm['total'])}",
                f"/dev/shm has {_gib(shm['total'])} ({_gib(shm.get('free'))} free). PyTorch DataLoader workers pass "
                "batches through shared memory; with a small /dev/shm (Docker's default is 64 MiB) they die with "
                "'Bus error' or 'unable to write to file </torch_...>: No space left on device'.",
                (
                    Fix(
                        "Give the container more shared memory",
                        "docker run --shm-size=8g ...  # or --ipc=host",
                    ),
                    Fix("Or load data in the main process", "DataLoader(..., num_workers=0)"),
                ),
                {"shm_total": shm["total"]},
                group="resources",
            )
    else:
        yield Skip(HOST_SHM, f"/dev/shm: {shm.get('error', 'unknown size')}")
    mem = r.get("memory") or {}
    total, avail = mem.get("total"), mem.get("available")
    limit = cg.get("memory_limit")
    if isinstance(total, int) and isinstance(avail, int):
        if avail < MEMORY_LOW or avail < 0.05 * total:
            yield Finding(
                HOST_MEMORY,
                "warning",
                f"Only {_gib(avail)} of {_gib(total)} RAM available",
                f"The host has {_gib(avail)} of {_gib(total)} memory available (swap {_gib(mem.get('swap_free'))} "
                "free). Loading a dataset or starting DataLoader workers may get the job OOM-killed.",
                (Fix("Find what uses the memory", "ps aux --sort=-rss | head"),),
                {"available": avail},
                group="resources",
            )
        if isinstance(limit, int) and limit < total and limit < 8 * GIB:
            yield Finding(
                HOST_MEMORY,
                "warning" if limit < 4 * GIB else "info",
                f"Container memory limit {_gib(limit)} (host has {_gib(total)})",
                f"This {'container' if in_container else 'cgroup'} may use at most {_gib(limit)} although the host has "
                f"{_gib(total)}; past it the kernel kills the job ('Killed').",
                (Fix("Raise the limit", "docker run --memory 32g ..."),),
                {"memory_limit": limit},
                group="resources",
            )
    else:
        yield Skip(HOST_MEMORY, str(mem.get("error", "memory size unknown")))
    nf = r.get("nofile") or {}
    soft = nf.get("soft") if isinstance(nf, Mapping) else None
    if isinstance(soft, int) and soft < NOFILE_MIN:
        yield Finding(
            HOST_NOFILE,
            "warning",
            f"Open-files limit is {soft}",
            f"This process may open only {soft} files (ulimit -n). DataLoader workers sharing tensors through file "
            "descriptors fail with 'Too many open files' or 'received 0 items of ancdata'.",
            (Fix("Raise the limit for the shell that starts training", "ulimit -n 65536"),),
            {"nofile": soft},
            group="resources",
        )
    quota = cg.get("cpu_quota")
    cpus = (r.get("cpus") or {}).get("affinity") or (r.get("cpus") or {}).get("count")
    if isinstance(quota, (int, float)) and isinstance(cpus, int) and quota < cpus:
        yield Finding(
            HOST_CPU_QUOTA,
            "info",
            f"CPU quota: {quota:g} of {cpus} CPUs",
            f"The cgroup CPU quota allows {quota:g} CPUs although {cpus} are visible; os.cpu_count() still says "
            f"{cpus}, so code that sizes worker pools from it oversubscribes.",
            (
                Fix(
                    f"Use at most {max(1, int(quota))} DataLoader workers",
                    f"DataLoader(..., num_workers={max(1, int(quota))})",
                ),
            ),
            {"cpu_quota": quota, "cpus": cpus},
            group="resources",
        )
    for d in r.get("disk") or []:
        free = d.get("free")
        if isinstance(free, int) and free < DISK_MIN:
            yield Finding(
                HOST_DISK,
                "warning",
                f"Only {_gib(free)} free on {d.get('path')}",
                f"The file system of {d.get('path')} has {_gib(free)} free: checkpoints and datasets written there "
                "will fail with 'No space left on device'.",
                (
                    Fix(
                        "Free space or write checkpoints elsewhere",
                        f"df -h {shlex.quote(str(d.get('path')))}",
                    ),
                ),
                {"free": free},
                group="resources",
            )


# ------------------------------------------------------------------ CUDA toolkits, cuDNN, libraries


def check_toolkits(ctx: Ctx) -> Iterator[Result]:
    t = _probe(ctx, "toolkits")
    why = _failed(t, "toolkits")
    if why or t is None:
        yield Skip(TOOLKIT_MULTIPLE, why or "no toolkits probe data")
        yield Skip(LIBS_SHADOWED, why or "no toolkits probe data")
    else:
        installed = t.get("installed") or {}
        releases = list(t.get("releases") or [])
        nv = t.get("nvcc") or {}
        homes = t.get("cuda_home") or {}
        if len(releases) > 1:
            home_ver = None
            for tk in t.get("toolkits") or []:
                if homes and tk.get("path") in [h.rstrip("/") for h in homes.values()] and tk.get("version"):
                    home_ver = ".".join(str(tk["version"]).split(".")[:2])
            conflict = bool(nv.get("release") and home_ver and nv["release"] != home_ver)
            where = ", ".join(f"{v} at {p}" for p, v in sorted(installed.items()))
            msg = f"Several CUDA toolkits are installed: {where}."
            if conflict:
                msg += (
                    f" nvcc on PATH is {nv['release']} but CUDA_HOME/CUDA_PATH points to {home_ver}: extensions "
                    "built with torch.utils.cpp_extension use CUDA_HOME, other builds use nvcc on PATH."
                )
            yield Finding(
                TOOLKIT_MULTIPLE,
                "warning" if conflict else "info",
                "nvcc on PATH and CUDA_HOME disagree"
                if conflict
                else f"{len(releases)} CUDA toolkits installed",
                msg + " Pip wheels of PyTorch and TensorFlow bundle their own CUDA runtime and ignore these.",
                (
                    Fix(
                        "Point PATH and CUDA_HOME at the same toolkit",
                        f"export CUDA_HOME={t.get('chosen', {}).get('path') or '/usr/local/cuda'} PATH=$CUDA_HOME/bin:$PATH",
                    ),
                ),
                {"toolkits": installed},
                group="cuda",
            )
        yield from _shadowed(ctx, t)
    c = _probe(ctx, "cudnn")
    if c is not None and c.get("status") == "ok" and len(c.get("distinct") or []) > 1:
        yield Finding(
            CUDNN_MULTIPLE,
            "warning",
            f"Several system cuDNN versions: {', '.join(c['distinct'])}",
            f"cuDNN {', '.join(c.get('system_versions') or [])} are installed system-wide "
            f"({', '.join(h.get('path', '') for h in (c.get('headers') or [])[:4])}). Which one a program loads depends "
            "on LD_LIBRARY_PATH and the loader cache: a mismatch shows up as 'cuDNN version incompatibility' or "
            "CUDNN_STATUS_NOT_INITIALIZED.",
            (Fix("Remove the copies you do not use, or rely on the frameworks' pip cuDNN"),),
            {"cudnn": c.get("system_versions")},
            group="cuda",
        )


def _shadowed(ctx: Ctx, t: Mapping[str, Any]) -> Iterator[Result]:
    libs = list(t.get("ld_library_path_libs") or [])
    if not libs:
        return
    fw = _probe(ctx, "frameworks") or {}
    dists = fw.get("distributions") or {}
    bundling = sorted(k for k in dists if k.startswith("nvidia-"))
    torch_cuda = ctx.facts.get("torch_build")
    tf = ctx.facts.get("tf_build")
    uses_bundled = (
        bool(bundling)
        or (torch_cuda is not None and torch_cuda.value == "cuda")
        or (tf is not None and tf.value == "cuda")
    )
    if not uses_bundled:
        return
    ld_dirs = sorted({lib["dir"] for lib in libs})
    loaded_from_ld = []
    for mode, child in sorted((fw.get("children") or {}).items()):
        for path in ((child.get("result") or {}).get("libs") or []) if isinstance(child, Mapping) else []:
            if any(os.path.dirname(path).rstrip("/") == d.rstrip("/") for d in ld_dirs):
                loaded_from_ld.append(f"{mode} loaded {path}")
    names = ", ".join(f"{lib['file']} ({lib['dir']})" for lib in libs[:6])
    msg = (
        f"LD_LIBRARY_PATH provides {names}. The framework wheels bring their own copies "
        f"({', '.join(bundling[:6]) or 'bundled in the wheel'}); a library found through LD_LIBRARY_PATH wins over "
        "them and a different version fails with 'undefined symbol', 'cuDNN version incompatibility' or "
        "CUBLAS_STATUS_NOT_INITIALIZED."
    )
    if loaded_from_ld:
        msg += f" The import really picked them up: {'; '.join(loaded_from_ld[:4])}."
    yield Finding(
        LIBS_SHADOWED,
        "error" if loaded_from_ld else "warning",
        "CUDA libraries on LD_LIBRARY_PATH shadow the frameworks' own"
        if loaded_from_ld
        else "LD_LIBRARY_PATH holds CUDA libraries that can shadow the frameworks' own",
        msg,
        (
            Fix(
                "Drop those directories from LD_LIBRARY_PATH for training",
                f"export LD_LIBRARY_PATH={':'.join(d for d in _ld_without(ctx, ld_dirs)) or ''}",
            ),
        ),
        {"ld_library_path": ld_dirs},
        group="cuda",
    )


def _ld_without(ctx: Ctx, drop: list[str]) -> list[str]:
    cur = str((_env(ctx).get("vars") or {}).get("LD_LIBRARY_PATH") or "")
    return [d for d in cur.split(":") if d and d not in drop]


# ------------------------------------------------------------------ frameworks


def _driver_explains(ctx: Ctx, cuda: str | None) -> bool:
    """The resolver's driver.cuda error already explains a framework not seeing CUDA (no cascade)."""
    if ctx.driver is None or not cuda:
        return False
    try:
        return driver_can_run(ctx.m, ctx.driver, Version(cuda), ctx.driver_os()) == "no"
    except InvalidVersion:
        return False


def check_frameworks(ctx: Ctx) -> Iterator[Result]:
    from compat.probes.frameworks import describe_child

    fw = _probe(ctx, "frameworks")
    if fw is None:
        yield Skip(FRAMEWORK_IMPORT, "no frameworks probe data")
        return
    if fw.get("status") == "error":
        meta = fw.get("meta") or {}
        out = str(meta.get("output") or "").strip()
        yield Finding(
            PYTHON_INTERPRETER,
            "error",
            f"The Python interpreter {fw.get('python_executable')} is broken",
            f"{fw.get('error')}." + (f" Its output: {out[-600:]!r}" if out else ""),
            (
                Fix(
                    "Run it by hand",
                    f"{shlex.quote(str(fw.get('python_executable')))} -c 'import sys; print(sys.version)'",
                ),
            ),
            {"python": fw.get("python_executable")},
            group="frameworks",
        )
        return
    if fw.get("status") in ("timeout",):
        yield Skip(FRAMEWORK_IMPORT, f"frameworks probe: {fw.get('error')}")
        return
    for c in fw.get("conflicts") or []:
        yield Finding(
            FRAMEWORK_PINS,
            "error",
            f"{c['framework']} {c.get('framework_version') or ''} needs {c['dist']}{c['requires']}, "
            f"{c['installed']} is installed".replace("  ", " "),
            f"{c['framework']} {c.get('framework_version') or ''} requires {c['dist']}{c['requires']}"
            + (" (its [and-cuda] extra)" if c.get("extra") else "")
            + f" but {c['dist']} {c['installed']} is installed — typically because another framework in the same "
            "environment pinned a different version. The framework then loads a library it was not built against "
            "('cuDNN version incompatibility', 'undefined symbol', or silently no GPU).",
            (
                Fix(
                    "Give each framework its own virtual environment",
                    "python -m venv .venv-tf && .venv-tf/bin/pip install 'tensorflow[and-cuda]'",
                ),
                Fix(
                    f"Or reinstall the version {c['framework']} needs",
                    f"pip install '{c['dist']}{c['requires']}'",
                ),
            ),
            {
                "framework": c["framework"],
                "dist": c["dist"],
                "installed": c["installed"],
                "requires": c["requires"],
            },
            group="frameworks",
        )
    for mode, child in sorted((fw.get("children") or {}).items()):
        if not isinstance(child, Mapping):
            continue
        st = child.get("status")
        label = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}.get(mode, mode)
        if st == "skipped":
            continue
        if st in ("crashed", "timeout", "import-error", "failed", "not-run", "error"):
            doc = child.get("result") or {}
            out = str(child.get("output") or "").strip()
            tb = str(doc.get("traceback") or "").strip()
            detail = tb.splitlines()[-1] if tb else ""
            yield Finding(
                FRAMEWORK_IMPORT,
                "error",
                f"import {mode} {describe_child(child)}",
                f"A child interpreter that only imports {label} {describe_child(child)}."
                + (f" {detail}." if detail and detail not in describe_child(child) else "")
                + (f" Its output ends with: {out[-800:]!r}." if out else "")
                + " Your training script dies the same way (a 'kernel died' in Jupyter).",
                (
                    Fix(
                        "Reproduce it",
                        f"{shlex.quote(str(fw.get('executable') or 'python'))} -X faulthandler -c "
                        f"'import {mode}'",
                    ),
                ),
                {"framework": mode, "status": st, "signal": child.get("signal")},
                group="frameworks",
            )
            continue
        doc = child.get("result") or {}
        gpu_present = bool(ctx.facts.gpus)
        if mode == "torch" and doc.get("cuda") and gpu_present and doc.get("cuda_available") is False:
            if _driver_explains(ctx, doc.get("cuda")):
                continue
            warn = "; ".join(str(w) for w in doc.get("warnings") or [])
            yield Finding(
                FRAMEWORK_NO_CUDA,
                "error",
                f"torch {doc.get('version')} cannot use the GPU",
                f"torch {doc.get('version')} is a CUDA {doc.get('cuda')} build and this machine has a GPU, but "
                "torch.cuda.is_available() is False" + (f": {warn}" if warn else "") + ".",
                (
                    Fix(
                        "See the driver and environment findings; reproduce with",
                        "python -c 'import torch; print(torch.cuda.is_available())'",
                    ),
                ),
                {"torch": doc.get("version"), "torch_cuda": doc.get("cuda")},
                group="frameworks",
            )
        if mode == "tensorflow":
            bi = doc.get("build_info") or {}
            if bi.get("is_cuda_build") and gpu_present and doc.get("gpus") == []:
                if _driver_explains(ctx, bi.get("cuda_version")):
                    continue
                out = str(child.get("output") or "")
                hint = next(
                    (
                        ln.strip()
                        for ln in out.splitlines()
                        if "Could not load dynamic library" in ln or "Cannot dlopen" in ln
                    ),
                    "",
                )
                yield Finding(
                    FRAMEWORK_NO_CUDA,
                    "error",
                    f"TensorFlow {doc.get('version')} sees no GPU",
                    f"TensorFlow {doc.get('version')} is a CUDA {bi.get('cuda_version')} build and this machine has a "
                    "GPU, but tf.config.list_physical_devices('GPU') is empty"
                    + (f" ({hint})" if hint else "")
                    + ". TensorFlow silently falls back to the CPU.",
                    (
                        Fix(
                            "Install the CUDA libraries TensorFlow pins",
                            f"pip install 'tensorflow[and-cuda]=={doc.get('version')}'",
                        ),
                    ),
                    {"tensorflow": doc.get("version")},
                    group="frameworks",
                )
        if (
            mode == "jax"
            and gpu_present
            and doc.get("backend") == "cpu"
            and any(k.startswith(("jax-cuda", "jax-plugin")) for k in (fw.get("distributions") or {}))
        ):
            yield Finding(
                FRAMEWORK_NO_CUDA,
                "warning",
                f"JAX {doc.get('version')} runs on the CPU",
                "A JAX CUDA plugin is installed and this machine has a GPU, but jax.default_backend() is 'cpu'.",
                (Fix("Reinstall JAX with its CUDA plugin", "pip install -U 'jax[cuda12]'"),),
                {"jax": doc.get("version")},
                group="frameworks",
            )


# ------------------------------------------------------------------ environment


_SETTING_NOTES = {
    "PYTORCH_CUDA_ALLOC_CONF": "PyTorch's CUDA caching allocator settings",
    "PYTORCH_ALLOC_CONF": "PyTorch's allocator settings",
    "TF_FORCE_GPU_ALLOW_GROWTH": "TensorFlow grows GPU memory instead of taking it all at start",
    "XLA_PYTHON_CLIENT_PREALLOCATE": "JAX preallocation (default: 75% of GPU memory at first use)",
    "XLA_PYTHON_CLIENT_MEM_FRACTION": "share of GPU memory JAX preallocates",
    "CUDA_DEVICE_ORDER": "GPU numbering (FASTEST_FIRST by default, PCI_BUS_ID matches nvidia-smi)",
    "CUDA_MODULE_LOADING": "CUDA lazy loading",
    "CUBLAS_WORKSPACE_CONFIG": "cuBLAS workspace (deterministic mode)",
    "NCCL_P2P_DISABLE": "NCCL peer-to-peer disabled: multi-GPU traffic goes through host memory",
    "NCCL_IB_DISABLE": "NCCL InfiniBand disabled",
    "LD_PRELOAD": "libraries preloaded into every process",
}


def check_environment(ctx: Ctx) -> Iterator[Result]:
    env = _env(ctx)
    if not env:
        yield Skip(ENV_SETTINGS, "no environment probe data")
        return
    v = dict(env.get("vars") or {})
    clb = v.get("CUDA_LAUNCH_BLOCKING")
    if clb is not None and clb.strip() not in ("", "0"):
        yield Finding(
            ENV_LAUNCH_BLOCKING,
            "warning",
            f"CUDA_LAUNCH_BLOCKING={clb} makes every kernel launch synchronous",
            "CUDA_LAUNCH_BLOCKING is a debugging switch: every kernel waits for the previous one, which makes "
            "training several times slower.",
            (Fix("Unset it once debugging is done", "unset CUDA_LAUNCH_BLOCKING"),),
            {"CUDA_LAUNCH_BLOCKING": clb},
            group="environment",
        )
    shown = {
        k: val for k, val in v.items() if k in _SETTING_NOTES or (k.startswith("NCCL_") and k != "NCCL_DEBUG")
    }
    if shown:
        lines = "; ".join(
            f"{k}={val!r}" + (f" ({_SETTING_NOTES[k]})" if k in _SETTING_NOTES else "")
            for k, val in sorted(shown.items())
        )
        yield Finding(
            ENV_SETTINGS,
            "info",
            f"{len(shown)} setting(s) change how CUDA or the frameworks behave",
            f"Set in this environment: {lines}.",
            (),
            {"vars": sorted(shown)},
            group="environment",
        )


def check_probe_failures(ctx: Ctx) -> Iterator[Result]:
    """A probe that crashed or timed out is said once, with its reason (never silently passed)."""
    meta = _probe(ctx, "meta") or {}
    for name in meta.get("probes") or []:
        p = _probe(ctx, name)
        if p is not None and p.get("status") in ("timeout", "error") and name not in ("nvml", "frameworks"):
            err = p.get("error")
            yield Skip(f"{PROBE_FAILED}.{name}", str(err.get("message") if isinstance(err, Mapping) else err))


def _guarded(check: Callable[[Ctx], Iterator[Result]]) -> Callable[[Ctx], Iterator[Result]]:
    """A check that meets probe data of an unexpected shape (a hand-edited or foreign snapshot) skips with the
    reason instead of taking the whole report down; findings it yielded before that are kept."""

    def run(ctx: Ctx) -> Iterator[Result]:
        try:
            yield from check(ctx)
        except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
            yield Skip(
                f"{PROBE_FAILED}.{check.__name__.removeprefix('check_')}",
                f"unexpected probe data: {type(exc).__name__}: {exc}",
            )

    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


doctor_checks: tuple[Callable[[Ctx], Iterator[Result]], ...] = tuple(
    _guarded(c)
    for c in (
        check_gpu_presence,
        check_driver_state,
        check_visible_devices,
        check_gpu_usage,
        check_gpu_health,
        check_kernel_log,
        check_resources,
        check_toolkits,
        check_frameworks,
        check_environment,
        check_probe_failures,
    )
)
