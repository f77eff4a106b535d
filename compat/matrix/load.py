"""Loading the matrix: where it lives, reading and validating every file (side files: their registered validators), the caches."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from packaging.version import Version

from compat._text import strip_quoted
from compat.errors import InputError, MatrixError
from compat.inputs import read_bytes
from compat.matrix import diskcache
from compat.matrix.model import LazyDocs, Matrix
from compat.matrix.parse_frameworks import (
    cross_validate,
    parse_known,
    parse_tf,
    parse_torch,
    parse_torch_abi,
)
from compat.matrix.parse_nvidia import parse_cuda, parse_cudnn, parse_gpus
from compat.matrix.rows import CORE_FILES, ENV_MATRIX_DIR
from compat.matrix.validation import Problems, updated_date
from compat.matrix.yamlio import load_yaml
from compat.matrixfiles import side_file_validators


def default_matrix_dir() -> Path:
    """The shipped matrix: `compat/_matrix` in an installed wheel, else the source tree's `matrix/`."""
    package = Path(__file__).resolve().parent.parent  # compat/
    shipped = package / "_matrix"
    if shipped.is_dir():
        return shipped
    return package.parent / "matrix"


def resolve_matrix_dir(directory: str | Path | None = None) -> Path:
    if directory is not None:
        return Path(directory)
    env = os.environ.get(ENV_MATRIX_DIR)
    if env:
        return Path(env)
    return default_matrix_dir()


def _run_side_file_validators(docs: dict[str, Any], p: Problems) -> None:
    """The registered validator of each side file read (compat.matrixfiles: each owner registers its own)."""
    validators = side_file_validators()
    for name, doc in docs.items():
        func = validators.get(name)
        if func is not None:
            for problem in func(doc):
                p.add(name, problem)


def _read_docs(d: Path, p: Problems, *, validate_extras: bool, cache: bool) -> tuple[dict[str, Any], str]:
    """The YAML documents, and the cache key to store the core ones under once they validate ("" for none)."""
    names = [
        path.name
        for path in sorted(d.glob("*.yaml"))
        if path.name in CORE_FILES or validate_extras  # the rest are read on first use (LazyDocs)
    ]
    raw: dict[str, bytes] = {}
    for name in names:
        try:
            raw[name] = read_bytes(str(d / name), "matrix file")
        except InputError as exc:
            p.add(name, f"cannot be read: {exc}")
    core = {n: b for n, b in raw.items() if n in CORE_FILES}
    key = diskcache.content_key(core) if cache else ""
    cached = diskcache.read(key) if cache else None
    docs: dict[str, Any] = {}
    clean = True
    for name, data in raw.items():
        if cached is not None and name in cached and name in core:
            docs[name] = cached[name]
            continue
        try:
            docs[name] = load_yaml(data.decode("utf-8"))
        except Exception as exc:  # yaml.YAMLError, UnicodeDecodeError
            clean = False
            mark = getattr(exc, "problem_mark", None)
            loc = f" line {mark.line + 1}" if mark is not None else ""
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            p.add(f"{name}{loc}", f"cannot be parsed: {strip_quoted(first)}")
    if not (cache and cached is None and clean and core):
        key = ""  # nothing to store
    return docs, key


def load_matrix(
    directory: str | Path | None = None, *, validate_extras: bool = False, cache: bool = True
) -> Matrix:
    """Load and validate the matrix; MatrixError lists every problem at once.

    `validate_extras`: also read every other *.yaml file and run its registered validator
    (compat.matrixfiles.register_side_file; `compat matrix validate` imports every owner first).
    `cache`: reuse the parsed core documents from the on-disk cache when the files' bytes are unchanged
    (validation still runs on every load).
    """
    d = resolve_matrix_dir(directory)
    try:
        is_dir = d.is_dir()
        why = "" if is_dir else "is not a directory" if d.exists() else "does not exist"
    except OSError as exc:  # a name too long (Python 3.11 raises for ENAMETOOLONG)
        is_dir, why = False, (exc.strerror or "cannot be read").lower()
    if not is_dir:
        raise InputError(f"matrix directory {str(d)!r} {why}")
    p = Problems()
    docs, store_key = _read_docs(d, p, validate_extras=validate_extras, cache=cache)
    for name in CORE_FILES:
        if name not in docs and not any(item.startswith(name) for item in p.items):
            p.add(name, "missing")
    updated: dict[str, _dt.date] = {}
    for name, doc in docs.items():
        u = updated_date(doc, name, p)
        if u:
            updated[name] = u
    cuda, minor, ccs = parse_cuda(docs.get("cuda.yaml", {}), p) if "cuda.yaml" in docs else ([], {}, [])
    gpus, index = parse_gpus(docs["gpus.yaml"], p) if "gpus.yaml" in docs else ([], {})
    cudnn = parse_cudnn(docs["cudnn.yaml"], p) if "cudnn.yaml" in docs else []
    torch = parse_torch(docs["pytorch.yaml"], p) if "pytorch.yaml" in docs else []
    abi = parse_torch_abi(docs["pytorch.yaml"], p) if "pytorch.yaml" in docs else []
    tf = parse_tf(docs["tensorflow.yaml"], p) if "tensorflow.yaml" in docs else []
    known = parse_known(docs["known_issues.yaml"], p) if "known_issues.yaml" in docs else []
    m = Matrix(
        d,
        updated,
        cuda,
        minor,
        ccs,
        gpus,
        cudnn,
        torch,
        tf,
        known,
        raw=LazyDocs(d, docs),
        _gpu_index=index,
        torch_abi=abi,
    )
    cross_validate(m, p)
    if validate_extras:
        _run_side_file_validators(docs, p)
    if p.items:
        raise MatrixError(p.items)
    if store_key:  # only a matrix that validated is cached
        diskcache.write(store_key, {n: docs[n] for n in CORE_FILES if n in docs})
    return m


LOADED_MATRICES: dict[Path, Matrix] = {}


def get_matrix(directory: str | Path | None = None) -> Matrix:
    """load_matrix, memoised per directory for this process."""
    d = resolve_matrix_dir(directory).resolve()
    m = LOADED_MATRICES.get(d)
    if m is None:
        m = load_matrix(d)
        LOADED_MATRICES[d] = m
    return m


def iter_sources(m: Matrix) -> Iterable[str]:
    yield from (r.source for r in m.cuda_releases)
    yield from (g.source for g in m.gpus)


def version_key(items: Sequence[str]) -> list[str]:
    return sorted(items, key=Version)
