"""JAX's release table (matrix/jax.yaml): rows, validation, look-ups and the `--jax` value syntax.

jax.yaml is an extra matrix file, read on first use (a `compat check` without `--jax` never parses it). Its
rows come from the published wheels' metadata and JAX's installation page (see the file's header).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from compat._record import record

FILE = "jax.yaml"


@record
class JaxCudaMajor:
    """What JAX's installation page states for one CUDA major."""

    major: int
    cc_min: str
    """Lowest compute capability JAX supports with this CUDA major ("5.2")."""
    driver_min_linux: str
    """Lowest Linux driver the page states ("525.60.13", or a branch such as "580")."""
    source: str


@record
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


@record
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


@record
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


@record
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


# -- parsing and validation


def _s(row: Mapping[str, Any], key: str) -> str | None:
    val = row.get(key)
    return None if val is None else str(val)


def parse_document(doc: Any) -> tuple[JaxTable | None, list[str]]:
    """The table and every problem found (the table is None when the document is unusable)."""
    out: list[str] = []
    if not isinstance(doc, Mapping):
        return None, ["top level must be a mapping"]
    upd = doc.get("updated")
    if not isinstance(upd, _dt.date):
        out.append("missing or malformed 'updated: YYYY-MM-DD'")
    majors: dict[int, JaxCudaMajor] = {}
    for i, row in enumerate(doc.get("cuda_majors") or []):
        where = f"cuda_majors[{i}]"
        if not isinstance(row, Mapping) or not isinstance(row.get("major"), int):
            out.append(f"{where}: needs an integer 'major'")
            continue
        for key in ("cc_min", "driver_min_linux", "source"):
            if not row.get(key):
                out.append(f"{where}: missing {key!r}")
        try:
            Version(str(row.get("cc_min")))
            Version(str(row.get("driver_min_linux")))
        except InvalidVersion:
            out.append(f"{where}: cc_min and driver_min_linux must be versions")
            continue
        majors[row["major"]] = JaxCudaMajor(
            row["major"], str(row["cc_min"]), str(row["driver_min_linux"]), str(row.get("source"))
        )
    rels: list[JaxRelease] = []
    seen: set[Version] = set()
    rows = doc.get("releases")
    if not isinstance(rows, list) or not rows:
        out.append("'releases' must be a non-empty list")
        rows = []
    for i, row in enumerate(rows):
        where = f"releases[{i}]"
        if not isinstance(row, Mapping):
            out.append(f"{where}: must be a mapping")
            continue
        where = f"releases[{i}] {row.get('version')!r}"
        try:
            v = Version(str(row.get("version")))
        except InvalidVersion:
            out.append(f"{where}: 'version' is not a version")
            continue
        if v in seen:
            out.append(f"{where}: duplicate version")
        seen.add(v)
        if not row.get("source"):
            out.append(f"{where}: missing 'source'")
        rp = _s(row, "requires_python") or ""
        try:
            SpecifierSet(rp)
        except InvalidSpecifier:
            out.append(f"{where}: 'requires_python' is not a specifier")
        for key in ("jaxlib",):
            if row.get(key) is not None:
                try:
                    SpecifierSet(str(row[key]))
                except InvalidSpecifier:
                    out.append(f"{where}: {key!r} is not a specifier")
        py = row.get("python") or []
        if not isinstance(py, list) or not all(re.match(r"^3\.\d{1,2}$", str(p)) for p in py):
            out.append(f"{where}: 'python' must be a list of X.Y")
            py = []
        builds: list[JaxCudaBuild] = []
        for j, b in enumerate(row.get("cuda") or []):
            bw = f"{where} cuda[{j}]"
            if not isinstance(b, Mapping) or not isinstance(b.get("major"), int):
                out.append(f"{bw}: needs an integer 'major'")
                continue
            kind = b.get("kind")
            if kind not in ("plugin", "monolithic"):
                out.append(f"{bw}: kind must be plugin or monolithic")
                continue
            if b["major"] not in majors:
                out.append(f"{bw}: CUDA major {b['major']} has no row in cuda_majors")
            build = JaxCudaBuild(
                major=b["major"],
                kind=str(kind),
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
            if build.cudnn and build.cudnn_spec is None:
                out.append(f"{bw}: 'cudnn' is not a specifier")
            if kind == "plugin" and (not build.package or not build.pin):
                out.append(f"{bw}: a plugin build needs 'package' and 'pin'")
            if kind == "plugin" and build.plugin_version and not build.plugin_source:
                out.append(f"{bw}: 'plugin_version' needs 'plugin_source'")
            if kind == "monolithic" and (not build.jaxlib or not build.index):
                out.append(f"{bw}: a monolithic build needs 'jaxlib' and 'index'")
            for key in ("cuda_min", "nccl_min", "plugin_version"):
                val = getattr(build, key)
                if val is not None:
                    try:
                        Version(val)
                    except InvalidVersion:
                        out.append(f"{bw}: {key!r} is not a version")
            builds.append(build)
        ce = row.get("cuda_extra")
        if ce is not None and not isinstance(ce, int):
            out.append(f"{where}: 'cuda_extra' must be a CUDA major")
            ce = None
        rels.append(
            JaxRelease(
                version=str(row["version"]),
                released=str(row.get("released") or ""),
                python=tuple(str(p) for p in py),
                requires_python=rp,
                jaxlib=_s(row, "jaxlib"),
                minimum_jaxlib=_s(row, "minimum_jaxlib"),
                extras=tuple(str(e) for e in row.get("extras") or ()),
                cuda_extra=ce,
                cuda=tuple(builds),
                source=str(row.get("source") or ""),
                doc=_s(row, "doc"),
            )
        )
    rels.sort(key=lambda r: r.parsed, reverse=True)
    table = JaxTable(upd.isoformat() if isinstance(upd, _dt.date) else "unknown", majors, tuple(rels))
    return table, out


def validate_document(doc: Any) -> list[str]:
    """Every problem in a jax.yaml document (empty when valid); for `compat matrix validate`."""
    return parse_document(doc)[1]


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
