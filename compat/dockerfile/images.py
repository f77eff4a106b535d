"""Base images: parse an image reference and infer the stack it brings (CUDA, cuDNN, Python, framework).

Tags are read by rule (`nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04`); facts no tag spells out (the system Python
of an OS, what a `-cudnn8` image carried, NGC release contents) come from matrix/images.yaml (validate_document()).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from packaging.version import InvalidVersion, Version

from compat._valueclass import valueclass
from compat.matrixfiles import (
    Shape,
    anything,
    document,
    integer,
    items,
    mapping,
    problems,
    register_side_file,
    row_name,
    shown,
    text,
    url,
)

CUDA_REPOS = ("nvidia/cuda", "nvcr.io/nvidia/cuda")
_CUDA_TAG_RE = re.compile(
    r"^(?P<cuda>\d{1,4}\.\d{1,4}(?:\.\d{1,4})?)"  # bounded: int() refuses numbers of over 4300 digits
    r"(?:-(?P<cudnn>cudnn\d{0,4}))?"
    r"-(?P<flavour>base|runtime|devel)"
    r"(?:-(?P<os>[a-z]+[\d.]+))?$"
)
_PYTORCH_TAG_RE = re.compile(
    r"^(?P<torch>\d{1,4}\.\d{1,4}(?:\.\d{1,4})?)-cuda(?P<cuda>\d{1,4}\.\d{1,4})-cudnn(?P<cudnn>\d{1,4})"
    r"-(?P<flavour>runtime|devel)$"
)
_TF_TAG_RE = re.compile(r"^(?P<tf>\d{1,4}\.\d{1,4}(?:\.\d{1,4})?(?:rc\d{1,4})?)-gpu(?:-jupyter)?$")
_NGC_RE = re.compile(r"^(?P<release>\d{2}\.\d{2})-(?:(?P<tf>tf[12])-)?py3(?:-.*)?$")
_DL_BASE_RE = re.compile(
    r"^(?P<release>\d{2}\.\d{2})-cuda(?P<cuda>\d{1,4}\.\d{1,4})-(?P<flavour>devel|runtime|base)"
    r"-(?P<os>ubuntu\d{2}\.\d{2})$"
)
_PYTHON_TAG_RE = re.compile(r"^(?P<py>3\.\d{1,2})(?:\.\d+)?(?:[a-z]+\d*)?(?:-.*)?$")


@valueclass
class ImageRef:
    """A parsed image reference: `[registry/]repository[:tag][@digest]`."""

    raw: str
    repository: str
    """Normalised: no `docker.io/` or `library/` prefix, lower-case."""
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        return self.repository + (f":{self.tag}" if self.tag else "")


def parse_ref(text: str) -> ImageRef:
    raw = text.strip()
    rest, _, digest = raw.partition("@")
    tag: str | None = None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        rest, tag = rest.rsplit(":", 1)
    repo = rest.lower()
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if repo.startswith(prefix):
            repo = repo[len(prefix) :]
    if repo.startswith("library/"):
        repo = repo[len("library/") :]
    return ImageRef(raw, repo, tag or None, digest or None)


@valueclass
class BaseStack:
    """What a base image brings, as far as its reference and images.yaml tell."""

    image: str
    kind: str
    """cuda | pytorch | tensorflow | ngc-pytorch | ngc-tensorflow | ngc-base | python | os | conda | scratch |
    unknown"""
    cuda: str | None = None
    """System CUDA toolkit/runtime of the image (None: none, or unknown when `known` is False)."""
    flavour: str | None = None
    """nvidia/cuda and pytorch/pytorch: base | runtime | devel."""
    cudnn: str | None = None
    """cuDNN version where known to major.minor or better (e.g. "8.9")."""
    cudnn_major: int | None = None
    """0 means: known to have no cuDNN."""
    os: str | None = None
    python: str | None = None
    python_how: str = ""
    torch: str | None = None
    torch_cuda: str | None = None
    tensorflow: str | None = None
    min_driver: str | None = None
    """Driver branch the image's release notes require (NGC)."""
    require_branches: tuple[str, ...] | None = None
    """Driver branches NVIDIA_REQUIRE_CUDA accepts below the CUDA's own minimum (nvidia/cuda)."""
    known: bool = True
    reason: str = ""
    """Why the image is unknown (known=False)."""
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def nvcc(self) -> bool:
        return self.cuda is not None and (
            self.flavour == "devel" or self.kind in ("ngc-pytorch", "ngc-tensorflow")
        )


# ------------------------------------------------------------------ images.yaml


