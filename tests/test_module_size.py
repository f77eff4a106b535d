"""Files follow the flow (issue 12, item 6): no module under compat/ grows past MAX_LINES lines; split it by
responsibility (after the stage it belongs to) instead."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500

# Modules allowed over the limit, each with the reason. Keep it empty: an entry is a debt, not a licence.
EXEMPT: dict[str, str] = {}
"""Modules allowed over the limit, each with its reason (none today: keep it that way)."""


def _lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def _modules() -> list[Path]:
    return sorted((ROOT / "compat").rglob("*.py"))


def test_the_package_is_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert "compat/cli.py" in names and "compat/startup.py" in names
    assert len(names) > 50


def test_no_module_over_the_limit() -> None:
    over = {
        p.relative_to(ROOT).as_posix(): n
        for p in _modules()
        if (n := _lines(p)) > MAX_LINES and p.relative_to(ROOT).as_posix() not in EXEMPT
    }
    assert not over, f"modules over {MAX_LINES} lines (split them by responsibility): {over}"


def test_every_exemption_names_a_module_that_exists() -> None:
    gone = [name for name in EXEMPT if not (ROOT / name).is_file()]
    assert not gone, f"exempt but missing (drop the entries): {gone}"
