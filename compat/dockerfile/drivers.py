"""NVIDIA driver branches (matrix/driver_branches.yaml) and the driver an image needs by default."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping
from typing import Any

from packaging.version import Version

from compat._valueclass import valueclass
from compat.checks.rules import driver_requirement
from compat.findings import Finding, Fix
from compat.matrix import Matrix
from compat.matrixfiles import document, integer, items, mapping, problems, register_side_file, text, url
from compat.versions import major_minor

FILE = "driver_branches.yaml"
DESIGNATIONS = {
    "ltsb": "Long Term Support Branch",
    "production": "Production Branch",
    "feature": "New Feature Branch",
    "evaluation": "Evaluation/Developer Branch",
}
DRIVER_BRANCH = "dockerfile.driver-branch"
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


@valueclass
class Branch:
    """One NVIDIA driver branch as NVIDIA's support table lists it."""

    branch: int
    designation: str
    """ltsb | production | feature | evaluation"""
    eol: tuple[int, int] | None
    """(year, month) of the end of life; None where NVIDIA gives none."""
    source: str

    @property
    def eol_text(self) -> str:
        return f"{_MONTHS[self.eol[1] - 1]} {self.eol[0]}" if self.eol else "no date"

    def supported_on(self, day: _dt.date) -> bool:
        return (
            self.designation in ("ltsb", "production")
            and self.eol is not None
            and (day.year, day.month) <= self.eol
        )


def _eol(value: Any) -> tuple[int, int] | None:
    """(year, month) of a validated `eol: YYYY-MM`."""
    if value is None:
        return None
    year, month = str(value).split("-")
    return int(year), int(month)


SHAPE = document(
    {
        "branches": items(
            mapping(
                {
                    "branch": integer(ge=100, le=9999),
                    "designation": text(enum=DESIGNATIONS),
                    "eol": text(pattern=r"^\d{4}-(0[1-9]|1[0-2])$", form="YYYY-MM"),
                    "source": url(),
                },
                required=("branch", "designation", "source"),
            ),
            nonempty=True,
            label=("branch",),
            unique=("branch",),
        )
    },
    required=("branches",),
)


def validate_document(doc: Any) -> list[str]:
    """Every problem in a driver_branches.yaml document (empty when valid)."""
    return problems(SHAPE, doc)


register_side_file(FILE, validate_document)


def branches(m: Matrix) -> list[Branch]:
    """The branch table, read on first use; empty when the file is missing or invalid."""
    doc = m.raw.get(FILE)
    if not isinstance(doc, Mapping) or validate_document(doc):
        return []
    return [
        Branch(int(r["branch"]), str(r["designation"]), _eol(r.get("eol")), str(r["source"]))
        for r in doc["branches"]
    ]


def oldest_supported(m: Matrix, day: _dt.date) -> Branch | None:
    """The oldest LTSB or production branch NVIDIA still supports on `day` (None: table unknown)."""
    live = [b for b in branches(m) if b.supported_on(day)]
    return min(live, key=lambda b: b.branch) if live else None


def default_driver_findings(
    m: Matrix,
    *,
    image: str,
    cuda: str,
    require_branches: tuple[str, ...] | None,
    line: int,
    day: _dt.date,
    facts: Mapping[str, Any] | None = None,
) -> Iterator[Finding]:
    """Warn when an nvidia/cuda-based image needs a newer driver branch than the oldest one in support.

    The container toolkit compares the host driver with the image's NVIDIA_REQUIRE_CUDA=cuda>=X.Y at
    `docker run --gpus` and refuses to start the container below that CUDA release's driver, unless the
    image lists the host's branch for forward compatibility.
    """
    oldest = oldest_supported(m, day)
    if oldest is None:
        return
    try:
        cv = Version(cuda)
    except ValueError:
        return
    _, own, _ = driver_requirement(m, cv, "linux")
    if own is None:
        return
    need_branch = Version(own).release[0]
    if need_branch <= oldest.branch:
        return
    if require_branches is not None and str(oldest.branch) in require_branches:
        return
    mm = major_minor(cv)
    ok = [
        r
        for r in m.cuda_releases
        if (d := r.min_driver.get("linux")) and Version(d).release[0] <= oldest.branch
    ]
    newest_ok = max(ok, key=lambda r: r.version).raw if ok else None
    fixes = []
    if newest_ok:
        fixes.append(Fix(f"Use a base image with CUDA {newest_ok} or older, which R{oldest.branch} runs"))
    fixes.append(
        Fix(
            "Or say which driver the hosts run",
            "compat dockerfile PATH --target-driver VERSION",
        )
    )
    verb = "refuses" if require_branches is not None else "may refuse"
    yield Finding(
        DRIVER_BRANCH,
        "warning",
        f"{image} needs driver ≥ {own}: the R{oldest.branch} branch {verb} to start it",
        f"The image sets NVIDIA_REQUIRE_CUDA=cuda>={mm}; CUDA {mm} needs NVIDIA driver ≥ {own} (branch "
        f"R{need_branch}). R{oldest.branch} ({DESIGNATIONS[oldest.designation]}, supported until "
        f"{oldest.eol_text}) is the oldest branch NVIDIA still supports (matrix/{FILE}, {oldest.source}); "
        f"on hosts that run it the NVIDIA container toolkit {verb} with 'unsatisfied condition: "
        f"cuda>={mm}, please update your driver'"
        + ("" if require_branches is not None else " (which branches the image lists is not in the matrix)")
        + ". Checked without --target-driver.",
        tuple(fixes),
        {**dict(facts or {}), "image": image, "cuda": cuda, "oldest_branch": oldest.branch},
        group="dockerfile",
        line=line,
    )
