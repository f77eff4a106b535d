"""What an image reference in a Compose or Kubernetes file needs: the Dockerfile checks on `FROM image`."""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace
from typing import Any

from compat._valueclass import valueclass
from compat.findings import Finding, Report, Skip
from compat.matrix import Matrix

# Images that bring PyTorch (and so want shared memory for DataLoader workers / NCCL) though compat does
# not know their versions. Matched against the repository name.
TORCH_IMAGE_HINTS = (
    "pytorch",
    "vllm",
    "text-generation-inference",
    "sglang",
    "tensorrt-llm",
    "deepspeed",
    "axolotl",
    "nemo",
)


@valueclass
class ImageCheck:
    """The findings about one image reference and what compat learned of its stack."""

    findings: tuple[Finding, ...]
    skipped: tuple[Skip, ...]
    facts: dict[str, Any]
    known: bool
    kind: str
    cuda_image: bool
    """The image carries CUDA (nvidia/cuda, pytorch/pytorch, NGC, or torch with a CUDA build)."""
    torch: bool


@valueclass
class DeploymentTarget:
    """The machines a deployment runs on, as the command line or the manifest tells."""

    driver: str | None = None
    gpu: str | None = None
    cc: str | None = None
    today: _dt.date | None = None


def check_image(image: str, m: Matrix, line: int, where: str, target: DeploymentTarget) -> ImageCheck:
    """Analyse `FROM image` as a one-line Dockerfile; findings point at `where`:`line` (the manifest)."""
    from compat.dockerfile.analyze import analyze
    from compat.dockerfile.images import infer, parse_ref
    from compat.dockerfile.model import BASE_UNKNOWN, Options
    from compat.dockerfile.parser import parse
    from compat.errors import InputError

    if "$" in image or "{{" in image:
        reason = f"{where}:{line}: image {image!r} is a template placeholder; its checks are skipped"
        return ImageCheck((), (Skip("image", reason),), {}, False, "", False, False)
    try:
        ref = parse_ref(image)
    except InputError:
        return ImageCheck(
            (),
            (Skip("image", f"{where}:{line}: {image!r} is not an image reference"),),
            {},
            False,
            "",
            False,
            False,
        )
    stack = infer(ref, m.raw)
    df = parse(f"FROM {image}\n", origin=where)
    rep: Report = analyze(
        df,
        m,
        Options(target_driver=target.driver, target_gpu=target.gpu, target_cc=target.cc, today=target.today),
    )
    out: list[Finding] = []
    skipped: list[Skip] = []
    for f in rep.findings:
        if f.id == BASE_UNKNOWN:
            skipped.append(Skip("image", f"{where}:{line}: {f.message.split('. ')[0]}"))
            continue
        out.append(replace(f, line=line, facts={**dict(f.facts), "file": where, "image": image}))
    facts = dict(rep.facts)
    repo = ref.repository.lower()
    torch = (
        stack.torch is not None
        or stack.kind in ("pytorch", "ngc-pytorch")
        or any(h in repo for h in TORCH_IMAGE_HINTS)
    )
    cuda_image = (
        stack.cuda is not None
        or stack.torch_cuda is not None
        or stack.kind in ("cuda", "ngc-pytorch", "ngc-tensorflow", "tensorflow")
    )
    return ImageCheck(tuple(out), tuple(skipped), facts, stack.known, stack.kind, cuda_image, torch)


def stage_facts_gpu(facts: dict[str, Any]) -> bool:
    """Whether a Dockerfile report's final-stage facts describe a CUDA stack."""
    if "cuda" in facts:
        return True
    tb = facts.get("torch_build")
    if isinstance(tb, dict) and tb.get("raw") == "cuda":
        return True
    j = facts.get("jax")  # jax with its CUDA plugin or CUDA jaxlib ("0.4.30+cuda12", issue 17)
    if isinstance(j, dict) and "+cuda" in str(j.get("raw", "")):
        return True
    t = facts.get("torch")
    return isinstance(t, dict) and "+cu" in str(t.get("raw", ""))
