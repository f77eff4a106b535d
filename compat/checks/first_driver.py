"""The first driver that drives each GPU architecture (matrix/gpu_drivers.yaml), and driver branches given alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.version import Version

from compat._valueclass import valueclass
from compat.matrix import Matrix
from compat.matrixfiles import document, items, mapping, problems, register_side_file, row_name, text, url
from compat.versions import CC, parse_cc, parse_driver

FILE = "gpu_drivers.yaml"
BASES = ("release-notes", "derived")
TABLE3 = "NVIDIA's CUDA Toolkit release notes (Table 3)"

_DRIVER = text(pattern=r"^\d{2,4}(\.\d{1,3}){1,2}$", form="a driver version as NVIDIA prints it (520.61.05)")
SHAPE = document(
    {
        "architectures": items(
            mapping(
                {
                    "cc": text(pattern=r"^\d{1,2}\.\d$", form="a compute capability X.Y"),
                    "architecture": text(),
                    "first_driver": mapping({"linux": _DRIVER, "windows": _DRIVER}, closed=True),
                    "basis": text(enum=BASES),
                    "cuda": text(pattern=r"^\d+\.\d+$", form="a CUDA release X.Y"),
                    "source": url(),
                    "cuda_source": url(),
                    "corroboration": url(),
                },
                required=("cc", "architecture", "first_driver", "basis", "source"),
                closed=True,
            ),
            nonempty=True,
            label=("cc",),
            unique=("cc",),
        )
    },
    required=("architectures",),
)


def _rules(doc: Any) -> list[str]:
    """A derived row names the CUDA release it is derived from, and where that release's first-toolkit fact is."""
    out: list[str] = []
    rows = doc.get("architectures") if isinstance(doc, Mapping) else None
    for i, row in enumerate(rows if isinstance(rows, list) else []):
        if isinstance(row, Mapping) and row.get("basis") == "derived":
            missing = [k for k in ("cuda", "cuda_source") if not row.get(k)]
            if missing:
                out.append(
                    f"{row_name('architectures', i, row, 'cc')}: a derived row needs {', '.join(missing)}"
                )
    return out


def validate_document(doc: Any) -> list[str]:
    """Every problem in a gpu_drivers.yaml document (empty when valid)."""
    found = problems(SHAPE, doc)
    return found or _rules(doc)


register_side_file(FILE, validate_document)


@valueclass
class FirstDriver:
    """The first driver for GPUs of one compute capability on one OS."""

    cc: CC
    architecture: str
    raw: str
    """The driver as NVIDIA prints it ("520.61.05")."""
    derived: bool
    cuda: str | None
    """Derived rows: the CUDA release that introduced the architecture."""
    source: str

    @property
    def branch(self) -> int:
        return Version(self.raw).release[0]

    def drives(self, driver: Version) -> bool:
        """Whether `driver` can drive these GPUs: a derived row by branch, a release-notes row exactly."""
        return driver.release[0] >= self.branch if self.derived else driver >= Version(self.raw)

    @property
    def need(self) -> str:
        """`R520 (520.61.05, the driver of CUDA 11.8)` or `570.86.10`: what a finding says the GPU needs."""
        if self.derived:
            return f"R{self.branch} ({self.raw}, the driver of CUDA {self.cuda})"
        return self.raw

    def basis(self, os_label: str) -> str:
        """Where the first driver comes from, in a sentence."""
        if not self.derived:
            return f"NVIDIA's driver release notes list {self.architecture} from {self.raw} ({self.source})"
        return (
            f"derived, not from NVIDIA's supported-products lists: CUDA {self.cuda} is the first CUDA release that "
            f"targets {self.cc.sm} and {TABLE3} pair it with driver {self.raw} on {os_label} ({self.source}); "
            f"compared by branch, as an earlier R{self.branch} release may already drive some {self.architecture} "
            "GPUs"
        )


# Parsed tables by the document they were read from (the solver asks once per candidate); the document is kept
# with its table so that its id cannot be reused while the entry lives.
_PARSED: dict[tuple[int, str], tuple[Any, dict[CC, FirstDriver]]] = {}


def first_drivers(m: Matrix, os_name: str) -> dict[CC, FirstDriver]:
    """Compute capability -> its first driver on `os_name`; empty when the file is missing or invalid."""
    doc = m.raw.get(FILE)
    hit = _PARSED.get((id(doc), os_name))
    if hit is not None and hit[0] is doc:
        return hit[1]
    out = _parse(doc, os_name)
    if len(_PARSED) > 64:
        _PARSED.clear()
    _PARSED[(id(doc), os_name)] = (doc, out)
    return out


def _parse(doc: Any, os_name: str) -> dict[CC, FirstDriver]:
    if not isinstance(doc, Mapping) or validate_document(doc):
        return {}
    out: dict[CC, FirstDriver] = {}
    for r in doc["architectures"]:
        raw = (r.get("first_driver") or {}).get(os_name)
        if raw:
            cc = parse_cc(str(r["cc"]))
            cuda = str(r["cuda"]) if r.get("cuda") else None
            out[cc] = FirstDriver(
                cc, str(r["architecture"]), str(raw), r["basis"] == "derived", cuda, str(r["source"])
            )
    return out


def first_driver(m: Matrix, cc: CC, os_name: str) -> FirstDriver | None:
    """The first driver for GPUs of compute capability `cc` on `os_name`; None where the matrix does not know it."""
    return first_drivers(m, os_name).get(cc)


def branch_first_release(m: Matrix, branch: int, os_name: str) -> str | None:
    """The earliest release of driver branch `branch` that NVIDIA's CUDA driver table (Table 3, cuda.yaml) lists
    for `os_name` ("535" -> "535.54.03"); None when the table lists no release of that branch."""
    found = [
        (Version(d), d)
        for r in m.cuda_releases
        if (d := r.min_driver.get(os_name)) is not None and Version(d).release[0] == branch
    ]
    return min(found)[1] if found else None


@valueclass
class GivenDriver:
    """A driver as the checks compare it: a release as given, or a branch as its first release."""

    version: Version
    raw: str
    """The release compared, as NVIDIA prints it ("535.54.03"; "535.0" for a branch the table does not list)."""
    branch: int | None = None
    """Set when only a branch was given."""
    listed: bool = True
    """False when the branch's first release is not in the table (compared as BRANCH.0)."""

    def text(self) -> str:
        """`driver 535.104.05`, or `driver branch R535 (compared as its first release 535.54.03)`."""
        if self.branch is None:
            return f"driver {self.raw}"
        if self.listed:
            return f"driver branch R{self.branch} (compared as its first release {self.raw})"
        return (
            f"driver branch R{self.branch} (compared as {self.raw}: its first release is not in the matrix)"
        )


def given_driver(m: Matrix, raw: str, value: str | None, os_name: str) -> GivenDriver:
    """`raw` (a fact's raw string) and `value` (its parsed value) as the checks compare them."""
    val = value or raw
    if "." in val:
        return GivenDriver(Version(val), raw)
    branch = int(val)
    first = branch_first_release(m, branch, os_name)
    if first is not None:
        return GivenDriver(parse_driver(first), first, branch)
    return GivenDriver(Version(f"{branch}.0"), f"{branch}.0", branch, listed=False)
