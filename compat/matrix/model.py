"""The loaded matrix: GPU-name normalisation, the lazily read extra documents, and the row look-ups."""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, TypeVar

from packaging.version import Version

from compat._valueclass import valueclass
from compat.matrix.rows import (
    CCRow,
    CudaRelease,
    CudnnRelease,
    GpuRow,
    KnownIssue,
    MinorCompat,
    TfRelease,
    TorchAbi,
    TorchRelease,
)
from compat.matrix.yamlio import load_yaml
from compat.versions import CC

_PREFIXES = ("nvidia ", "geforce ", "tesla ")
# Suffixes (spaces removed) that name a different product than the name they extend: GTX 1660 vs GTX 1660 SUPER/Ti.
_VARIANT_SUFFIXES = ("super", "ti")


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
            from compat.inputs import read_bytes
            from compat.matrix import diskcache

            data = read_bytes(str(path), "matrix file")
            # The parsed document is cached on disk, keyed on the file's bytes: parsing jax.yaml (65 kB) is most of
            # a warm `compat doctor`'s own CPU time; reading the JSON back takes a few milliseconds.
            ckey = diskcache.content_key({key: data})
            slot = diskcache.extra_slot(key)
            cached = diskcache.read(ckey, slot=slot)
            doc = cached[key] if cached is not None and key in cached else None
            if doc is None:
                doc = load_yaml(data.decode("utf-8"))
                diskcache.write(ckey, {key: doc}, slot=slot)
            dict.__setitem__(self, key, doc)
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


@valueclass(frozen=False)
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
    torch_abi: list[TorchAbi] = field(default_factory=list)
    """pytorch.yaml's `cxx11_abi` table, in file order (first match wins)."""

    # -- dates
    @property
    def updated_date(self) -> str:
        return max(self.updated.values()).isoformat() if self.updated else "unknown"

    def updated_for(self, file: str) -> str:
        d = self.updated.get(file)
        return d.isoformat() if d else self.updated_date

    def stale_files(self, days: int, today: _dt.date | None = None) -> list[tuple[str, int]]:
        """(file, age in days) for each file whose `updated:` date is more than `days` days old."""
        now = today or _dt.date.today()
        return [(n, (now - d).days) for n, d in sorted(self.updated.items()) if (now - d).days > days]

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
        return self._lenient_gpu(name)

    def _lenient_gpu(self, name: str) -> GpuRow | None:
        """Names as people type them: "rtx4090" (no spaces), "4090" (the model number alone), "RTX PRO 6000"
        (a family whose variants share one compute capability). Only an unambiguous answer counts: every
        candidate must have the same compute capability, else None (the caller lists suggestions)."""
        compact = re.sub(r"\s+", "", normalize_gpu_name(name))
        if len(compact) < 3:
            return None
        for pre in ("geforce", "tesla", "quadro"):
            if compact.startswith(pre) and len(compact) > len(pre) + 2:
                compact = compact[len(pre) :]
        rows: dict[str, GpuRow] = {}
        exact: dict[str, GpuRow] = {}
        for key, row in self._gpu_index.items():
            ck = re.sub(r"\s+", "", key)
            if ck == compact:
                exact[row.name] = row
            elif compact.isdigit():
                # "4090" matches "rtx 4090" but not "rtx 4090 d" or "rtx 4090 laptop": the number ends the name.
                if re.search(r"(?<!\d)" + compact + r"$", ck):
                    rows[row.name] = row
            elif (
                ck.startswith(compact)
                and (not compact[-1].isdigit() or not ck[len(compact)].isdigit())
                # "GTX 1660" is not "GTX 1660 SUPER"/"Ti": a SUPER or Ti suffix names another product.
                and not ck[len(compact) :].startswith(_VARIANT_SUFFIXES)
            ):
                rows[row.name] = row
        found = exact or rows
        ccs = {r.cc for r in found.values()}
        if len(ccs) == 1:
            return sorted(found.values(), key=lambda r: len(r.name))[0]
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
    def torch_cxx11_abi(self, v: Version, tag: str) -> bool | None:
        """Whether the Linux x86_64 pip wheel of torch `v`, variant `tag` ("cu124", "cpu"), was built with the
        C++11 ABI (torch.compiled_with_cxx11_abi()); None where the table does not say."""
        if not (tag.startswith("cu") or tag.startswith("cpu")):
            return None  # ROCm / XPU builds: the table covers CUDA and CPU variants only
        public = Version(v.public)
        for row in self.torch_abi:
            if public in row.torch and (row.variants is None or tag in row.variants):
                return row.cxx11
        return None

    def torch_release(self, v: Version) -> TorchRelease | None:
        """The release row of `v` (a local label such as +cu124 names a variant, not a release)."""
        return _by_public_version(self.torch, v)

    def newest_torch(self) -> Version | None:
        return max((r.version for r in self.torch), default=None)

    def tf_release(self, v: Version) -> TfRelease | None:
        return _by_public_version(self.tensorflow, v)

    def newest_tensorflow(self) -> Version | None:
        return max((r.version for r in self.tensorflow), default=None)

    def newest_default(self, subject: str, python: str | None = None) -> TorchRelease | TfRelease | None:
        """The newest final release of `subject` ("torch"/"tensorflow") that a plain `pip install` picks
        (for `python`, when given: the newest whose wheels list that Python). Pre-releases are skipped, as
        pip skips them without --pre."""
        rows = [r for r in self._framework_rows(subject) if not r.version.is_prerelease]
        if python is not None:
            rows = [r for r in rows if python in r.python]
        return max(rows, key=lambda r: r.version, default=None)

    def oldest_for_python(self, subject: str, python: str) -> TorchRelease | TfRelease | None:
        """The oldest release of `subject` with wheels for `python` (its `python:` list names it)."""
        rows = [r for r in self._framework_rows(subject) if python in r.python]
        return min(rows, key=lambda r: r.version, default=None)

    def _framework_rows(self, subject: str) -> Sequence[TorchRelease | TfRelease]:
        if subject == "torch":
            return self.torch
        if subject == "tensorflow":
            return self.tensorflow
        raise ValueError(f"unknown framework {subject!r}")

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
