"""The version matrix: loading matrix/*.yaml safely, validating every row, and looking rows up."""

from __future__ import annotations

import datetime as _dt
import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from compat.errors import InputError, MatrixError
from compat.inputs import read_bytes
from compat.versions import (
    CC,
    Arch,
    major_minor,
    parse_arch,
    parse_cc,
    parse_dotted,
    parse_driver,
    parse_python,
    parse_version,
)

CORE_FILES = ("cuda.yaml", "gpus.yaml", "cudnn.yaml", "pytorch.yaml", "tensorflow.yaml", "known_issues.yaml")
OSES = ("linux", "windows")
ENV_MATRIX_DIR = "COMPAT_MATRIX_DIR"


# ------------------------------------------------------------------ rows


@dataclass(frozen=True)
class CudaRelease:
    version: Version
    raw: str
    name: str
    min_driver: Mapping[str, str | None]
    """OS -> minimum driver (raw string as NVIDIA prints it); None where NVIDIA lists N/A."""
    source: str


@dataclass(frozen=True)
class MinorCompat:
    major: int
    floor: Mapping[str, str | None]
    source: str


@dataclass(frozen=True)
class CCRow:
    cc: CC
    added: Version | None
    deprecated: Version | None
    removed: Version | None
    source: str
    last_driver: int | None = None
    """The last driver branch (e.g. 470) that supports GPUs of this compute capability; None: still supported."""
    last_driver_source: str | None = None


@dataclass(frozen=True)
class GpuRow:
    name: str
    aliases: tuple[str, ...]
    cc: CC
    architecture: str
    segment: str
    source: str


@dataclass(frozen=True)
class CudnnPackage:
    cuda_major: int
    cuda_min: Version | None
    cuda_max: Version | None
    min_driver: Mapping[str, str | None]
    cc_min: CC | None
    cc_max: CC | None


@dataclass(frozen=True)
class CudnnRelease:
    version: Version
    raw: str
    packages: tuple[CudnnPackage, ...]
    source: str


@dataclass(frozen=True)
class TorchVariant:
    tag: str
    cuda: str | None
    cudnn: str | None
    archs: tuple[Arch, ...] | None
    """None: not known; () for CPU builds."""
    index_url: str | None

    @property
    def is_cuda(self) -> bool:
        return self.tag.startswith("cu")


@dataclass(frozen=True)
class TorchRelease:
    version: Version
    raw: str
    python: tuple[str, ...]
    pypi_default: str | None
    pypi_default_windows: str
    pypi_requires: Mapping[str, str]
    variants: tuple[TorchVariant, ...]
    source: str

    def variant(self, tag: str) -> TorchVariant | None:
        for v in self.variants:
            if v.tag == tag:
                return v
        return None


@dataclass(frozen=True)
class TfRelease:
    version: Version
    raw: str
    python: tuple[str, ...]
    cuda: str | None
    cudnn: str | None
    and_cuda: Mapping[str, str]
    windows_gpu: bool | None
    archs: tuple[Arch, ...] | None
    source: str


@dataclass(frozen=True)
class KnownIssue:
    id: str
    title: str
    when: Mapping[str, SpecifierSet]
    severity: str
    message: str
    fix_text: str | None
    fix_command: str | None
    source: str
    requires: tuple[str, ...] = ()
    """Boolean facts that must be true (e.g. tf_and_cuda: TensorFlow installed with [and-cuda])."""


KNOWN_ISSUE_FLAGS = ("tf_and_cuda",)


# ------------------------------------------------------------------ validation helpers


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, msg: str) -> None:
        self.items.append(f"{where}: {msg}")


def _where(file: str, section: str, i: int, row: Any, key: str = "version") -> str:
    label = ""
    if isinstance(row, dict):
        val = row.get(key)
        if val is not None:
            label = f" ({val})"
    return f"{file}: {section}[{i}]{label}"


def _str_field(
    row: Mapping[str, Any], key: str, where: str, p: _Problems, *, required: bool = True
) -> str | None:
    if key not in row or row[key] is None:
        if required:
            p.add(where, f"missing '{key}'")
        return None
    val = row[key]
    if not isinstance(val, str):
        p.add(where, f"'{key}' must be a quoted string, got {type(val).__name__} {val!r}")
        return None
    return val