def _doc(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    doc = raw.get("images.yaml")
    return doc if isinstance(doc, Mapping) else {}


def os_row(doc: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    for row in doc.get("os") or ():
        if isinstance(row, Mapping) and (row.get("name") == name or name in (row.get("images") or ())):
            return row
    return None


def _os_from_image(doc: Mapping[str, Any], ref: ImageRef) -> Mapping[str, Any] | None:
    full = f"{ref.repository}:{ref.tag}" if ref.tag else ref.repository
    return os_row(doc, full)


def infer(ref: ImageRef, raw: Mapping[str, Any]) -> BaseStack:
    """The stack of base image `ref` (raw: Matrix.raw, whose "images.yaml" holds the data)."""
    doc = _doc(raw)
    repo, tag = ref.repository, ref.tag
    name = ref.raw
    if repo == "scratch":
        return BaseStack(name, "scratch", known=True, reason="")
    if tag is None and ref.digest is None:
        tag = "latest"
    if tag == "latest" or (tag is not None and tag.endswith("latest") and repo not in ("python",)):
        return BaseStack(
            name,
            "unknown",
            known=False,
            reason=f"'{name}' has no version in its tag ('latest' moves): its CUDA, cuDNN and "
            "framework versions cannot be known from the Dockerfile",
        )
    if repo in CUDA_REPOS and tag is not None:
        return _cuda_image(name, tag, doc)
    if repo == "pytorch/pytorch" and tag is not None:
        m = _PYTORCH_TAG_RE.match(tag)
        if m is not None:
            torch = m.group("torch")
            cu = m.group("cuda")
            devel = m.group("flavour") == "devel"
            prow = _find(doc.get("pytorch_images"), "version", torch)
            return BaseStack(
                name,
                "pytorch",
                cuda=cu if devel else None,
                flavour=m.group("flavour"),
                cudnn_major=int(m.group("cudnn")) if devel else 0,
                torch=torch,
                torch_cuda=cu,
                python=_s(prow, "python"),
                python_how=f"the image's conda Python ({name})" if _s(prow, "python") else "",
                source="https://github.com/pytorch/pytorch/blob/main/docker.Makefile",
                notes=(
                    "runtime images are ubuntu with torch's own CUDA libraries; devel images are "
                    f"nvidia/cuda:{cu}-cudnn{m.group('cudnn')}-devel with nvcc",
                ),
            )
    if repo == "tensorflow/tensorflow" and tag is not None:
        m = _TF_TAG_RE.match(tag)
        if m is not None:
            row = _find(doc.get("tensorflow_images"), "version", m.group("tf"))
            return BaseStack(
                name,
                "tensorflow",
                tensorflow=m.group("tf"),
                python=_s(row, "python"),
                python_how=f"the image's Python ({name})" if row else "",
                os=_s(row, "os"),
                source=_s(row, "source") or "",
                notes=("the image carries the CUDA and cuDNN its TensorFlow was built with",),
            )
    if repo == "nvcr.io/nvidia/cuda-dl-base" and tag is not None:
        m = _DL_BASE_RE.match(tag)
        if m is not None:
            # NGC's CUDA deep-learning base (YY.MM-cudaX.Y-devel-ubuntuNN.NN): the tag spells the CUDA release, the
            # flavour and the OS, read by rule as nvidia/cuda tags are; its cuDNN and Python are not inferred.
            return BaseStack(
                name,
                "ngc-base",
                cuda=m.group("cuda"),
                flavour=m.group("flavour"),
                cudnn_major=None,
                os=m.group("os"),
                source="https://catalog.ngc.nvidia.com/orgs/nvidia/containers/cuda-dl-base",
                notes=(
                    f"NGC cuda-dl-base {m.group('release')}: CUDA {m.group('cuda')} from the tag; its cuDNN, "
                    "NCCL and Python versions are not inferred",
                ),
            )
    if repo in ("nvcr.io/nvidia/pytorch", "nvcr.io/nvidia/tensorflow") and tag is not None:
        m = _NGC_RE.match(tag)
        kind = "ngc-pytorch" if repo.endswith("pytorch") else "ngc-tensorflow"
        if m is not None:
            row = _ngc_row(doc, "pytorch" if kind == "ngc-pytorch" else "tensorflow", m.group("release"))
            if row is None:
                return BaseStack(
                    name,
                    kind,
                    known=False,
                    reason=f"NGC release {m.group('release')} is not in matrix/images.yaml "
                    f"(updated {_updated(doc)})",
                )
            framework = _s(row, "framework")
            return BaseStack(
                name,
                kind,
                cuda=_s(row, "cuda"),
                cudnn=_s(row, "cudnn"),
                cudnn_major=_major(_s(row, "cudnn")),
                os=_s(row, "os"),
                python=_s(row, "python"),
                python_how=f"the NGC {m.group('release')} container's Python",
                torch=framework if kind == "ngc-pytorch" else None,
                torch_cuda=_s(row, "cuda"),
                tensorflow=framework if kind == "ngc-tensorflow" else None,
                min_driver=_s(row, "min_driver"),
                source=_s(row, "source") or "",
            )
    if repo == "python" and tag is not None:
        m = _PYTHON_TAG_RE.match(tag)
        if m is not None:
            return BaseStack(name, "python", python=m.group("py"), python_how=f"the image's Python ({name})")
    osr = _os_from_image(doc, ref)
    if osr is not None:
        return BaseStack(
            name,
            "os",
            os=str(osr.get("name")),
            python=None,
            python_how="",
            source=str(osr.get("source") or ""),
        )
    conda = [r.get("image") for r in (doc.get("conda_images") or ()) if isinstance(r, Mapping)]
    if repo in conda:
        return BaseStack(
            name,
            "conda",
            python=None,
            python_how="",
            notes=("a conda base image: Python is whatever its installer shipped",),
        )
    return BaseStack(
        name,
        "unknown",
        known=False,
        reason=f"'{name}' is not an image compat knows (matrix/images.yaml updated {_updated(doc)}): "
        "its CUDA, cuDNN and framework versions are not inferred",
    )


def _cuda_image(name: str, tag: str, doc: Mapping[str, Any]) -> BaseStack:
    m = _CUDA_TAG_RE.match(tag)
    if m is None:
        return BaseStack(
            name,
            "cuda",
            known=False,
            reason=f"tag '{tag}' does not follow nvidia/cuda's <version>[-cudnn<N>]-<flavour>-<os> pattern",
        )
    cuda = m.group("cuda")
    flavour = m.group("flavour")
    cudnn_tag = m.group("cudnn")
    os_name = m.group("os")
    cuda_mm = ".".join(cuda.split(".")[:2])
    cudnn_major: int | None = 0
    cudnn: str | None = None
    notes: list[str] = []
    nv = doc.get("nvidia_cuda") or {}
    if cudnn_tag:
        digits = cudnn_tag[len("cudnn") :]
        cudnn_major = int(digits) if digits else _int(nv.get("cudnn_unnumbered_major"))
        row = _find(nv.get("cudnn"), "cuda", cuda, extra=("tag", cudnn_tag)) or _find(
            nv.get("cudnn"), "cuda", cuda_mm, extra=("tag", cudnn_tag)
        )
        if row is not None:
            cudnn = _s(row, "cudnn")
    python = None
    how = ""
    osr = os_row(doc, os_name) if os_name else None
    if osr is not None:
        python = _s(osr, "python")
        how = f"apt's python3 on {os_name}"
    req = _find(nv.get("require_cuda"), "cuda", cuda_mm)
    branches = tuple(str(b) for b in (req.get("branches") or ())) if req is not None else None
    return BaseStack(
        name,
        "cuda",
        cuda=cuda,
        flavour=flavour,
        cudnn=cudnn,
        cudnn_major=cudnn_major,
        os=os_name,
        python=python,
        python_how=how,
        require_branches=branches,
        notes=tuple(notes),
        source="https://gitlab.com/nvidia/container-images/cuda",
    )


def _ngc_row(doc: Mapping[str, Any], image: str, release: str) -> Mapping[str, Any] | None:
    for row in doc.get("ngc") or ():
        if isinstance(row, Mapping) and row.get("release") == release and image in (row.get("images") or ()):
            return row
    return None


def _find(rows: Any, key: str, value: str, extra: tuple[str, str] | None = None) -> Mapping[str, Any] | None:
    for row in rows or ():
        if not isinstance(row, Mapping) or str(row.get(key)) != value:
            continue
        if extra is not None and str(row.get(extra[0])) != extra[1]:
            continue
        return row
    return None


def _s(row: Mapping[str, Any] | None, key: str) -> str | None:
    if row is None:
        return None
    v = row.get(key)
    return str(v) if v is not None else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) else None


def _major(v: str | None) -> int | None:
    if v is None:
        return None
    try:
        return int(v.split(".")[0])
    except ValueError:
        return None


def _updated(doc: Mapping[str, Any]) -> str:
    u = doc.get("updated")
    return u.isoformat() if isinstance(u, _dt.date) else str(u or "unknown")


def ngc_releases(raw: Mapping[str, Any], image: str) -> list[str]:
    return sorted(
        str(r.get("release"))
        for r in (_doc(raw).get("ngc") or ())
        if isinstance(r, Mapping) and image in (r.get("images") or ())
    )


# ------------------------------------------------------------------ validation


_PY = text(pattern=r"^3\.\d{1,2}$", form="a Python version X.Y")
_DOTTED = text(pattern=r"^\d+(\.\d+){0,3}$", form="a dotted version")
_DRIVER = text(pattern=r"^\d{3}(\.\d{1,3}){0,2}$", form="a driver version")


def _rows(fields: dict[str, Shape], *required: str, label: str = "", unique: tuple[str, ...] = ()) -> Shape:
    """A section of sourced rows."""
    row = mapping({**fields, "source": url()}, required=(*required, "source"))
    return items(row, label=(label,) if label else (), unique=unique)


SHAPE = document(
    {
        "os": _rows(
            {"name": text(), "python": _PY, "images": items(text())}, "name", label="name", unique=("name",)
        ),
        "nvidia_cuda": mapping(
            {
                "cudnn_unnumbered_major": integer(),
                "cudnn": _rows(
                    {
                        "cuda": _DOTTED,
                        "tag": text(pattern=r"^cudnn\d*$", form="cudnn or cudnnN"),
                        "cudnn": _DOTTED,
                    },
                    "cuda",
                    "tag",
                    "cudnn",
                ),
                "require_cuda": _rows(
                    {
                        "cuda": _DOTTED,
                        "branches": items(text(pattern=r"^\d+$", form='a quoted driver branch like "535"')),
                    },
                    "cuda",
                    "branches",
                ),
                "deleted": _rows({"cuda": _DOTTED, "evidence": text()}, "cuda", "evidence"),
            }
        ),
        "ngc": _rows(
            {
                "release": text(pattern=r"^\d{2}\.\d{2}$", form="YY.MM"),
                "cuda": _DOTTED,
                "cudnn": _DOTTED,
                "python": _PY,
                "min_driver": _DRIVER,
                "framework": anything(),
                "images": items(text(enum=("pytorch", "tensorflow")), nonempty=True),
            },
            "release",
            "cuda",
            "images",
            label="release",
        ),
        "stale_apt_key": _rows(
            {"image": text(), "evidence": text(), "torch_below": _DOTTED}, "image", "evidence"
        ),
        "pytorch_images": _rows({"version": _DOTTED, "python": _PY}, "version", "python", label="version"),
        "tensorflow_images": _rows({"version": _DOTTED, "python": _PY}, "version", label="version"),
        "conda_images": _rows({"image": text()}, "image", label="image"),
    }
)


def _rules(doc: Mapping[str, Any]) -> list[str]:
    """What the shape cannot say: NGC frameworks are versions, and one row per (release, image)."""
    out: list[str] = []
    seen: set[tuple[str, str]] = set()
    rows = doc.get("ngc")
    for i, row in enumerate(rows if isinstance(rows, list) else ()):
        if not isinstance(row, Mapping):
            continue
        where = row_name("ngc", i, row, "release")
        fw = row.get("framework")
        if isinstance(fw, (str, int, float)) and not isinstance(fw, bool):
            try:
                Version(str(fw))
            except (InvalidVersion, ValueError):  # ValueError: a number of over 4300 digits
                out.append(f"{where}: 'framework' {shown(fw, 40)} is not a version")
        elif fw is not None:
            out.append(f"{where}: 'framework' {shown(fw, 40)} is not a version")
        imgs, release = row.get("images"), row.get("release")
        if not isinstance(imgs, list) or not isinstance(release, str):
            continue  # the shape reports it
        for image in imgs:
            if not isinstance(image, str):
                continue  # the shape reports it
            if (release, image) in seen:
                out.append(f"{where}: duplicate {image} release {release}")
            seen.add((release, image))
    return out


def deleted_row(raw: Mapping[str, Any], cuda: str) -> Mapping[str, Any] | None:
    """The images.yaml row saying NVIDIA deleted the nvidia/cuda tags of CUDA `cuda`, if there is one."""
    nv = _doc(raw).get("nvidia_cuda")
    for row in (nv.get("deleted") or ()) if isinstance(nv, Mapping) else ():
        c = str(row.get("cuda", "")) if isinstance(row, Mapping) else ""
        if c and (cuda == c or cuda.startswith(c + ".")):
            return dict(row)
    return None


def validate_document(doc: Any) -> list[str]:
    """Every problem in an images.yaml document (empty when valid)."""
    return problems(SHAPE, doc, _rules)


register_side_file("images.yaml", validate_document)
