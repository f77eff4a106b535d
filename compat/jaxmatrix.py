"""JAX's release table (matrix/jax.yaml): rows, validation, look-ups and the `--jax` value syntax.

jax.yaml is an extra matrix file, read on first use (a `compat check` without `--jax` never parses it). Its
rows come from the published wheels' metadata and JAX's installation page (see the file's header).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat._valueclass import valueclass
from compat.matrixfiles import (
    document,
    integer,
    items,
    mapping,
    problems,
    register_side_file,
    row_name,
    text,
    url,
)

FILE = "jax.yaml"


@valueclass
class JaxCudaMajor:
    """What JAX's installation page states for one CUDA major."""

    major: int
    cc_min: str
    """Lowest compute capability JAX supports with this CUDA major ("5.2")."""
    driver_min_linux: str
    """Lowest Linux driver the page states ("525.60.13", or a branch such as "580")."""
    source: str


@valueclass
class JaxCudaBuild:
    """One way a release runs on CUDA: the plugin of a CUDA major, or an old monolithic jaxlib build."""

    major: int
    kind: str
    """"plugin" (jax-cudaNN-plugin, 0.4.22 on) or "monolithic" (jaxlib==X+cudaNN.cudnnMM, up to 0.4.29)."""
    extras: tuple[str, ...]
    """The jax extras that install this build (normalised names: cuda12, cuda12-local, …)."""
    package: str | None = None
    pin: str | None = None
    plugin_version: str | None = None
    """The newest plugin release inside the pin that the index held; None = unknown."""
    cuda_min: str | None = None
    cudnn: str | None = None
    """A specifier (">=9.8,<10.0")."""
    nccl_min: str | None = None
    jaxlib: str | None = None
    """Monolithic builds: the exact jaxlib version with its local label."""
    index: str | None = None
    plugin_source: str | None = None

    @property
    def cudnn_spec(self) -> SpecifierSet | None:
        try:
            return SpecifierSet(self.cudnn) if self.cudnn else None
        except InvalidSpecifier:
            return None


@valueclass
class JaxRelease:
    version: str
    released: str
    python: tuple[str, ...]
    """CPython versions with Linux x86_64 jaxlib wheels; empty = unknown."""
    requires_python: str
    jaxlib: str | None
    minimum_jaxlib: str | None
    extras: tuple[str, ...]
    cuda_extra: int | None
    """The CUDA major that plain `jax[cuda]` installs."""
    cuda: tuple[JaxCudaBuild, ...]
    source: str
    doc: str | None = None

    @property
    def parsed(self) -> Version:
        return Version(self.version)

    def build_for(self, major: int) -> JaxCudaBuild | None:
        """The CUDA build of that major (a plugin before a monolithic build)."""
        found = [b for b in self.cuda if b.major == major]
        # A plugin with pip CUDA wheels first, then a monolithic jaxlib with pip CUDA, then a plugin that needs a
        # system CUDA (0.4.22-0.4.29 published both; `jax[cuda12_pip]` was the documented install then).
        found.sort(
            key=lambda b: 0 if b.kind == "plugin" and b.cuda_min else 1 if b.kind == "monolithic" else 2
        )
        return found[0] if found else None

    def extra_for(self, major: int) -> str | None:
        """The extra to name in `pip install "jax[EXTRA]==V"` for that CUDA major (cudaNN, else cudaNN-pip)."""
        b = self.build_for(major)
        if b is None:
            return None
        for want in (f"cuda{major}", f"cuda{major}-pip", f"cuda{major}-local"):
            if want in b.extras:
                return want
        return b.extras[0] if b.extras else None

    def python_ok(self, python: str) -> bool | None:
        """True/False when the release has (no) wheels for that Python X.Y; None when unknown."""
        if self.python:
            return python in self.python
        try:
            return Version(python) in SpecifierSet(self.requires_python)
        except (InvalidVersion, InvalidSpecifier):
            return None


@valueclass
class JaxTable:
    updated: str
    majors: dict[int, JaxCudaMajor]
    releases: tuple[JaxRelease, ...]
    """Newest first."""

    def release(self, version: str | Version) -> JaxRelease | None:
        v = version if isinstance(version, Version) else Version(version)
        public = Version(v.public)
        for r in self.releases:
            if r.parsed == public:
                return r
        return None

    @property
    def newest(self) -> JaxRelease | None:
        return self.releases[0] if self.releases else None