def _try(parse: Callable[[str], Any], val: str | None, where: str, key: str, p: _Problems) -> Any:
    if val is None:
        return None
    try:
        return parse(val)
    except InputError as exc:
        p.add(where, f"'{key}': {exc}")
        return None


def _source(row: Mapping[str, Any], where: str, p: _Problems) -> str:
    src = row.get("source")
    if not isinstance(src, str) or not src.strip():
        p.add(where, "missing 'source' (every row cites its official source)")
        return ""
    return src


def _drivers(row: Mapping[str, Any], key: str, where: str, p: _Problems) -> dict[str, str | None]:
    val = row.get(key)
    if not isinstance(val, dict):
        p.add(where, f"'{key}' must be a mapping with linux/windows")
        return {o: None for o in OSES}
    out: dict[str, str | None] = {}
    for o in OSES:
        d = val.get(o)
        if d is None:
            out[o] = None
            continue
        if not isinstance(d, str):
            p.add(where, f"'{key}.{o}' must be a quoted string, got {d!r}")
            out[o] = None
            continue
        out[o] = d if _try(parse_driver, d, where, f"{key}.{o}", p) is not None else None
    for extra in set(val) - set(OSES):
        p.add(where, f"'{key}' has unknown OS {extra!r}")
    return out


def _rows(doc: Any, file: str, section: str, p: _Problems) -> list[Any]:
    if not isinstance(doc, dict):
        p.add(file, "top level must be a mapping")
        return []
    rows = doc.get(section)
    if not isinstance(rows, list):
        p.add(file, f"missing list '{section}'")
        return []
    return rows


def _updated(doc: Any, file: str, p: _Problems) -> _dt.date | None:
    if not isinstance(doc, dict):
        return None
    val = doc.get("updated")
    if isinstance(val, _dt.date) and not isinstance(
        val, _dt.datetime
    ):  # a timestamp does not compare with dates
        return val
    if isinstance(val, str):
        try:
            return _dt.date.fromisoformat(val)
        except ValueError:
            pass
    p.add(file, "missing or malformed 'updated: YYYY-MM-DD'")
    return None


# ------------------------------------------------------------------ GPU names


_PREFIXES = ("nvidia ", "geforce ", "tesla ")


def normalize_gpu_name(name: str) -> str:
    text = re.sub(r"[-_\s]+", " ", name.strip().lower())
    if text.startswith("nvidia "):
        text = text[len("nvidia ") :]
    return text


def gpu_keys(name: str) -> list[str]:
    """Every key a GPU name is indexed under: normalised, and without a leading GeForce/Tesla."""
    base = normalize_gpu_name(name)
    keys = [base]
    for pre in ("geforce ", "tesla "):
        if base.startswith(pre):
            keys.append(base[len(pre) :])
    return keys


# ------------------------------------------------------------------ the matrix


class LazyDocs(dict):  # type: ignore[type-arg]
    """YAML documents by file name; files outside the core subjects are read on first access.

    A `compat check` needs only the core tables, so the crash-signature catalogue and the other extras are not
    parsed on its path. `compat matrix validate` reads and validates everything.
    """

    def __init__(self, directory: Path, loaded: dict[str, Any]) -> None:
        super().__init__(loaded)
        self._dir = directory

    def _load(self, key: str) -> bool:
        if dict.__contains__(self, key):
            return True
        path = self._dir / key
        if not key.endswith(".yaml") or not path.is_file():
            return False
        try:
            dict.__setitem__(self, key, _yaml_load(read_bytes(str(path), "matrix file").decode("utf-8")))
        except Exception:  # noqa: BLE001 - a broken extra file is reported by `compat matrix validate`
            dict.__setitem__(self, key, None)
        return True

    def __getitem__(self, key: str) -> Any:
        if not self._load(key):
            raise KeyError(key)
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return dict.__getitem__(self, key) if self._load(key) else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._load(key)


