"""Parsers for the framework tables (pytorch.yaml, tensorflow.yaml), known_issues.yaml and the cross-file checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from compat.matrix.model import Matrix
from compat.matrix.rows import KNOWN_ISSUE_FLAGS, KnownIssue, TfRelease, TorchAbi, TorchRelease, TorchVariant
from compat.matrix.validation import (
    Problems,
    parse_field,
    row_where,
    section_rows,
    source_field,
    str_field,
    take_na,
)
from compat.versions import Arch, major_minor, parse_arch, parse_dotted, parse_python, parse_version


def _pythons(row: Mapping[str, Any], w: str, p: Problems) -> tuple[str, ...]:
    py = row.get("python")
    if not isinstance(py, list) or not py:
        p.add(w, "'python' must be a non-empty list of quoted versions")
        return ()
    out = []
    for x in py:
        if not isinstance(x, str):
            p.add(w, f"python version {x!r} must be a quoted string")
            continue
        if parse_field(parse_python, x, w, "python", p) is not None:
            out.append(x)
    return tuple(out)


def _archs(val: Any, w: str, p: Problems, key: str) -> tuple[Arch, ...] | None:
    if val is None:
        return None
    if not isinstance(val, list) or not all(isinstance(a, str) for a in val):
        p.add(w, f"'{key}' must be a list of strings like sm_86")
        return None
    out = []
    for a in val:
        arch = parse_field(parse_arch, a, w, key, p)
        if arch is not None:
            out.append(arch)
    return tuple(out)


def _pins(val: Any, w: str, key: str, p: Problems) -> dict[str, str]:
    if val is None:
        return {}
    if not isinstance(val, dict) or not all(
        isinstance(k, str) and isinstance(x, str) for k, x in val.items()
    ):
        p.add(w, f"'{key}' must map package names to quoted versions")
        return {}
    return dict(val)


def parse_torch(doc: Any, p: Problems) -> list[TorchRelease]:
    f = "pytorch.yaml"
    out: list[TorchRelease] = []
    seen: set[Version] = set()
    default_win = doc.get("pypi_default_windows", "cpu") if isinstance(doc, dict) else "cpu"
    for i, row in enumerate(section_rows(doc, f, "releases", p)):
        w = row_where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = str_field(row, "version", w, p)
        v = parse_field(lambda s: parse_version(s, "PyTorch version"), raw, w, "version", p)
        py = _pythons(row, w, p)
        variants: list[TorchVariant] = []
        vlist = row.get("variants")
        if not isinstance(vlist, list):
            p.add(w, "'variants' must be a list")
            vlist = []
        tags: set[str] = set()
        for j, vr in enumerate(vlist):
            vw = f"{w}.variants[{j}]"
            if not isinstance(vr, dict):
                p.add(vw, "variant must be a mapping")
                continue
            vna: dict[str, str] = {}
            vr = take_na(vr, ("cudnn", "archs"), vna)
            tag = str_field(vr, "tag", vw, p)
            if tag is None:
                continue
            if tag in tags:
                p.add(vw, f"duplicate variant {tag!r}")
            tags.add(tag)
            cuda = str_field(vr, "cuda", vw, p, required=False)
            parse_field(lambda s: parse_dotted(s, "CUDA version", min_parts=2), cuda, vw, "cuda", p)
            cudnn = str_field(vr, "cudnn", vw, p, required=False)
            parse_field(lambda s: parse_dotted(s, "cuDNN version"), cudnn, vw, "cudnn", p)
            if tag.startswith("cu") and cuda is None:
                p.add(vw, "CUDA variant without 'cuda'")
            archs = _archs(vr.get("archs"), vw, p, "archs")
            if not tag.startswith("cu") and archs is None:
                archs = ()
            variants.append(TorchVariant(tag, cuda, cudnn, archs, vr.get("index_url"), vna))
        default = row.get("pypi_default")
        if default is not None and (not isinstance(default, str) or default not in tags):
            p.add(w, f"'pypi_default' {default!r} is not one of its variants")
        src = source_field(row, w, p)
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            out.append(
                TorchRelease(
                    v,
                    raw or "",
                    py,
                    default,
                    str(row.get("pypi_default_windows", default_win)),
                    _pins(row.get("pypi_requires"), w, "pypi_requires", p),
                    tuple(variants),
                    src,
                )
            )
    out.sort(key=lambda r: r.version)
    return out


def parse_torch_abi(doc: Any, p: Problems) -> list[TorchAbi]:
    """pytorch.yaml's optional `cxx11_abi` table (rows: torch specifier, optional variants, cxx11, source)."""
    f = "pytorch.yaml"
    if not isinstance(doc, dict) or doc.get("cxx11_abi") is None:
        return []
    out: list[TorchAbi] = []
    for i, row in enumerate(section_rows(doc, f, "cxx11_abi", p)):
        w = row_where(f, "cxx11_abi", i, row, key="torch")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = str_field(row, "torch", w, p)
        spec: SpecifierSet | None = None
        if raw is not None:
            try:
                spec = SpecifierSet(raw)
            except InvalidSpecifier:
                p.add(w, f"'torch' {raw!r} is not a version specifier")
        variants = row.get("variants")
        if variants is not None and (
            not isinstance(variants, list) or not variants or not all(isinstance(t, str) for t in variants)
        ):
            p.add(w, "'variants' must be a non-empty list of variant tags")
            variants = None
            spec = None
        cxx11 = row.get("cxx11")
        if not isinstance(cxx11, bool):
            p.add(w, "'cxx11' must be true or false")
        src = source_field(row, w, p)
        if spec is not None and isinstance(cxx11, bool):
            out.append(TorchAbi(spec, tuple(variants) if variants is not None else None, cxx11, src))
    return out


