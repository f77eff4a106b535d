"""`compat k8s`: Pod, Job and Deployment manifests checked statically (GPU limits, /dev/shm, node selectors, images)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from compat.errors import InputError
from compat.findings import Finding, Fix, Report, Skip, unique
from compat.matrix import Matrix
from compat.sources.images import DeploymentTarget, check_image
from compat.sources.yamlpos import YList, YMap, load_documents

GPU = "nvidia.com/gpu"
# Stable ids (never renumbered).
GPU_LIMIT = "k8s.gpu-limit"
NO_GPU = "k8s.no-gpu"
SHM = "k8s.shm"
NODE_SELECTOR = "k8s.node-selector"
CHECK_IDS = (GPU_LIMIT, NO_GPU, SHM, NODE_SELECTOR)

# Where each workload kind keeps its pod spec.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Job": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
# Node labels that name the GPU product (GKE, NVIDIA GPU feature discovery, Karpenter on AWS).
GPU_LABELS = (
    "cloud.google.com/gke-accelerator",
    "nvidia.com/gpu.product",
    "karpenter.k8s.aws/instance-gpu-name",
)


def _gpu_name(m: Matrix, value: str) -> str | None:
    """A node label's GPU product as a name compat knows ('nvidia-tesla-t4' -> 'T4'), or None."""
    v = value.strip()
    cands = [v, v.replace("-", " ")]
    s = re.sub(r"^nvidia-(tesla-)?", "", v.lower())
    s2 = re.sub(r"-(mega-)?\d+gb$", "", s)
    cands += [s, s2, s2.replace("-", " "), s.replace("-", " ")]
    for c in cands:
        row = m.gpu(c)
        if row is not None:
            return row.name
    return None


def _quantity(v: Any) -> tuple[int | None, str]:
    if v is None:
        return None, ""
    text = str(v).strip()
    if re.fullmatch(r"\d+", text):
        return int(text), text
    return None, text


def _f(
    id_: str, sev: str, title: str, msg: str, where: str, line: int, fixes: tuple[Fix, ...] = (), **facts: Any
) -> Finding:
    return Finding(
        id_, sev, title, f"{where}:{line}: {msg}", fixes, {"file": where, **facts}, group="k8s", line=line
    )


def _selected_gpu(spec: YMap, m: Matrix) -> tuple[bool, str | None, int]:
    """(a GPU product or GPU node is selected, the product compat knows, line)."""
    sel = spec.get("nodeSelector")
    if isinstance(sel, YMap):
        for k in GPU_LABELS:
            if k in sel:
                return True, _gpu_name(m, str(sel[k])), sel.line_of(k)
    aff = spec.get("affinity")
    text_keys: list[tuple[str, list[str], int]] = []

    def walk(x: Any) -> None:
        if isinstance(x, YMap):
            if "key" in x and isinstance(x.get("values"), YList):
                text_keys.append((str(x["key"]), [str(v) for v in x["values"]], x.line))
            for v in x.values():
                walk(v)
        elif isinstance(x, YList):
            for v in x:
                walk(v)

    walk(aff)
    for key, values, line in text_keys:
        if key in GPU_LABELS:
            return True, (_gpu_name(m, values[0]) if len(values) == 1 else None), line
    tol = spec.get("tolerations")
    if isinstance(tol, YList) and any(isinstance(t, YMap) and str(t.get("key", "")) == GPU for t in tol):
        return True, None, tol.line
    return False, None, spec.line


def _containers(spec: YMap) -> Iterator[tuple[str, YMap, int]]:
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if isinstance(items, YList):
            for c, line in zip(items, items.item_lines, strict=False):
                if isinstance(c, YMap):
                    yield key, c, line


def _shm_mounted(spec: YMap, c: YMap) -> bool:
    vols = {str(v.get("name")): v for v in spec.get("volumes") or [] if isinstance(v, YMap)}
    for vm in c.get("volumeMounts") or []:
        if isinstance(vm, YMap) and str(vm.get("mountPath", "")).rstrip("/") == "/dev/shm":
            v = vols.get(str(vm.get("name")))
            if v is not None and v.get("emptyDir") is not None:
                return True
    return False