@dataclass
class Matrix:
    directory: Path
    updated: dict[str, _dt.date]
    cuda_releases: list[CudaRelease]
    minor_compat: dict[int, MinorCompat]
    ccs: list[CCRow]
    gpus: list[GpuRow]
    cudnn: list[CudnnRelease]
    torch: list[TorchRelease]
    tensorflow: list[TfRelease]
    known_issues: list[KnownIssue]
    raw: dict[str, Any] = field(default_factory=dict)
    """Every YAML document by file name, for subjects parsed elsewhere (signatures, images)."""
    _gpu_index: dict[str, GpuRow] = field(default_factory=dict)

    # -- dates
    @property
    def updated_date(self) -> str:
        return max(self.updated.values()).isoformat() if self.updated else "unknown"

    def updated_for(self, file: str) -> str:
        d = self.updated.get(file)
        return d.isoformat() if d else self.updated_date

    # -- CUDA
    def cuda_release(self, v: Version) -> CudaRelease | None:
        """The toolkit release for `v`: exact, else (for X.Y) its GA X.Y.0 or first update."""
        rel = tuple(v.release)
        want = (rel + (0, 0, 0))[:3]
        for r in self.cuda_releases:
            if (tuple(r.version.release) + (0, 0, 0))[:3] == want:
                return r
        if len(rel) <= 2:
            same = [r for r in self.cuda_releases if r.version.release[:2] == tuple(rel[:2])]
            if same:
                return min(same, key=lambda r: r.version)
        return None

    def newest_cuda(self) -> Version | None:
        return max((r.version for r in self.cuda_releases), default=None)

    def cuda_can_compile(self, cuda: Version, cc: CC) -> bool | None:
        """Whether nvcc from `cuda` can target `cc`; None when the matrix does not know `cc`."""
        for row in self.ccs:
            if row.cc == cc:
                if row.added is not None and cuda < row.added:
                    return False
                return not (row.removed is not None and cuda >= row.removed)
        return None

    def cc_row(self, cc: CC) -> CCRow | None:
        for row in self.ccs:
            if row.cc == cc:
                return row
        return None

    def cuda_cc_range(self, cuda: Version) -> tuple[CC, CC] | None:
        ok = [r.cc for r in self.ccs if self.cuda_can_compile(cuda, r.cc)]
        return (min(ok), max(ok)) if ok else None

    # -- GPUs
    def gpu(self, name: str) -> GpuRow | None:
        for key in gpu_keys(name):
            row = self._gpu_index.get(key)
            if row is not None:
                return row
        return None

    def gpu_suggestions(self, name: str, n: int = 5) -> list[str]:
        key = normalize_gpu_name(name)
        keys = difflib.get_close_matches(key, list(self._gpu_index), n=n * 3, cutoff=0.5)
        out: list[str] = []
        for k in keys:
            row = self._gpu_index[k]
            if row.name not in out:
                out.append(row.name)
        tokens = set(key.split())
        for row in self.gpus:
            if len(out) >= n:
                break
            if tokens and tokens <= set(normalize_gpu_name(row.name).split()) and row.name not in out:
                out.append(row.name)
        return out[:n]

    # -- cuDNN
    def cudnn_release(self, v: Version) -> CudnnRelease | None:
        rel = tuple(v.release)
        for r in self.cudnn:
            if tuple(r.version.release) == rel:
                return r
        # 8.9.7.29 -> 8.9.7; 9.1 -> 9.1.0
        for r in self.cudnn:
            rr = tuple(r.version.release)
            if len(rel) > len(rr) and rel[: len(rr)] == rr:
                return r
        if len(rel) == 2:
            same = [r for r in self.cudnn if tuple(r.version.release[:2]) == rel]
            if same:
                return min(same, key=lambda r: r.version)
        return None

    def newest_cudnn(self) -> Version | None:
        return max((r.version for r in self.cudnn), default=None)

    # -- frameworks
    def torch_release(self, v: Version) -> TorchRelease | None:
        """The release row of `v` (a local label such as +cu124 names a variant, not a release)."""
        return _by_public_version(self.torch, v)

    def newest_torch(self) -> Version | None:
        return max((r.version for r in self.torch), default=None)

    def tf_release(self, v: Version) -> TfRelease | None:
        return _by_public_version(self.tensorflow, v)

    def newest_tensorflow(self) -> Version | None:
        return max((r.version for r in self.tensorflow), default=None)

    def nearest_keys(self, subject: str, key: str, n: int = 5) -> list[str]:
        keys = {
            "cuda": [r.raw for r in self.cuda_releases],
            "cudnn": [r.raw for r in self.cudnn],
            "torch": [r.raw for r in self.torch],
            "tensorflow": [r.raw for r in self.tensorflow],
            "gpu": [g.name for g in self.gpus],
        }.get(subject, [])
        return difflib.get_close_matches(key, keys, n=n, cutoff=0.3)


