"""`compat compose`: a Compose file's GPU services, checked statically (reservations, shm, the images built)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from compat._valueclass import valueclass
from compat.errors import InputError
from compat.findings import Finding, Fix, Report, Skip, unique
from compat.matrix import Matrix
from compat.sources.images import DeploymentTarget, check_image, stage_facts_gpu
from compat.sources.yamlpos import YList, YMap, load_documents

NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")

# Stable ids (never renumbered).
GPU_DEVICE = "compose.gpu-device"
NO_GPU = "compose.no-gpu"
RUNTIME = "compose.runtime"
VISIBLE = "compose.visible-devices"
SHM = "compose.shm"
CHECK_IDS = (GPU_DEVICE, NO_GPU, RUNTIME, VISIBLE, SHM)
_GPU_DOCS = "https://docs.docker.com/compose/how-tos/gpu-support/"


def find_compose(path: Path) -> Path:
    """The Compose file `path` names, or the one in directory `path`."""
    if path.is_dir():
        for n in NAMES:
            if (path / n).is_file():
                return path / n
        raise InputError(f"{str(path)!r} is a directory without {' / '.join(NAMES)}")
    return path


@valueclass(frozen=False)
class _Service:
    name: str
    line: int
    gpu_lines: list[int] = field(default_factory=list)
    runtime_line: int | None = None
    gpu_count: int | None = None
    """GPUs reserved (None: all, or unknown)."""


def _f(
    id_: str, sev: str, title: str, msg: str, where: str, line: int, fixes: Sequence[Fix] = (), **facts: Any
) -> Finding:
    return Finding(
        id_,
        sev,
        title,
        f"{where}:{line}: {msg}",
        tuple(fixes),
        {"file": where, **facts},
        group="compose",
        line=line,
    )


def _env(svc: YMap) -> dict[str, tuple[str, int]]:
    env = svc.get("environment")
    out: dict[str, tuple[str, int]] = {}
    if isinstance(env, YMap):
        for k, v in env.items():
            out[str(k)] = ("" if v is None else str(v), env.line_of(str(k)))
    elif isinstance(env, YList):
        for item, line in zip(env, env.item_lines, strict=False):
            k, _, v = str(item).partition("=")
            out[k.strip()] = (v, line)
    return out


def _devices(svc: YMap, s: _Service, where: str) -> Iterator[Finding]:
    deploy = svc.get("deploy")
    res = deploy.get("resources") if isinstance(deploy, YMap) else None
    resv = res.get("reservations") if isinstance(res, YMap) else None
    devs = resv.get("devices") if isinstance(resv, YMap) else None
    if not isinstance(devs, YList):
        return
    for d, line in zip(devs, devs.item_lines, strict=False):
        if not isinstance(d, YMap):
            continue
        caps = d.get("capabilities")
        caps_l = [str(c) for c in caps] if isinstance(caps, YList) else []
        driver = str(d.get("driver") or "")
        if driver != "nvidia" and "gpu" not in caps_l:
            continue
        s.gpu_lines.append(line)
        count = d.get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            s.gpu_count = count
        ids = d.get("device_ids")
        if isinstance(ids, YList):
            s.gpu_count = len(ids)
        if not caps_l:
            yield _f(
                GPU_DEVICE,
                "error",
                f"service {s.name!r}: the GPU device reservation has no capabilities",
                "Compose requires `capabilities` on a device reservation (the Compose specification marks it "
                "required); `docker compose up` rejects the file, and without `gpu` in it no GPU is given.",
                where,
                line,
                (Fix("Add the capability: capabilities: [gpu]"),),
                service=s.name,
            )
        if count is not None and ids is not None:
            yield _f(
                GPU_DEVICE,
                "error",
                f"service {s.name!r}: count and device_ids are both set",
                "`count` and `device_ids` are mutually exclusive in a device reservation; Compose rejects the file.",
                where,
                d.line_of("device_ids"),
                (Fix("Keep one of them: count: all, count: N, or device_ids: ['0', ...]"),),
                service=s.name,
            )
        if isinstance(count, str) and count != "all" and not count.isdigit():
            yield _f(
                GPU_DEVICE,
                "error",
                f"service {s.name!r}: count {count!r} is neither a number nor 'all'",
                "A device reservation's count is an integer or the word all; Compose rejects other values.",
                where,
                d.line_of("count"),
                (Fix("Use count: all or count: 1"),),
                service=s.name,
            )


def _unreadable(path: Path) -> str:
    """Why the Dockerfile at `path` is not read ("is a FIFO (named pipe), not a regular file"), or ""."""
    from compat.inputs import refusal

    try:
        st = path.stat()
    except OSError:
        return "is not here"
    return refusal(st) or ""


def _build(
    svc: YMap, base_dir: Path, where: str, m: Matrix, target: DeploymentTarget
) -> tuple[list[Finding], list[Skip], dict[str, Any] | None]:
    """Check the Dockerfile a service builds; (findings, skips, final-stage facts or None)."""
    from compat.dockerfile import check_dockerfile

    b = svc.get("build")
    if b is None:
        return [], [], None
    ctx_raw: Any = b if isinstance(b, str) else (b.get("context", ".") if isinstance(b, YMap) else None)
    if not isinstance(ctx_raw, str):
        return [], [], None
    if "://" in ctx_raw or ctx_raw.startswith("git@"):
        return [], [Skip("compose.build", f"{where}: remote build context {ctx_raw} is not read")], None
    ctx = (base_dir / ctx_raw).resolve() if not Path(ctx_raw).is_absolute() else Path(ctx_raw)
    dfile = b.get("dockerfile") if isinstance(b, YMap) else None
    if isinstance(b, YMap) and b.get("dockerfile_inline") is not None:
        return [], [Skip("compose.build", f"{where}: dockerfile_inline is not checked")], None
    dpath = ctx / str(dfile) if dfile else ctx / "Dockerfile"
    why = _unreadable(dpath)
    if why:
        return (
            [],
            [Skip("compose.build", f"{where}: the Dockerfile {dpath} {why}; its checks are skipped")],
            None,
        )
    args: dict[str, str] = {}
    raw_args = b.get("args") if isinstance(b, YMap) else None
    if isinstance(raw_args, YMap):
        args = {str(k): str(v) for k, v in raw_args.items() if v is not None}
    elif isinstance(raw_args, YList):
        for item in raw_args:
            k, eq, v = str(item).partition("=")
            if eq:
                args[k] = v
    rep = check_dockerfile(
        dpath,
        m,
        target_driver=target.driver,
        target_gpu=target.gpu,
        target_cc=target.cc,
        build_args=args,
        context=ctx,
        today=target.today,
    )
    shown = str(dpath)
    fs = [
        replace(f, facts={**dict(f.facts), "file": shown}, message=f"{shown}:{f.line}: {f.message}")
        for f in rep.findings
    ]
    want = b.get("target") if isinstance(b, YMap) else None
    stages = rep.extra.get("stages") or []
    facts: dict[str, Any] = dict(rep.facts)
    for sd in stages:
        if want is not None and sd.get("name") == want:
            facts = sd.get("facts") or {}
    return fs, list(rep.skipped), facts


def check_service(
    name: str, svc: YMap, line: int, base_dir: Path, where: str, m: Matrix, target: DeploymentTarget
) -> tuple[list[Finding], list[Skip]]:
    s = _Service(name, line)
    out: list[Finding] = list(_devices(svc, s, where))
    skipped: list[Skip] = []
    if svc.get("gpus") is not None:
        s.gpu_lines.append(svc.line_of("gpus"))
    if str(svc.get("runtime") or "") == "nvidia":
        s.runtime_line = svc.line_of("runtime")
    env = _env(svc)
    fs, sk, dfacts = _build(svc, base_dir, where, m, target)
    out.extend(fs)
    skipped.extend(sk)
    cuda_image = torch = False
    image_line = svc.line_of("image")
    if dfacts is not None:
        cuda_image = stage_facts_gpu(dfacts)
        torch = "torch" in dfacts
    elif isinstance(svc.get("image"), str):
        ic = check_image(str(svc["image"]), m, image_line, where, target)
        out.extend(replace(f, group="compose", facts={**dict(f.facts), "service": name}) for f in ic.findings)
        skipped.extend(ic.skipped)
        cuda_image, torch = ic.cuda_image, ic.torch
    wants_gpu = bool(s.gpu_lines) or s.runtime_line is not None
    if s.runtime_line is not None and not s.gpu_lines:
        out.append(
            _f(
                RUNTIME,
                "info",
                f"service {name!r} gets GPUs through `runtime: nvidia`",
                "`runtime: nvidia` works only where the Docker daemon registers the nvidia runtime "
                "(daemon.json); the portable request is a device reservation, which `docker compose` passes "
                "to the NVIDIA container toolkit on any host with it installed.",
                where,
                s.runtime_line,
                (
                    Fix(
                        "Reserve the GPU instead: deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]"
                    ),
                ),
                service=name,
            )
        )
    if "NVIDIA_VISIBLE_DEVICES" in env and not wants_gpu:
        val, vline = env["NVIDIA_VISIBLE_DEVICES"]
        out.append(
            _f(
                VISIBLE,
                "warning",
                f"service {name!r} sets NVIDIA_VISIBLE_DEVICES={val} but requests no GPU",
                "NVIDIA_VISIBLE_DEVICES is read by the NVIDIA runtime only; with Docker's default runtime and no "
                "device reservation the container gets no GPU, whatever the variable says.",
                where,
                vline,
                (
                    Fix(
                        "Reserve the GPU: deploy.resources.reservations.devices: [{driver: nvidia, count: all, capabilities: [gpu]}]"
                    ),
                ),
                service=name,
            )
        )
    if cuda_image and not wants_gpu and "NVIDIA_VISIBLE_DEVICES" not in env:
        out.append(
            _f(
                NO_GPU,
                "warning",
                f"service {name!r} runs a CUDA image but reserves no GPU",
                "The service's image carries CUDA, but the service has no GPU device reservation, `gpus:` or "
                "`runtime: nvidia`: the container sees no GPU and CUDA code falls back to the CPU or fails. "
                "(Fine if this service does not use the GPU.)",
                where,
                line,
                (
                    Fix(
                        "Reserve a GPU: deploy.resources.reservations.devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]"
                    ),
                ),
                service=name,
            )
        )
    shm = svc.get("shm_size")
    ipc = str(svc.get("ipc") or "")
    if wants_gpu and torch and shm is None and ipc != "host":
        out.append(
            _f(
                SHM,
                "warning",
                f"service {name!r}: PyTorch with Docker's default 64 MB /dev/shm",
                "The service runs PyTorch on the GPU with neither shm_size nor `ipc: host`: DataLoader workers "
                "and NCCL use /dev/shm, and at Docker's default 64 MB they fail with 'bus error' or 'unable to "
                "write to file </torch_...>: No space left on device'.",
                where,
                line,
                (
                    Fix("Give it shared memory: shm_size: 8gb"),
                    Fix("Or share the host's IPC namespace: ipc: host"),
                ),
                service=name,
            )
        )
    return out, skipped


def check_compose(paths: Iterable[str | Path], m: Matrix, target: DeploymentTarget | None = None) -> Report:
    """Every service of every Compose file: one report, findings naming their file and line."""
    target = target or DeploymentTarget()
    findings: list[Finding] = []
    skipped: list[Skip] = []
    files: list[dict[str, Any]] = []
    for p in paths:
        path = find_compose(Path(p))
        where = str(path)
        docs = load_documents(path, "Compose file")
        doc = docs[0] if docs else None
        if not isinstance(doc, YMap) or not isinstance(doc.get("services"), YMap):
            raise InputError(f"{where} is not a Compose file: no top-level 'services' mapping")
        services = doc["services"]
        names = []
        for name, svc in services.items():
            if not isinstance(svc, YMap):
                continue
            names.append(str(name))
            fs, sk = check_service(str(name), svc, services.line_of(str(name)), path.parent, where, m, target)
            findings.extend(fs)
            skipped.extend(sk)
        files.append({"file": where, "services": names})
    rep = Report(
        unique(findings, lambda f: (f.id, f.title, f.facts.get("file"), f.line)),
        unique(skipped, lambda s: (s.id, s.reason)),
        {},
        m.updated_date,
    )
    rep.extra["files"] = files
    return rep
