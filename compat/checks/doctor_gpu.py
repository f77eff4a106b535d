"""GPUs and the driver: is a GPU there, is the driver loaded and answering, which GPUs are visible and in use."""

from __future__ import annotations

from collections.abc import Iterator

from compat.checks.context import Ctx, Result
from compat.checks.doctor_common import (
    details_of,
    driver_state,
    environment,
    gib,
    gpu_label,
    kernel_notes,
    nvidia_smi,
    nvml_cause,
    real_gpus,
    visible_devices,
    why_no_gpu,
)
from compat.checks.gpu import GPU_REQUIRED
from compat.checks.registry import check
from compat.findings import Finding, Fix
from compat.probes.model import ProbeFailed

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
GPU_MEMORY = "gpu.memory-in-use"
GPU_MIG = "gpu.mig"


@check(
    "doctor.gpu-presence",
    ids=(GPU_NONE, DRIVER_MISSING, DRIVER_NOUVEAU, DRIVER_CONTAINER),
    entry_points=("doctor", "check", "explain"),
)
def check_gpu_presence(ctx: Ctx) -> Iterator[Result]:
    """No GPU (info), a GPU without a working driver, nouveau, a container without the NVIDIA runtime."""
    gpus = ctx.facts.gpus
    if gpus:
        return
    drv = driver_state(ctx)
    env = environment(ctx)
    pci = drv.pci_gpus
    cont = env.container
    pci_txt = ", ".join(
        f"{p.address} (device {p.device}, kernel driver: {p.driver or 'none'})" for p in pci[:4]
    )
    if drv.nouveau:
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
            {"pci_gpus": [p.address for p in pci]},
            group="driver",
        )
        return
    if drv.mismatch or _mismatch_evidence(ctx):
        return  # check_driver_state explains it
    if pci:
        nv = ctx.probes.nvml
        loaded = drv.nvidia_module_loaded
        notes = kernel_notes(ctx, "probe-not-called") + kernel_notes(ctx, "rm-init-failed")
        why = f"NVML says: {nv.reason}" if isinstance(nv, ProbeFailed) else "no NVIDIA driver answers"
        msg = (
            f"This machine has {len(pci)} NVIDIA GPU(s) on the PCI bus ({pci_txt}) but {why}. "
            + ("The nvidia kernel module is not loaded. " if loaded is False else "")
            + (f"Kernel log: {notes[0].message}. " if notes else "")
            + "Frameworks will see no GPU and train on the CPU."
        )
        fixes = [
            Fix(
                "Install NVIDIA's driver (Ubuntu; elsewhere use your distribution's package or NVIDIA's "
                "installer)",
                "sudo ubuntu-drivers install",
            )
        ]
        if loaded is False or not drv.dev_nodes:
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
            {"pci_gpus": [p.address for p in pci]},
            group="driver",
        )
        return
    if gpus is None:
        if ctx.require_gpu:
            yield Finding(
                GPU_REQUIRED,
                "error",
                "A GPU is required but none could be confirmed",
                f"A GPU was required (--require-gpu) and the probes could not list one: {why_no_gpu(ctx)}.",
                (Fix("See the driver findings above"),),
                group="driver",
            )
        return
    in_container = bool(cont.in_container)
    nvd = cont.nvidia_visible_devices
    no_injection = not drv.dev_nodes and not drv.userspace_versions
    if in_container and no_injection and (nvd not in (None, "", "void", "none") or ctx.require_gpu):
        sev = "error" if ctx.require_gpu else "warning"
        yield Finding(
            DRIVER_CONTAINER,
            sev,
            "This container was started without GPU access",
            f"Running in a container ({', '.join(cont.signs)})"
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
            {"container": list(cont.signs)},
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
        f"No NVIDIA GPU was found ({why_no_gpu(ctx)}). That is fine for CPU-only work: the checks of frameworks, "
        f"Python and resources still ran; GPU and driver checks were skipped.{hint}",
        (),
        {"gpus": 0},
        group="driver",
    )


def _mismatch_evidence(ctx: Ctx) -> list[str]:
    ev = []
    if nvml_cause(ctx) == "version-mismatch":
        ev.append("NVML: Driver/library version mismatch")
    smi = nvidia_smi(ctx)
    if smi.kind == "version-mismatch":
        ev.append(
            "nvidia-smi: Failed to initialize NVML: Driver/library version mismatch"
            + (f" (NVML library version {smi.library_version})" if smi.library_version else "")
        )
    for n in kernel_notes(ctx, "api-mismatch"):
        ev.append(f"kernel log: the client has the version {n.client}, the kernel module {n.kernel}")
    return ev


