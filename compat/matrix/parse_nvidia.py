"""Parsers for NVIDIA's tables: cuda.yaml, gpus.yaml and cudnn.yaml rows, every problem collected."""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from compat.matrix.model import gpu_keys
from compat.matrix.rows import OSES, CCRow, CudaRelease, CudnnPackage, CudnnRelease, GpuRow, MinorCompat
from compat.matrix.validation import (
    Problems,
    drivers_field,
    parse_field,
    row_where,
    section_rows,
    source_field,
    str_field,
    take_na,
)
from compat.versions import parse_cc, parse_dotted, parse_driver


def parse_cuda(doc: Any, p: Problems) -> tuple[list[CudaRelease], dict[int, MinorCompat], list[CCRow]]:
    f = "cuda.yaml"
    releases: list[CudaRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(section_rows(doc, f, "releases", p)):
        w = row_where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        na: dict[str, str] = {}
        row = take_na(row, ("min_driver.linux", "min_driver.windows"), na)
        raw = str_field(row, "version", w, p)
        v = parse_field(lambda s: parse_dotted(s, "CUDA version", min_parts=2), raw, w, "version", p)
        src = source_field(row, w, p)
        drivers = drivers_field(row, "min_driver", w, p)
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            releases.append(
                CudaRelease(v, raw or "", str(row.get("name") or f"CUDA {raw}"), drivers, src, na)
            )
    minor: dict[int, MinorCompat] = {}
    for i, row in enumerate(section_rows(doc, f, "minor_compat", p)):
        w = row_where(f, "minor_compat", i, row, "major")
        if not isinstance(row, dict) or not isinstance(row.get("major"), int):
            p.add(w, "row needs an integer 'major'")
            continue
        mna: dict[str, str] = {}
        row = take_na(row, OSES, mna)
        floor = {o: row.get(o) for o in OSES}
        for o, d in floor.items():
            if d is not None and (not isinstance(d, str) or parse_field(parse_driver, d, w, o, p) is None):
                floor[o] = None
                if not isinstance(d, str):
                    p.add(w, f"'{o}' must be a quoted driver version")
        if row["major"] in minor:
            p.add(w, "duplicate major")
        minor[row["major"]] = MinorCompat(row["major"], floor, source_field(row, w, p), mna)
    ccs: list[CCRow] = []
    for i, row in enumerate(section_rows(doc, f, "compute_capabilities", p)):
        w = row_where(f, "compute_capabilities", i, row, "cc")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        cna: dict[str, str] = {}
        row = take_na(row, ("added", "deprecated", "removed", "last_driver"), cna)
        cc = parse_field(parse_cc, str_field(row, "cc", w, p), w, "cc", p)
        vals = {}
        for key in ("added", "deprecated", "removed"):
            s = str_field(row, key, w, p, required=False)
            vals[key] = parse_field(lambda s: parse_dotted(s, "CUDA version"), s, w, key, p)
        src = source_field(row, w, p)
        last = str_field(row, "last_driver", w, p, required=False)
        last_branch: int | None = None
        if last is not None:
            if not (
                last.isascii() and last.isdigit() and len(last) <= 6
            ):  # int() takes "²" and refuses 5000 digits
                p.add(w, f"'last_driver' must be a driver branch number like \"470\", got {last!r}")
            else:
                last_branch = int(last)
                if not str(row.get("last_driver_source", "")).startswith("http"):
                    p.add(w, "'last_driver' needs 'last_driver_source'")
        if cc is not None:
            if vals["added"] and vals["removed"] and vals["removed"] <= vals["added"]:
                p.add(w, "'removed' is not after 'added'")
            ccs.append(
                CCRow(
                    cc,
                    vals["added"],
                    vals["deprecated"],
                    vals["removed"],
                    src,
                    last_branch,
                    row.get("last_driver_source"),
                    cna,
                )
            )
    releases.sort(key=lambda r: r.version)
    ccs.sort(key=lambda r: r.cc)
    return releases, minor, ccs


def parse_gpus(doc: Any, p: Problems) -> tuple[list[GpuRow], dict[str, GpuRow]]:
    f = "gpus.yaml"
    rows: list[GpuRow] = []
    index: dict[str, GpuRow] = {}
    for i, row in enumerate(section_rows(doc, f, "gpus", p)):
        w = row_where(f, "gpus", i, row, "name")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        name = str_field(row, "name", w, p)
        cc = parse_field(parse_cc, str_field(row, "cc", w, p), w, "cc", p)
        arch = str_field(row, "architecture", w, p) or ""
        seg = str_field(row, "segment", w, p, required=False) or ""
        aliases = row.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            p.add(w, "'aliases' must be a list of strings")
            aliases = []
        src = source_field(row, w, p)
        if name is None or cc is None:
            continue
        g = GpuRow(name, tuple(aliases), cc, arch, seg, src)
        rows.append(g)
        for n in (name, *aliases):
            for key in gpu_keys(n):
                other = index.get(key)
                if other is not None and other is not g:
                    if other.cc != g.cc:
                        p.add(w, f"name {n!r} also names {other.name!r} with another compute capability")
                    continue
                index[key] = g
    return rows, index


_CUDNN_NA = (
    "cuda_min",
    "cuda_max",
    "min_driver",
    "min_driver.linux",
    "min_driver.windows",
    "cc_min",
    "cc_max",
)


def parse_cudnn(doc: Any, p: Problems) -> list[CudnnRelease]:
    f = "cudnn.yaml"
    out: list[CudnnRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(section_rows(doc, f, "releases", p)):
        w = row_where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = str_field(row, "version", w, p)
        v = parse_field(lambda s: parse_dotted(s, "cuDNN version"), raw, w, "version", p)
        pkgs: list[CudnnPackage] = []
        plist = row.get("packages")
        if not isinstance(plist, list) or not plist:
            p.add(w, "'packages' must be a non-empty list")
            plist = []
        for j, pk in enumerate(plist):
            pw = f"{w}.packages[{j}]"
            if not isinstance(pk, dict) or not isinstance(pk.get("cuda_major"), int):
                p.add(pw, "package needs an integer 'cuda_major'")
                continue
            pna: dict[str, str] = {}
            pk = take_na(pk, _CUDNN_NA, pna)
            cmin = parse_field(
                lambda s: parse_dotted(s, "CUDA version"),
                str_field(pk, "cuda_min", pw, p, required=False),
                pw,
                "cuda_min",
                p,
            )
            cmax = parse_field(
                lambda s: parse_dotted(s, "CUDA version"),
                str_field(pk, "cuda_max", pw, p, required=False),
                pw,
                "cuda_max",
                p,
            )
            if cmin and cmax and cmax < cmin:
                p.add(pw, "'cuda_max' is before 'cuda_min'")
            drv = (
                drivers_field(pk, "min_driver", pw, p)
                if pk.get("min_driver") is not None
                else {o: None for o in OSES}
            )
            ccmin = parse_field(parse_cc, str_field(pk, "cc_min", pw, p, required=False), pw, "cc_min", p)
            ccmax = parse_field(parse_cc, str_field(pk, "cc_max", pw, p, required=False), pw, "cc_max", p)
            pkgs.append(CudnnPackage(pk["cuda_major"], cmin, cmax, drv, ccmin, ccmax, pna))
        src = source_field(row, w, p)
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            out.append(CudnnRelease(v, raw or "", tuple(pkgs), src))
    out.sort(key=lambda r: r.version)
    return out