R = TypeVar("R", TorchRelease, TfRelease)


def _by_public_version(rows: Sequence[R], v: Version) -> R | None:
    public = Version(v.public)
    return next((r for r in rows if r.version == public), None)


# ------------------------------------------------------------------ parsing each file


def _parse_cuda(doc: Any, p: _Problems) -> tuple[list[CudaRelease], dict[int, MinorCompat], list[CCRow]]:
    f = "cuda.yaml"
    releases: list[CudaRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(_rows(doc, f, "releases", p)):
        w = _where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = _str_field(row, "version", w, p)
        v = _try(lambda s: parse_dotted(s, "CUDA version", min_parts=2), raw, w, "version", p)
        src = _source(row, w, p)
        drivers = _drivers(row, "min_driver", w, p)
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            releases.append(CudaRelease(v, raw or "", str(row.get("name") or f"CUDA {raw}"), drivers, src))
    minor: dict[int, MinorCompat] = {}
    for i, row in enumerate(_rows(doc, f, "minor_compat", p)):
        w = _where(f, "minor_compat", i, row, "major")
        if not isinstance(row, dict) or not isinstance(row.get("major"), int):
            p.add(w, "row needs an integer 'major'")
            continue
        floor = {o: row.get(o) for o in OSES}
        for o, d in floor.items():
            if d is not None and (not isinstance(d, str) or _try(parse_driver, d, w, o, p) is None):
                floor[o] = None
                if not isinstance(d, str):
                    p.add(w, f"'{o}' must be a quoted driver version")
        if row["major"] in minor:
            p.add(w, "duplicate major")
        minor[row["major"]] = MinorCompat(row["major"], floor, _source(row, w, p))
    ccs: list[CCRow] = []
    for i, row in enumerate(_rows(doc, f, "compute_capabilities", p)):
        w = _where(f, "compute_capabilities", i, row, "cc")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        cc = _try(parse_cc, _str_field(row, "cc", w, p), w, "cc", p)
        vals = {}
        for key in ("added", "deprecated", "removed"):
            s = _str_field(row, key, w, p, required=False)
            vals[key] = _try(lambda s: parse_dotted(s, "CUDA version"), s, w, key, p)
        src = _source(row, w, p)
        last = _str_field(row, "last_driver", w, p, required=False)
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
                )
            )
    releases.sort(key=lambda r: r.version)
    ccs.sort(key=lambda r: r.cc)
    return releases, minor, ccs


def _parse_gpus(doc: Any, p: _Problems) -> tuple[list[GpuRow], dict[str, GpuRow]]:
    f = "gpus.yaml"
    rows: list[GpuRow] = []
    index: dict[str, GpuRow] = {}
    for i, row in enumerate(_rows(doc, f, "gpus", p)):
        w = _where(f, "gpus", i, row, "name")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        name = _str_field(row, "name", w, p)
        cc = _try(parse_cc, _str_field(row, "cc", w, p), w, "cc", p)
        arch = _str_field(row, "architecture", w, p) or ""
        seg = _str_field(row, "segment", w, p, required=False) or ""
        aliases = row.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            p.add(w, "'aliases' must be a list of strings")
            aliases = []
        src = _source(row, w, p)
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


