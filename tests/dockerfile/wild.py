"""Score compat on the wild corpus (tests/data/dockerfile/wild): verdict accuracy and false claims.

`python -m tests.dockerfile.wild` prints the numbers per split and kind; test_wild.py asserts them.
"""

from __future__ import annotations

import datetime as _dt
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TODAY = _dt.date(2026, 11, 23)
"""The day the corpus is judged on (driver branches in support), so the numbers do not drift."""
WILD = Path(__file__).resolve().parents[2] / "tests" / "data" / "dockerfile" / "wild"

# The finding ids that name each problem class of the manifest. An error on a broken file whose id is
# not among its problems' ids is a false claim (it is wrong about the file, even if the verdict is right).
CLASS_IDS: dict[str, tuple[str, ...]] = {
    "index-tag": ("dockerfile.index-tag",),
    "companion-pin": ("dockerfile.companion",),
    "unpinned-companion": ("dockerfile.companion", "dockerfile.unpinned"),
    "unpinned-conflict": ("dockerfile.unpinned",),
    "deleted-tag": ("dockerfile.deleted-tag",),
    "get-pip-old-python": ("dockerfile.get-pip",),
    "no-nvcc": ("dockerfile.no-nvcc",),
    "nvcc-torch-major": ("dockerfile.nvcc-torch",),
    "cudnn-missing": ("dockerfile.cudnn", "dockerfile.no-cudnn"),
    "arch-list": ("dockerfile.arch-list",),
    "cuda-runtime-missing": ("dockerfile.no-cuda-runtime",),
    "apt-key-rotation": ("dockerfile.apt-key",),
    "build-isolation": ("dockerfile.build-isolation",),
    "shell-syntax": ("dockerfile.glued-command",),
}


@dataclass(frozen=True)
class Item:
    split: str
    path: Path
    row: dict[str, Any]


@dataclass
class Score:
    total: int = 0
    right: int = 0
    broken: int = 0
    caught: int = 0
    """Broken files predicted broken."""
    false_claims: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0


def items(split: str) -> list[Item]:
    folder = WILD / "frozen" if split == "frozen" else WILD / "files"
    manifest = WILD / ("frozen/manifest.yaml" if split == "frozen" else "manifest.yaml")
    rows = yaml.safe_load(manifest.read_text(encoding="utf-8"))["files"]
    return [Item(split, folder / r["file"], r) for r in rows]


def judge(item: Item, findings: Iterable[Any]) -> tuple[bool, list[str]]:
    """(predicted verdict right?, false claims) for one file's findings (objects with id/severity/title)."""
    fs = list(findings)
    errors = [f for f in fs if f.severity == "error"]
    predicted = "broken" if errors else "ok"
    allowed: set[str] = set()
    for p in item.row.get("problems", []):
        allowed.update(CLASS_IDS.get(p["cls"], ()))
    claims = [f"{item.row['file']}: {f.id}: {f.title}" for f in errors if f.id not in allowed]
    return predicted == item.row["verdict"], claims


def score(
    split: str, check: Callable[[Item], Iterable[Any] | None], kinds: tuple[str, ...] = ("dockerfile",)
) -> Score:
    s = Score()
    for it in items(split):
        if it.row["kind"] not in kinds:
            continue
        findings = check(it)
        if findings is None:
            continue
        right, claims = judge(it, findings)
        s.total += 1
        s.right += right
        if it.row["verdict"] == "broken":
            s.broken += 1
            s.caught += right
        if not right:
            s.wrong.append(it.row["file"])
        s.false_claims.extend(claims)
    return s


def default_check(matrix: Any) -> Callable[[Item], Iterable[Any] | None]:
    """Run the matching compat checker on one corpus file (None: no checker for that kind)."""

    def run(it: Item) -> Iterable[Any] | None:
        kind = it.row["kind"]
        if kind == "dockerfile":
            from compat.dockerfile import check_dockerfile

            return check_dockerfile(it.path, matrix, today=TODAY).findings
        from compat.sources.images import DeploymentTarget

        try:
            if kind == "compose":
                from compat.sources.compose import check_compose

                return check_compose([it.path], matrix, DeploymentTarget(today=TODAY)).findings
            from compat.sources.k8s import check_k8s

            return check_k8s([it.path], matrix, DeploymentTarget(today=TODAY)).findings
        except ImportError:
            return None

    return run


def main(argv: list[str]) -> int:
    from compat.matrix import load_matrix

    m = load_matrix(Path(__file__).resolve().parents[2] / "matrix")
    check = default_check(m)
    for split in ("tuning", "frozen"):
        for kinds in (("dockerfile",), ("compose", "k8s")):
            s = score(split, check, kinds)
            print(
                f"{split:7} {'+'.join(kinds):12} files {s.total:3}  accuracy {s.right}/{s.total} "
                f"= {s.accuracy:.1%}  broken caught {s.caught}/{s.broken}  false claims {len(s.false_claims)}"
            )
            if "-v" in argv:
                for w in s.wrong:
                    print("   wrong:", w)
                for c in s.false_claims:
                    print("   false claim:", c)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
