"""The version matrix: loading matrix/*.yaml safely, validating every row, and looking rows up.

The package follows the data: `rows` (row types), `yamlio` (safe YAML), `parse_nvidia` and
`parse_frameworks` (one parser per file, every problem collected), `model` (the loaded `Matrix` and its
look-ups), `load` (directories, validators, caches), `diskcache` (the parsed-document cache) and `schema`
(the published JSON Schemas). Everything other modules import is re-exported here.
"""

from __future__ import annotations

from compat.matrix.load import (
    LOADED_MATRICES,
    default_matrix_dir,
    get_matrix,
    iter_sources,
    load_matrix,
    resolve_matrix_dir,
    version_key,
)
from compat.matrix.model import LazyDocs, Matrix, gpu_keys, normalize_gpu_name
from compat.matrix.parse_frameworks import KNOWN_ISSUE_FACTS
from compat.matrix.rows import (
    CORE_FILES,
    ENV_MATRIX_DIR,
    KNOWN_ISSUE_FLAGS,
    NA,
    OSES,
    CCRow,
    CudaRelease,
    CudnnPackage,
    CudnnRelease,
    GpuRow,
    KnownIssue,
    MinorCompat,
    TfRelease,
    TorchRelease,
    TorchVariant,
)
from compat.matrix.yamlio import MAX_YAML_DEPTH, load_yaml

__all__ = [
    "CORE_FILES",
    "ENV_MATRIX_DIR",
    "KNOWN_ISSUE_FACTS",
    "KNOWN_ISSUE_FLAGS",
    "MAX_YAML_DEPTH",
    "NA",
    "OSES",
    "LOADED_MATRICES",
    "CCRow",
    "CudaRelease",
    "CudnnPackage",
    "CudnnRelease",
    "GpuRow",
    "KnownIssue",
    "LazyDocs",
    "Matrix",
    "MinorCompat",
    "TfRelease",
    "TorchRelease",
    "TorchVariant",
    "default_matrix_dir",
    "get_matrix",
    "gpu_keys",
    "iter_sources",
    "load_matrix",
    "load_yaml",
    "normalize_gpu_name",
    "resolve_matrix_dir",
    "version_key",
]