class JaxTableError(ValueError):
    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


# -- the `--jax` value: "0.10.2" (plain pip install jax: CPU only) or "0.10.2+cuda12" / "+cuda13"

_LABEL = re.compile(r"^cuda(\d{2})(?:[._-]?cudnn(\d{2,3}))?$")


@valueclass
class JaxSpec:
    raw: str
    version: Version
    cuda_major: int | None
    """None: the CPU-only install plain `pip install jax==V` gives."""


def parse_jax(raw: str) -> JaxSpec:
    """Parse a `--jax` value; ValueError with a one-line reason when it is not one."""
    text = raw.strip()
    try:
        v = Version(text)
    except InvalidVersion:
        raise ValueError(f"{raw!r} is not a JAX version (expected e.g. 0.10.2 or 0.10.2+cuda12)") from None
    major: int | None = None
    if v.local:
        m = _LABEL.match(v.local)
        if not m:
            raise ValueError(f"{raw!r}: the local label must be cudaNN (e.g. 0.10.2+cuda12), not +{v.local}")
        major = int(m.group(1))
    return JaxSpec(text, v, major)


# -- the file's shape, its rules, and the table built from a valid document

_BUILD = mapping(
    {
        "major": integer(),
        "kind": text(enum=("plugin", "monolithic")),
        "extras": items(text()),
        "package": text(),
        "pin": text(),
        "plugin_version": text(),
        "cuda_min": text(),
        "cudnn": text(),
        "nccl_min": text(),
        "jaxlib": text(),
        "index": text(),
        "plugin_source": url(),
    },
    required=("major", "kind"),
)
SHAPE = document(
    {
        "cuda_majors": items(
            mapping(
                {"major": integer(), "cc_min": text(), "driver_min_linux": text(), "source": url()},
                required=("major", "cc_min", "driver_min_linux", "source"),
            ),
            label=("major",),
            unique=("major",),
        ),
        "releases": items(
            mapping(
                {
                    "version": text(),
                    "released": text(),
                    "python": items(text(pattern=r"^3\.\d{1,2}$", form="a Python version X.Y")),
                    "requires_python": text(blank=True),
                    "jaxlib": text(),
                    "minimum_jaxlib": text(),
                    "extras": items(text()),
                    "cuda_extra": integer(),
                    "cuda": items(_BUILD, label=("major",)),
                    "source": url(),
                    "doc": text(),
                },
                required=("version", "source"),
            ),
            nonempty=True,
            label=("version",),
        ),
    },
    required=("releases",),
)


def _is(parse: Any, val: Any) -> bool:
    """Whether a string parses (a version or a specifier); other types are the shape's to report."""
    if not isinstance(val, str):
        return True
    try:
        parse(val)
    except (InvalidVersion, InvalidSpecifier, ValueError):  # ValueError: a number of over 4300 digits
        return False
    return True


def _rows(doc: Mapping[str, Any], key: str) -> list[tuple[int, Mapping[str, Any]]]:
    rows = doc.get(key)
    return [(i, r) for i, r in enumerate(rows if isinstance(rows, list) else ()) if isinstance(r, Mapping)]


def _build_rules(b: Mapping[str, Any], where: str, majors: set[int]) -> list[str]:
    out = []
    if isinstance(b.get("major"), int) and b["major"] not in majors:
        out.append(f"{where}: CUDA major {b['major']} has no row in cuda_majors")
    if not _is(SpecifierSet, b.get("cudnn")):
        out.append(f"{where}: 'cudnn' is not a specifier")
    kind = b.get("kind")
    if kind == "plugin" and (not b.get("package") or not b.get("pin")):
        out.append(f"{where}: a plugin build needs 'package' and 'pin'")
    if kind == "plugin" and b.get("plugin_version") and not b.get("plugin_source"):
        out.append(f"{where}: 'plugin_version' needs 'plugin_source'")
    if kind == "monolithic" and (not b.get("jaxlib") or not b.get("index")):
        out.append(f"{where}: a monolithic build needs 'jaxlib' and 'index'")
    for key in ("cuda_min", "nccl_min", "plugin_version"):
        if not _is(Version, b.get(key)):
            out.append(f"{where}: {key!r} is not a version")
    return out