def check_pod(
    spec: YMap, kind: str, name: str, where: str, m: Matrix, target: DeploymentTarget
) -> tuple[list[Finding], list[Skip]]:
    out: list[Finding] = []
    skipped: list[Skip] = []
    selected, product, sel_line = _selected_gpu(spec, m)
    tgt = target
    if target.gpu is None and target.cc is None and product is not None:
        tgt = replace(target, gpu=product)
    for section, c, cline in _containers(spec):
        cname = str(c.get("name") or "?")
        who = f"{kind} {name}, container {cname!r}"
        res = c.get("resources")
        limits = res.get("limits") if isinstance(res, YMap) else None
        requests = res.get("requests") if isinstance(res, YMap) else None
        lim_v = limits.get(GPU) if isinstance(limits, YMap) else None
        req_v = requests.get(GPU) if isinstance(requests, YMap) else None
        lim, lim_t = _quantity(lim_v)
        req, req_t = _quantity(req_v)
        gline = (
            limits.line_of(GPU)
            if isinstance(limits, YMap) and GPU in limits
            else (requests.line_of(GPU) if isinstance(requests, YMap) and GPU in requests else cline)
        )
        for val, text in ((lim_v, lim_t), (req_v, req_t)):
            if val is not None and (text == "" or not text.isdigit()):
                out.append(
                    _f(
                        GPU_LIMIT,
                        "error",
                        f"{who}: {GPU} {text!r} is not a whole number",
                        f"GPUs are counted whole: the API server rejects a fractional or non-numeric {GPU} "
                        "quantity (use MIG or time-slicing profiles to share a GPU).",
                        where,
                        gline,
                        (Fix(f"Request whole GPUs: {GPU}: 1"),),
                        container=cname,
                    )
                )
        if req_v is not None and lim_v is None:
            out.append(
                _f(
                    GPU_LIMIT,
                    "error",
                    f"{who}: {GPU} is requested but has no limit",
                    f"{GPU} is an extended resource: it must be set in limits (requests may only repeat the same "
                    "number); the API server rejects the pod with 'Limit must be set for non overcommitable "
                    "resources'.",
                    where,
                    gline,
                    (Fix(f"Set it under limits: {GPU}: {req_t or 1}"),),
                    container=cname,
                )
            )
        elif req is not None and lim is not None and req != lim:
            out.append(
                _f(
                    GPU_LIMIT,
                    "error",
                    f"{who}: {GPU} request {req} differs from its limit {lim}",
                    "Extended resources cannot be overcommitted: the request must equal the limit, or the API "
                    "server rejects the pod.",
                    where,
                    gline,
                    (Fix(f"Drop the request or make it {lim}"),),
                    container=cname,
                )
            )
        gpus = lim if lim is not None else req
        image = c.get("image")
        ic = None
        if isinstance(image, str):
            ic = check_image(image, m, c.line_of("image"), where, tgt)
            out.extend(
                replace(f, group="k8s", facts={**dict(f.facts), "container": cname}) for f in ic.findings
            )
            skipped.extend(ic.skipped)
        if (
            gpus is None
            and lim_v is None
            and req_v is None
            and ic is not None
            and ic.cuda_image
            and section == "containers"
        ):
            out.append(
                _f(
                    NO_GPU,
                    "warning",
                    f"{who} runs a CUDA image but requests no {GPU}",
                    f"{image} carries CUDA, but the container has no {GPU} limit: the device plugin gives it no "
                    "GPU, so CUDA code falls back to the CPU or fails. (Fine if this container does not use the GPU.)",
                    where,
                    cline,
                    (Fix(f"Request a GPU: resources.limits.{GPU}: 1"),),
                    container=cname,
                )
            )
        if gpus and gpus > 1 and ic is not None and ic.torch and not _shm_mounted(spec, c):
            out.append(
                _f(
                    SHM,
                    "warning",
                    f"{who}: {gpus} GPUs with the container runtime's 64 MB /dev/shm",
                    "NCCL between the GPUs of one pod (and DataLoader workers) uses /dev/shm; the runtime's default "
                    "64 MB makes multi-GPU PyTorch, vLLM or TGI fail with 'bus error' or NCCL 'unhandled system "
                    "error'. Mount a memory-backed emptyDir there.",
                    where,
                    cline,
                    (Fix("Add a volume {name: dshm, emptyDir: {medium: Memory}} mounted at /dev/shm"),),
                    container=cname,
                )
            )
        if gpus and not selected and target.gpu is None and target.cc is None:
            out.append(
                _f(
                    NODE_SELECTOR,
                    "info",
                    f"{who}: no node selector for the GPU product",
                    f"The pod requests {GPU} but selects no GPU product (nodeSelector or node affinity on "
                    f"{', '.join(GPU_LABELS)}): it lands on whatever GPU node has room, so the image's CUDA "
                    "architectures and driver needs are checked against no GPU.",
                    where,
                    sel_line,
                    (
                        Fix(
                            "Select the product, e.g. nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}"
                        ),
                    ),
                    container=cname,
                )
            )
    return out, skipped


def _workloads(doc: Any) -> Iterator[YMap]:
    if not isinstance(doc, YMap):
        return
    if doc.get("kind") == "List" and isinstance(doc.get("items"), YList):
        for item in doc["items"]:
            yield from _workloads(item)
        return
    yield doc


def check_k8s(paths: Iterable[str | Path], m: Matrix, target: DeploymentTarget | None = None) -> Report:
    """Every workload of every manifest: one report, findings naming their file and line."""
    target = target or DeploymentTarget()
    findings: list[Finding] = []
    skipped: list[Skip] = []
    files: list[dict[str, Any]] = []
    for p in paths:
        path = Path(p)
        where = str(path)
        docs = load_documents(path, "Kubernetes manifest")
        if not any(isinstance(d, YMap) and "kind" in d for d in docs):
            raise InputError(f"{where} is not a Kubernetes manifest: no document has a 'kind'")
        names: list[str] = []
        for doc in docs:
            for w in _workloads(doc):
                kind = str(w.get("kind"))
                path_ = POD_SPEC_PATHS.get(kind)
                if path_ is None:
                    continue
                meta = w.get("metadata")
                name = str(meta.get("name")) if isinstance(meta, YMap) and meta.get("name") else "?"
                spec: Any = w
                for k in path_:
                    spec = spec.get(k) if isinstance(spec, YMap) else None
                if not isinstance(spec, YMap):
                    skipped.append(Skip("k8s.pod", f"{where}:{w.line}: {kind} {name} has no pod spec"))
                    continue
                names.append(f"{kind}/{name}")
                fs, sk = check_pod(spec, kind, name, where, m, target)
                findings.extend(fs)
                skipped.extend(sk)
        files.append({"file": where, "workloads": names})
    rep = Report(
        unique(findings, lambda f: (f.id, f.title, f.facts.get("file"), f.line)),
        unique(skipped, lambda s: (s.id, s.reason)),
        {},
        m.updated_date,
    )
    rep.extra["files"] = files
    return rep