def parse_tf(doc: Any, p: Problems) -> list[TfRelease]:
    f = "tensorflow.yaml"
    out: list[TfRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(section_rows(doc, f, "releases", p)):
        w = row_where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        tna: dict[str, str] = {}
        row = take_na(row, ("cuda", "cudnn", "compute_capabilities", "compiler", "build_tool"), tna)
        raw = str_field(row, "version", w, p)
        v = parse_field(lambda s: parse_version(s, "TensorFlow version"), raw, w, "version", p)
        py = _pythons(row, w, p)
        cuda = str_field(row, "cuda", w, p, required=False)
        parse_field(lambda s: parse_dotted(s, "CUDA version", min_parts=2), cuda, w, "cuda", p)
        cudnn = str_field(row, "cudnn", w, p, required=False)
        parse_field(lambda s: parse_dotted(s, "cuDNN version"), cudnn, w, "cudnn", p)
        wg = row.get("windows_gpu")
        if wg is not None and not isinstance(wg, bool):
            p.add(w, "'windows_gpu' must be true or false")
            wg = None
        archs = _archs(row.get("compute_capabilities"), w, p, "compute_capabilities")
        compiler = str_field(row, "compiler", w, p, required=False)
        build_tool = str_field(row, "build_tool", w, p, required=False)
        src = source_field(row, w, p)
        broken = row.get("and_cuda_broken")
        why = use = None
        if broken is not None:
            if not isinstance(broken, dict) or not all(
                isinstance(broken.get(k), str) for k in ("why", "use")
            ):
                p.add(w, "'and_cuda_broken' must give 'why' and 'use' (the release to install instead)")
            else:
                why, use = broken["why"], broken["use"]
                parse_field(
                    lambda s: parse_version(s, "TensorFlow version"), use, w, "and_cuda_broken.use", p
                )
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            out.append(
                TfRelease(
                    v,
                    raw or "",
                    py,
                    cuda,
                    cudnn,
                    _pins(row.get("and_cuda"), w, "and_cuda", p),
                    wg,
                    archs,
                    src,
                    compiler,
                    build_tool,
                    tna,
                    why,
                    use,
                )
            )
    out.sort(key=lambda r: r.version)
    return out


KNOWN_ISSUE_FACTS = ("torch", "tensorflow", "cuda", "cudnn", "driver", "python", "cc", "jax", "os")


def parse_known(doc: Any, p: Problems) -> list[KnownIssue]:
    f = "known_issues.yaml"
    out: list[KnownIssue] = []
    ids: set[str] = set()
    for i, row in enumerate(section_rows(doc, f, "issues", p)):
        w = row_where(f, "issues", i, row, "id")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        iid = str_field(row, "id", w, p)
        title = str_field(row, "title", w, p) or ""
        msg = str_field(row, "message", w, p) or ""
        sev = row.get("severity", "warning")
        if sev not in ("error", "warning", "info"):
            p.add(w, f"'severity' must be error, warning or info, got {sev!r}")
        when_raw = row.get("when")
        when: dict[str, SpecifierSet] = {}
        if not isinstance(when_raw, dict) or not when_raw:
            p.add(w, "'when' must be a non-empty mapping of fact -> specifier")
        else:
            for k, spec in when_raw.items():
                if k not in KNOWN_ISSUE_FACTS:
                    p.add(w, f"'when' names unknown fact {k!r}")
                    continue
                try:
                    when[k] = SpecifierSet(str(spec))
                except InvalidSpecifier:
                    p.add(w, f"'when.{k}': malformed specifier {spec!r}")
        req = row.get("requires") or []
        if not isinstance(req, list) or any(r not in KNOWN_ISSUE_FLAGS for r in req):
            p.add(w, f"'requires' must be a list of {', '.join(KNOWN_ISSUE_FLAGS)}")
            req = []
        fix = row.get("fix") or {}
        if not isinstance(fix, dict):
            p.add(w, "'fix' must be a mapping with text and command")
            fix = {}
        src = source_field(row, w, p)
        if iid is not None:
            if iid in ids:
                p.add(w, "duplicate id")
            ids.add(iid)
            out.append(
                KnownIssue(
                    iid, title, when, str(sev), msg, fix.get("text"), fix.get("command"), src, tuple(req)
                )
            )
    return out


def cross_validate(m: Matrix, p: Problems) -> None:
    """Rows that contradict another file."""
    cuda_mm = {major_minor(r.version) for r in m.cuda_releases}
    for r in m.torch:
        for var in r.variants:
            where = f"pytorch.yaml: {r.raw} {var.tag}"
            if var.cuda is None:
                continue
            try:
                cv = Version(var.cuda)
            except ValueError:  # a malformed version, already reported by parse_torch
                continue
            if m.cuda_releases and major_minor(cv) not in cuda_mm:
                p.add(where, f"CUDA {var.cuda} is not in cuda.yaml")
            for a in var.archs or ():
                if m.ccs and m.cuda_can_compile(cv, a.cc) is False:
                    p.add(where, f"{a} cannot be compiled by CUDA {var.cuda} according to cuda.yaml")
    for t in m.tensorflow:
        try:
            t_cuda = Version(t.cuda) if t.cuda else None
        except ValueError:  # a malformed version, already reported by parse_tf
            continue
        if t_cuda is not None and m.cuda_releases and major_minor(t_cuda) not in cuda_mm:
            p.add(f"tensorflow.yaml: {t.raw}", f"CUDA {t.cuda} is not in cuda.yaml")
