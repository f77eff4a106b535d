"""The layers contract (issue 26): every import of compat/, inside functions too, points down; no cycle; no private
name crosses a module. The rules live in tools/layers.py (also run on its own by .ci/run); these tests keep them
true and prove the checker sees what it must (an import inside a function, a cycle, a private name)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compat_layers", ROOT / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compat_layers"] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "compat"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_package_keeps_the_contract(layers: ModuleType) -> None:
    g = layers.build(ROOT / "compat")
    v = layers.judge(g)
    assert len(g.modules) > 150 and len(g.edges) > 1000  # the real package was read
    assert not v.unplaced, f"modules without a layer (place them in tools/layers.py LAYERS): {v.unplaced}"
    assert not v.upward, "imports that point up:\n" + "\n".join(
        f"{e.src}:{e.line} → {e.dst}" + (" (inside a function)" if e.inner else "") for e in v.upward
    )
    assert not v.cycles, f"import cycles: {v.cycles}"
    assert not v.private_names, "private names imported across modules:\n" + "\n".join(
        f"{e.src}:{e.line} imports {e.name} from {e.dst}" for e in v.private_names
    )
    assert not v.private_modules, [f"{e.src}:{e.line} → {e.dst}" for e in v.private_modules]


def test_every_layer_pattern_names_something_that_exists(layers: ModuleType) -> None:
    g = layers.build(ROOT / "compat")
    stale = [
        p
        for _, patterns in layers.LAYERS
        for p in patterns
        if not any(layers.covers(p, m) for m in g.modules)
    ]
    assert not stale, f"LAYERS names modules that no longer exist: {stale}"


def test_an_import_inside_a_function_that_points_up_is_caught(layers: ModuleType, tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "findings.py": '"""model"""\n',
            "checks/__init__.py": "",
            "checks/torch.py": """
                from compat.findings import Finding  # down: fine

                def fix():
                    from compat.solver.solve import with_fixes  # up, hidden in a function
            """,
            "solver/__init__.py": "",
            "solver/solve.py": "def with_fixes(): pass\n",
        },
    )
    v = layers.judge(layers.build(root))
    assert [(e.src, e.dst, e.inner) for e in v.upward] == [
        ("compat.checks.torch", "compat.solver.solve", True)
    ]


def test_a_cycle_through_a_function_level_import_is_caught(layers: ModuleType, tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "solver/__init__.py": "",
            "solver/a.py": "from compat.solver import b\n",
            "solver/b.py": "def f():\n    import compat.solver.a\n",
        },
    )
    v = layers.judge(layers.build(root))
    assert v.cycles == [["compat.solver.a", "compat.solver.b"]]
    assert not v.upward


def test_private_names_and_private_modules_are_caught(layers: ModuleType, tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "smoke/__init__.py": "",
            "smoke/oom.py": "from compat.probes import _util\nfrom compat.probes.health import _parse\n",
            "probes/__init__.py": "",
            "probes/_util.py": "",
            "probes/health.py": "from compat.probes._util import x  # its own package: fine\n_parse = 1\n",
        },
    )
    v = layers.judge(layers.build(root))
    assert [(e.src, e.name) for e in v.private_names] == [("compat.smoke.oom", "_parse")]
    assert [(e.src, e.dst) for e in v.private_modules] == [("compat.smoke.oom", "compat.probes._util")]


def test_relative_imports_and_type_checking_imports_count(layers: ModuleType, tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "facts.py": """
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from compat.checks.context import Ctx
            """,
            "checks/__init__.py": "",
            "checks/context.py": "from ..facts import x\n",
        },
    )
    g = layers.build(root)
    assert {(e.src, e.dst) for e in g.edges} == {
        ("compat.facts", "compat.checks.context"),
        ("compat.checks.context", "compat.facts"),
    }
    v = layers.judge(g)
    assert [(e.src, e.dst) for e in v.upward] == [("compat.facts", "compat.checks.context")]
    assert v.cycles == [["compat.checks.context", "compat.facts"]]


def test_a_module_without_a_layer_is_caught(layers: ModuleType, tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "newthing.py": ""})
    assert layers.judge(layers.build(root)).unplaced == ["compat.newthing"]