def _parse_cudnn(doc: Any, p: _Problems) -> list[CudnnRelease]:
    f = "cudnn.yaml"
    out: list[CudnnRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(_rows(doc, f, "releases", p)):
        w = _where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = _str_field(row, "version", w, p)
        v = _try(lambda s: parse_dotted(s, "cuDNN version"), raw, w, "version", p)
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
            cmin = _try(
                lambda s: parse_dotted(s, "CUDA version"),
                _str_field(pk, "cuda_min", pw, p, required=False),
                pw,
                "cuda_min",
                p,
            )
            cmax = _try(
                lambda s: parse_dotted(s, "CUDA version"),
                _str_field(pk, "cuda_max", pw, p, required=False),
                pw,
                "cuda_max",
                p,
            )
            if cmin and cmax and cmax < cmin:
                p.add(pw, "'cuda_max' is before 'cuda_min'")
            drv = _drivers(pk, "min_driver", pw, p) if "min_driver" in pk else {o: None for o in OSES}
            ccmin = _try(parse_cc, _str_field(pk, "cc_min", pw, p, required=False), pw, "cc_min", p)
            ccmax = _try(parse_cc, _str_field(pk, "cc_max", pw, p, required=False), pw, "cc_max", p)
            pkgs.append(CudnnPackage(pk["cuda_major"], cmin, cmax, drv, ccmin, ccmax))
        src = _source(row, w, p)
        if v is not None:
            if v in seen:
                p.add(w, "duplicate release")
            seen.add(v)
            out.append(CudnnRelease(v, raw or "", tuple(pkgs), src))
    out.sort(key=lambda r: r.version)
    return out


def _pythons(row: Mapping[str, Any], w: str, p: _Problems) -> tuple[str, ...]:
    py = row.get("python")
    if not isinstance(py, list) or not py:
        p.add(w, "'python' must be a non-empty list of quoted versions")
        return ()
    out = []
    for x in py:
        if not isinstance(x, str):
            p.add(w, f"python version {x!r} must be a quoted string")
            continue
        if _try(parse_python, x, w, "python", p) is not None:
            out.append(x)
    return tuple(out)


def _archs(val: Any, w: str, p: _Problems, key: str) -> tuple[Arch, ...] | None:
    if val is None:
        return None
    if not isinstance(val, list) or not all(isinstance(a, str) for a in val):
        p.add(w, f"'{key}' must be a list of strings like sm_86")
        return None
    out = []
    for a in val:
        arch = _try(parse_arch, a, w, key, p)
        if arch is not None:
            out.append(arch)
    return tuple(out)


def _pins(val: Any, w: str, key: str, p: _Problems) -> dict[str, str]:
    if val is None:
        return {}
    if not isinstance(val, dict) or not all(
        isinstance(k, str) and isinstance(x, str) for k, x in val.items()
    ):
        p.add(w, f"'{key}' must map package names to quoted versions")
        return {}
    return dict(val)


def _parse_torch(doc: Any, p: _Problems) -> list[TorchRelease]:
    f = "pytorch.yaml"
    out: list[TorchRelease] = []
    seen: set[Version] = set()
    default_win = doc.get("pypi_default_windows", "cpu") if isinstance(doc, dict) else "cpu"
    for i, row in enumerate(_rows(doc, f, "releases", p)):
        w = _where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = _str_field(row, "version", w, p)
        v = _try(lambda s: parse_version(s, "PyTorch version"), raw, w, "version", p)
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
            tag = _str_field(vr, "tag", vw, p)
            if tag is None:
                continue
            if tag in tags:
                p.add(vw, f"duplicate variant {tag!r}")
            tags.add(tag)
            cuda = _str_field(vr, "cuda", vw, p, required=False)
            _try(lambda s: parse_dotted(s, "CUDA version", min_parts=2), cuda, vw, "cuda", p)
            cudnn = _str_field(vr, "cudnn", vw, p, required=False)
            _try(lambda s: parse_dotted(s, "cuDNN version"), cudnn, vw, "cudnn", p)
            if tag.startswith("cu") and cuda is None:
                p.add(vw, "CUDA variant without 'cuda'")
            archs = _archs(vr.get("archs"), vw, p, "archs")
            if not tag.startswith("cu") and archs is None:
                archs = ()
            variants.append(TorchVariant(tag, cuda, cudnn, archs, vr.get("index_url")))
        default = row.get("pypi_default")
        if default is not None and (not isinstance(default, str) or default not in tags):
            p.add(w, f"'pypi_default' {default!r} is not one of its variants")
        src = _source(row, w, p)
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


def _parse_tf(doc: Any, p: _Problems) -> list[TfRelease]:
    f = "tensorflow.yaml"
    out: list[TfRelease] = []
    seen: set[Version] = set()
    for i, row in enumerate(_rows(doc, f, "releases", p)):
        w = _where(f, "releases", i, row)
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        raw = _str_field(row, "version", w, p)
        v = _try(lambda s: parse_version(s, "TensorFlow version"), raw, w, "version", p)
        py = _pythons(row, w, p)
        cuda = _str_field(row, "cuda", w, p, required=False)
        _try(lambda s: parse_dotted(s, "CUDA version", min_parts=2), cuda, w, "cuda", p)
        cudnn = _str_field(row, "cudnn", w, p, required=False)
        _try(lambda s: parse_dotted(s, "cuDNN version"), cudnn, w, "cudnn", p)
        wg = row.get("windows_gpu")
        if wg is not None and not isinstance(wg, bool):
            p.add(w, "'windows_gpu' must be true or false")
            wg = None
        archs = _archs(row.get("compute_capabilities"), w, p, "compute_capabilities")
        src = _source(row, w, p)
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
                )
            )
    out.sort(key=lambda r: r.version)
    return out