@check(
    "doctor.driver-state",
    ids=(DRIVER_MISMATCH, DRIVER_DEV_NODES, DRIVER_NVML, DRIVER_NVIDIA_SMI, DRIVER_WSL),
    entry_points=("doctor", "check", "explain"),
)
def check_driver_state(ctx: Ctx) -> Iterator[Result]:
    """Kernel module vs user-space libraries, device nodes, a hung or failing NVML, a misbehaving nvidia-smi."""
    drv = driver_state(ctx)
    nv = ctx.probes.nvml
    env = environment(ctx)
    evidence = _mismatch_evidence(ctx)
    kernel = drv.kernel_version
    user = list(drv.userspace_versions)
    if drv.mismatch or evidence:
        smi_lib = nvidia_smi(ctx).library_version
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
    driver_up = bool(ctx.facts.gpus) or drv.nvidia_module_loaded is True
    if driver_up and not env.wsl:
        nodes = list(drv.dev_nodes)
        denied = list(drv.dev_inaccessible)
        missing = [
            n for n, ok in (("/dev/nvidiactl", drv.has_nvidiactl), ("/dev/nvidia-uvm", drv.has_uvm)) if not ok
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
        elif not nodes and not ctx.facts.gpus and not env.container.in_container:
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
    failed = nv if isinstance(nv, ProbeFailed) else None
    kind = failed.cause if failed else None
    message = failed.reason if failed else None
    if (failed and failed.kind == "timeout") or kind == "hang":
        yield Finding(
            DRIVER_NVML,
            "error",
            "NVML hung: the driver is not answering",
            f"{message}. A GPU that fell off the bus (Xid 79) or a wedged driver does this; training "
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
            f"{message}. compat ran it in a child process; a training process that loads it "
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
            f"NVML: {message}.",
            (Fix("Reset the GPU, or reboot if that fails", "sudo nvidia-smi -r"),),
            {},
            group="driver",
        )
    elif kind == "no-permission":
        yield Finding(
            DRIVER_NVML,
            "warning",
            "NVML: insufficient permissions",
            f"NVML: {message}.",
            (Fix("Check the permissions of /dev/nvidia*", "ls -l /dev/nvidia*"),),
            {},
            group="driver",
        )
    elif kind == "binding-missing":
        yield Finding(
            DRIVER_NVML,
            "info",
            "nvidia-ml-py is not installed; GPU details come from nvidia-smi",
            f"{message}.",
            (Fix("Install it", "pip install nvidia-ml-py"),),
            {},
            group="driver",
        )
    elif (
        failed
        and failed.kind == "error"
        and kind
        not in (
            "library-not-found",
            "driver-not-loaded",
            "version-mismatch",
        )
    ):
        yield Finding(
            DRIVER_NVML,
            "warning",
            "NVML failed",
            f"NVML: {message}.",
            (Fix("Read the driver's kernel messages", "sudo dmesg | grep -i nvrm | tail"),),
            {},
            group="driver",
        )
    smi = nvidia_smi(ctx)
    if smi.kind in ("hang", "crashed", "garbage", "error", "failed", "gpu-lost", "nvml-unknown"):
        text = {
            "hang": "nvidia-smi hung",
            "crashed": "nvidia-smi crashed",
            "garbage": "nvidia-smi printed garbage",
            "gpu-lost": "nvidia-smi: a GPU is lost",
            "nvml-unknown": "nvidia-smi: Failed to initialize NVML: Unknown Error",
        }.get(str(smi.kind), "nvidia-smi failed")
        extra = (
            " In a container this usually means the cgroup device rules were lost (systemd reloaded on the "
            "host): restart the container."
            if smi.kind == "nvml-unknown"
            else ""
        )
        yield Finding(
            DRIVER_NVIDIA_SMI,
            "warning",
            text,
            f"{smi.message}.{extra}",
            (Fix("Run it by hand to see the full output", "nvidia-smi"),),
            {},
            group="driver",
        )
    if env.wsl and env.wsl_lib is False:
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


@check(
    "doctor.visible-devices",
    ids=(ENV_VISIBLE,),
    entry_points=("doctor", "check", "explain"),
)
def check_visible_devices(ctx: Ctx) -> Iterator[Result]:
    env = environment(ctx)
    value = env.vars.get("CUDA_VISIBLE_DEVICES")
    gpus = real_gpus(ctx)
    if value is None or not gpus:
        return
    uuids = [str(u) for u in (details_of(g).uuid for g in gpus) if u]
    vis = visible_devices(value, len(gpus), uuids or None)
    if vis.hides_all:
        yield Finding(
            ENV_VISIBLE,
            "error",
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU",
            f"This machine has {len(gpus)} GPU(s) but CUDA_VISIBLE_DEVICES={value!r}"
            + (f" (CUDA stops at {vis.invalid!r}, which is not a GPU index or UUID)" if vis.invalid else "")
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
    elif vis.invalid is not None:
        yield Finding(
            ENV_VISIBLE,
            "warning",
            f"CUDA_VISIBLE_DEVICES={value!r} stops at {vis.invalid!r}",
            f"CUDA reads CUDA_VISIBLE_DEVICES up to the first entry that is not a valid GPU: only "
            f"{', '.join(vis.visible or ())} are visible and everything from {vis.invalid!r} on is ignored.",
            (Fix(f"Use indices below {len(gpus)} or GPU UUIDs (nvidia-smi -L)"),),
            {"CUDA_VISIBLE_DEVICES": value, "gpus": len(gpus)},
            group="environment",
        )


@check(
    "doctor.gpu-usage",
    ids=(GPU_MEMORY, GPU_MIG),
    entry_points=("doctor", "check", "explain"),
)
def check_gpu_usage(ctx: Ctx) -> Iterator[Result]:
    for g in real_gpus(ctx):
        d = details_of(g)
        total, used = d.memory_total, d.memory_used
        if total is not None and used is not None and total > 0 and used / total > 0.5:
            who = ", ".join(
                f"pid {p.pid}" + (f" ({gib(p.used_memory)})" if p.used_memory else "")
                for p in d.processes[:5]
            )
            yield Finding(
                GPU_MEMORY,
                "warning",
                f"{gpu_label(g)}: {gib(used)} of {gib(total)} already in use",
                f"{gpu_label(g)} has only {gib(d.memory_free)} free"
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
        mig = d.mig_mode
        if mig is not None and (mig.current or mig.pending):
            yield Finding(
                GPU_MIG,
                "info",
                f"{gpu_label(g)}: MIG mode is {'on' if mig.current else 'pending'}",
                "With MIG on, CUDA sees only the MIG instances (none until they are created), each with a slice of "
                "the memory; select one with CUDA_VISIBLE_DEVICES=MIG-<uuid>.",
                (Fix("List the MIG devices", "nvidia-smi -L"),),
                {"gpu": g.index},
                group="driver",
            )


# ------------------------------------------------------------------ health