def _rules(doc: Mapping[str, Any]) -> list[str]:
    """What the shape cannot say: versions and specifiers parse, one row per version, known CUDA majors."""
    out: list[str] = []
    majors: set[int] = set()
    for i, row in _rows(doc, "cuda_majors"):
        if isinstance(row.get("major"), int):
            majors.add(row["major"])
        if not (_is(Version, row.get("cc_min")) and _is(Version, row.get("driver_min_linux"))):
            out.append(
                f"{row_name('cuda_majors', i, row, 'major')}: cc_min and driver_min_linux must be versions"
            )
    seen: set[Version] = set()
    for i, row in _rows(doc, "releases"):
        where = row_name("releases", i, row, "version")
        v = row.get("version")
        if isinstance(v, str) and _is(Version, v):
            if Version(v) in seen:
                out.append(f"{where}: duplicate version")
            seen.add(Version(v))
        elif isinstance(v, str):
            out.append(f"{where}: 'version' is not a version")
        for key in ("requires_python", "jaxlib"):
            if not _is(SpecifierSet, row.get(key)):
                out.append(f"{where}: {key!r} is not a specifier")
        for j, b in _rows(row, "cuda"):
            out.extend(_build_rules(b, f"{where}.{row_name('cuda', j, b, 'major')}", majors))
    return out


def validate_document(doc: Any) -> list[str]:
    """Every problem in a jax.yaml document (empty when valid)."""
    return problems(SHAPE, doc, _rules)


register_side_file(FILE, validate_document)


def _s(row: Mapping[str, Any], key: str) -> str | None:
    val = row.get(key)
    return None if val is None else str(val)


def _build(b: Mapping[str, Any]) -> JaxCudaBuild:
    return JaxCudaBuild(
        major=b["major"],
        kind=str(b["kind"]),
        extras=tuple(str(e) for e in b.get("extras") or ()),
        package=_s(b, "package"),
        pin=_s(b, "pin"),
        plugin_version=_s(b, "plugin_version"),
        cuda_min=_s(b, "cuda_min"),
        cudnn=_s(b, "cudnn"),
        nccl_min=_s(b, "nccl_min"),
        jaxlib=_s(b, "jaxlib"),
        index=_s(b, "index"),
        plugin_source=_s(b, "plugin_source"),
    )


def parse_document(doc: Any) -> tuple[JaxTable | None, list[str]]:
    """The table and every problem found (the table is None unless the document is valid)."""
    found = validate_document(doc)
    if found:
        return None, found
    majors = {
        r["major"]: JaxCudaMajor(r["major"], str(r["cc_min"]), str(r["driver_min_linux"]), str(r["source"]))
        for r in doc.get("cuda_majors") or ()
    }
    rels = [
        JaxRelease(
            version=str(row["version"]),
            released=str(row.get("released") or ""),
            python=tuple(str(p) for p in row.get("python") or ()),
            requires_python=_s(row, "requires_python") or "",
            jaxlib=_s(row, "jaxlib"),
            minimum_jaxlib=_s(row, "minimum_jaxlib"),
            extras=tuple(str(e) for e in row.get("extras") or ()),
            cuda_extra=row.get("cuda_extra"),
            cuda=tuple(_build(b) for b in row.get("cuda") or ()),
            source=str(row["source"]),
            doc=_s(row, "doc"),
        )
        for row in doc["releases"]
    ]
    rels.sort(key=lambda r: r.parsed, reverse=True)
    upd = doc["updated"]
    return JaxTable(upd if isinstance(upd, str) else upd.isoformat(), majors, tuple(rels)), []


_TABLES: dict[int, JaxTable] = {}


def jax_table(matrix: Any) -> JaxTable:
    """The JAX table of a loaded `compat.matrix.Matrix` (parsed on first use, once per matrix)."""
    key = id(matrix)
    table = _TABLES.get(key)
    if table is None:
        doc = matrix.raw.get(FILE)
        if doc is None:
            raise JaxTableError([f"{FILE} is missing or cannot be parsed in {matrix.directory}"])
        parsed, problems = parse_document(doc)
        if problems or parsed is None:
            raise JaxTableError([f"{FILE}: {p}" for p in problems])
        table = parsed
        _TABLES[key] = table
    return table