KNOWN_ISSUE_FACTS = ("torch", "tensorflow", "cuda", "cudnn", "driver", "python", "cc", "jax", "os")


def _parse_known(doc: Any, p: _Problems) -> list[KnownIssue]:
    f = "known_issues.yaml"
    out: list[KnownIssue] = []
    ids: set[str] = set()
    for i, row in enumerate(_rows(doc, f, "issues", p)):
        w = _where(f, "issues", i, row, "id")
        if not isinstance(row, dict):
            p.add(w, "row must be a mapping")
            continue
        iid = _str_field(row, "id", w, p)
        title = _str_field(row, "title", w, p) or ""
        msg = _str_field(row, "message", w, p) or ""
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
        src = _source(row, w, p)
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


def _cross_checks(m: Matrix, p: _Problems) -> None:
    """Rows that contradict another file."""
    cuda_mm = {major_minor(r.version) for r in m.cuda_releases}
    for r in m.torch:
        for var in r.variants:
            where = f"pytorch.yaml: {r.raw} {var.tag}"
            if var.cuda is None:
                continue
            try:
                cv = Version(var.cuda)
            except ValueError:  # a malformed version, already reported by _parse_torch
                continue
            if m.cuda_releases and major_minor(cv) not in cuda_mm:
                p.add(where, f"CUDA {var.cuda} is not in cuda.yaml")
            for a in var.archs or ():
                if m.ccs and m.cuda_can_compile(cv, a.cc) is False:
                    p.add(where, f"{a} cannot be compiled by CUDA {var.cuda} according to cuda.yaml")
    for t in m.tensorflow:
        try:
            t_cuda = Version(t.cuda) if t.cuda else None
        except ValueError:  # a malformed version, already reported by _parse_tf
            continue
        if t_cuda is not None and m.cuda_releases and major_minor(t_cuda) not in cuda_mm:
            p.add(f"tensorflow.yaml: {t.raw}", f"CUDA {t.cuda} is not in cuda.yaml")


# ------------------------------------------------------------------ loading


MAX_YAML_DEPTH = 1000


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if _yaml_too_deep(text, loader):
        raise yaml.YAMLError(f"nested more than {MAX_YAML_DEPTH} levels deep")
    return yaml.load(text, Loader=loader)


def _yaml_too_deep(text: str, loader: Any) -> bool:
    """Whether collections nest deeper than MAX_YAML_DEPTH. libyaml's composer recurses in C, and some 30,000
    nested `[` overflow the stack: a segfault, not an exception. Each level needs a flow bracket or an
    indentation column, so counting clears every real file; the rest are measured on the parser's events
    (no recursion there)."""
    import yaml

    longest = max((len(line) for line in text.splitlines()), default=0)
    if longest + text.count("[") + text.count("{") < MAX_YAML_DEPTH:
        return False
    depth = 0
    for ev in yaml.parse(text, Loader=loader):
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return True
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    return False


def load_yaml(text: str) -> Any:
    """YAML text with the safe loader (the C one where present); yaml.YAMLError for bad or too deep input."""
    return _yaml_load(text)


