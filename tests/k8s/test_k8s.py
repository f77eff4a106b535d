"""`compat k8s`: nvidia.com/gpu limits, /dev/shm, node selectors and the images' needs, with line numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WILD = Path(__file__).resolve().parents[1] / "data" / "dockerfile" / "wild"


def _write(tmp_path: Path, text: str, name: str = "m.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _ids(doc: dict[str, Any]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in doc["findings"]:
        out.setdefault(f["id"], []).append(f["line"])
    return out


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  {selector}
  containers:
    - name: c
      image: {image}
      resources:
        {res}
"""


def test_real_gke_manifests_in_one_run(run: Any) -> None:
    files = sorted(str(p) for p in WILD.glob("**/kubernetes-engine-samples--*.k8s.yaml"))[:6]
    assert len(files) == 6
    r = run("k8s", *files, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert len(doc["files"]) == 6
    assert not [f for f in doc["findings"] if f["severity"] == "error"]


def test_request_without_limit_and_unequal_and_fractional(tmp_path: Path, run: Any) -> None:
    for res, title in (
        ('requests: {nvidia.com/gpu: "1"}', "has no limit"),
        ("{limits: {nvidia.com/gpu: 2}, requests: {nvidia.com/gpu: 1}}", "differs from its limit"),
        ('limits: {nvidia.com/gpu: "0.5"}', "not a whole number"),
    ):
        p = _write(tmp_path, POD.format(selector="", image="python:3.12", res=res))
        r = run("k8s", str(p), "--json")
        doc = json.loads(r.out)
        errs = [f for f in doc["findings"] if f["id"] == "k8s.gpu-limit"]
        assert errs and title in errs[0]["title"] and errs[0]["line"] == 10, (res, doc["findings"])
        assert r.code == 1


def test_cuda_image_without_gpu_limit(tmp_path: Path, run: Any) -> None:
    p = _write(
        tmp_path,
        POD.format(selector="", image="nvidia/cuda:12.4.1-runtime-ubuntu22.04", res="limits: {cpu: 1}"),
    )
    assert _ids(json.loads(run("k8s", str(p), "--json").out)) == {"k8s.no-gpu": [7]}


def test_multi_gpu_torch_needs_shm_and_emptydir_fixes_it(tmp_path: Path, run: Any) -> None:
    image = "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"
    sel = "nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}"
    p = _write(tmp_path, POD.format(selector=sel, image=image, res="limits: {nvidia.com/gpu: 2}"))
    assert _ids(json.loads(run("k8s", str(p), "--json").out)) == {"k8s.shm": [7]}
    fixed = POD.format(selector=sel, image=image, res="limits: {nvidia.com/gpu: 2}") + (
        "      volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n  volumes: [{name: dshm, emptyDir: {medium: Memory}}]\n"
    )
    p = _write(tmp_path, fixed)
    assert json.loads(run("k8s", str(p), "--json").out)["findings"] == []


def test_node_selector_names_the_gpu_for_the_image_checks(tmp_path: Path, run: Any) -> None:
    # pytorch/pytorch 2.3 CUDA 12.1 wheels have no kernels for compute capability 3.7 (K80).
    image = "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"
    res = "limits: {nvidia.com/gpu: 1}"
    p = _write(
        tmp_path,
        POD.format(
            selector="nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-k80}",
            image=image,
            res=res,
        ),
    )
    doc = json.loads(run("k8s", str(p), "--json").out)
    assert any(f["severity"] == "error" and f["line"] == 8 for f in doc["findings"]), doc["findings"]
    p = _write(tmp_path, POD.format(selector="", image=image, res=res))
    assert _ids(json.loads(run("k8s", str(p), "--json").out)) == {"k8s.node-selector": [6]}  # the pod spec


def test_deployment_job_cronjob_and_list_with_other_documents(tmp_path: Path, run: Any) -> None:
    tmpl = "template:\n{i}  spec:\n{i}    containers: [{{name: c, image: 'nvidia/cuda:12.4.1-base-ubuntu22.04'}}]\n"
    text = (
        "kind: Service\nmetadata: {name: s}\n---\n"
        "kind: Deployment\nmetadata: {name: d}\nspec:\n  " + tmpl.format(i="  ") + "---\n"
        "kind: CronJob\nmetadata: {name: cj}\nspec:\n  jobTemplate:\n    spec:\n      "
        + tmpl.format(i="      ")
        + "---\n"
        "kind: List\nitems:\n  - kind: Job\n    metadata: {name: j}\n    spec:\n      "
        + tmpl.format(i="        ")
    )
    doc = json.loads(run("k8s", str(_write(tmp_path, text)), "--json").out)
    assert doc["files"][0]["workloads"] == ["Deployment/d", "CronJob/cj", "Job/j"]
    assert len([f for f in doc["findings"] if f["id"] == "k8s.no-gpu"]) == 3


def test_bad_input(tmp_path: Path, run: Any) -> None:
    r = run("k8s", str(_write(tmp_path, "just: data\n")))
    assert r.code == 2 and "not a Kubernetes manifest" in r.err
    r = run("k8s", str(_write(tmp_path, "kind: Pod\nspec: [\n")))
    assert r.code == 2 and "not valid YAML" in r.err and len(r.err.strip().splitlines()) == 1
    r = run("k8s", str(tmp_path / "missing.yaml"))
    assert r.code == 2
    r = run("k8s", str(_write(tmp_path, "kind: Pod\n")), "--target-gpu", "nosuchgpu")
    assert r.code == 2 and "unknown GPU" in r.err


def test_odd_values_never_crash(tmp_path: Path, run: Any) -> None:
    for v in ("null", "1", "[]", "{}", "[1, {a: b}]", "'x'", "99999999999999999999999999999999999999999999"):
        text = (
            f"kind: Pod\nspec:\n  nodeSelector: {v}\n  affinity: {v}\n  tolerations: {v}\n  volumes: {v}\n"
            f"  containers: [{{image: 'pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime', volumeMounts: {v},"
            f" resources: {{limits: {{nvidia.com/gpu: {v}}}, requests: {{nvidia.com/gpu: {v}}}}}}}, {v}]\n"
            f"---\nkind: List\nitems: {v}\n"
        )
        r = run("k8s", str(_write(tmp_path, text)), "--json")
        assert r.code in (0, 1) and "Traceback" not in r.err, (v, r.err)
        json.loads(r.out)