def default_matrix_dir() -> Path:
    here = Path(__file__).resolve().parent
    shipped = here / "_matrix"
    if shipped.is_dir():
        return shipped
    return here.parent / "matrix"


def resolve_matrix_dir(directory: str | Path | None = None) -> Path:
    if directory is not None:
        return Path(directory)
    env = os.environ.get(ENV_MATRIX_DIR)
    if env:
        return Path(env)
    return default_matrix_dir()


# Validators for extra files (signatures, images) register here; each takes (doc, problems-adder).
EXTRA_VALIDATORS: dict[str, str] = {
    "signatures.yaml": "compat.explain.catalogue:validate_document",
    "images.yaml": "compat.dockerfile.images:validate_document",
    "xid.yaml": "compat.probes.health:validate_document",
}


def _run_extra_validator(file: str, doc: Any, p: _Problems) -> None:
    target = EXTRA_VALIDATORS.get(file)
    if target is None:
        return
    mod_name, func_name = target.split(":")
    try:
        import importlib

        func = getattr(importlib.import_module(mod_name), func_name)
    except (ImportError, AttributeError):
        return
    for problem in func(doc):
        p.add(file, problem)


def load_matrix(directory: str | Path | None = None, *, validate_extras: bool = False) -> Matrix:
    """Load and validate the matrix; MatrixError lists every problem at once."""
    d = resolve_matrix_dir(directory)
    if not d.is_dir():
        why = "is not a directory" if d.exists() else "does not exist"
        raise InputError(f"matrix directory {str(d)!r} {why}")
    p = _Problems()
    docs: dict[str, Any] = {}
    for path in sorted(d.glob("*.yaml")):
        if path.name not in CORE_FILES and not validate_extras:
            continue  # read on first use (LazyDocs)
        try:
            docs[path.name] = _yaml_load(read_bytes(str(path), "matrix file").decode("utf-8"))
        except Exception as exc:  # yaml.YAMLError, UnicodeDecodeError, OSError
            mark = getattr(exc, "problem_mark", None)
            loc = f" line {mark.line + 1}" if mark is not None else ""
            p.add(
                f"{path.name}{loc}",
                f"cannot be parsed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
            )
    for name in CORE_FILES:
        if name not in docs and not any(item.startswith(name) for item in p.items):
            p.add(name, "missing")
    updated: dict[str, _dt.date] = {}
    for name, doc in docs.items():
        u = _updated(doc, name, p)
        if u:
            updated[name] = u
    cuda, minor, ccs = _parse_cuda(docs.get("cuda.yaml", {}), p) if "cuda.yaml" in docs else ([], {}, [])
    gpus, index = _parse_gpus(docs["gpus.yaml"], p) if "gpus.yaml" in docs else ([], {})
    cudnn = _parse_cudnn(docs["cudnn.yaml"], p) if "cudnn.yaml" in docs else []
    torch = _parse_torch(docs["pytorch.yaml"], p) if "pytorch.yaml" in docs else []
    tf = _parse_tf(docs["tensorflow.yaml"], p) if "tensorflow.yaml" in docs else []
    known = _parse_known(docs["known_issues.yaml"], p) if "known_issues.yaml" in docs else []
    m = Matrix(
        d, updated, cuda, minor, ccs, gpus, cudnn, torch, tf, known, raw=LazyDocs(d, docs), _gpu_index=index
    )
    _cross_checks(m, p)
    if validate_extras:
        for name, doc in docs.items():
            _run_extra_validator(name, doc, p)
    if p.items:
        raise MatrixError(p.items)
    return m


_CACHE: dict[Path, Matrix] = {}


def get_matrix(directory: str | Path | None = None) -> Matrix:
    """load_matrix, memoised per directory for this process."""
    d = resolve_matrix_dir(directory).resolve()
    m = _CACHE.get(d)
    if m is None:
        m = load_matrix(d)
        _CACHE[d] = m
    return m


def iter_sources(m: Matrix) -> Iterable[str]:
    yield from (r.source for r in m.cuda_releases)
    yield from (g.source for g in m.gpus)


def version_key(items: Sequence[str]) -> list[str]:
    return sorted(items, key=Version)
