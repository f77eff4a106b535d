"""compat's layers contract: every import (module level, inside functions, under TYPE_CHECKING) points down.

Run `python tools/layers.py` for the numbers, `python tools/layers.py --check` to fail on any violation
(`.ci/run` and `tests/test_layers.py` do). The rule, from the top:

    entry → orchestration → analysis → sources → pipeline → solver → resolver → checks → output → model → leaves

A module may import modules of its own layer or of a lower one, never of a higher one. On top of that:
- no import cycle of any size (a strongly connected component of the import graph, imports inside functions
  included);
- no module imports another module's underscore-private name (`from compat.x import _y`), and a private module
  (`compat.pkg._m`) is imported only from inside its own package `compat.pkg`;
- every module under `compat/` has a layer (a new module is placed on purpose, in `LAYERS` below).

The graph is read with `ast` only (nothing is imported), so the contract runs in milliseconds and cannot be
fooled by an import that happens to be cached.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Top first. A module's layer is the one of the longest pattern that names it or a package above it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "entry",
        (
            "compat",  # the package itself only (`compat.guard`, `%load_ext compat`), not everything under it
            "compat.__main__",
            "compat.cli",
            "compat.commands",
            "compat.mcp_server",
            "compat.mcp_policy",
        ),
    ),
    (
        "orchestration",
        (
            "compat.pipeline",
            "compat.startup",
            "compat.guard_cache",
            "compat.record",
            "compat.fleet",
        ),
    ),
    (
        "analysis",
        (
            "compat.suggest",
            "compat.suggest_document",
            "compat.explain",
            "compat.dockerfile",
            "compat.sources",
            "compat.smoke",
        ),
    ),
    (
        "sources",
        (
            "compat.probes",
            "compat.installed",
        ),
    ),
    # resolve, then the solver's fixes: one step every flow that shows fixes runs (check, doctor, guard, explain,
    # Dockerfile), so it sits below the analyses and above the solver.
    ("pipeline", ("compat.pipeline.check",)),
    ("solver", ("compat.solver",)),
    ("resolver", ("compat.resolver",)),
    ("checks", ("compat.checks",)),
    (
        "output",
        (
            "compat.output",
            "compat.render",
            "compat.report_markdown",
            "compat.inventory",
            "compat.redact",
        ),
    ),
    (
        "model",
        (
            "compat.facts",
            "compat.findings",
            "compat.matrix",
            "compat.jaxmatrix",
            "compat.matrixfiles",
            "compat.probes.model",
            "compat.probes.codec",
            "compat.probes.probeset",
            "compat.probes.outcome",
            "compat.explain.categories",
            "compat.explain.diagnosis",
            "compat.explain.signature",
            "compat.installcmd",
            "compat.selection",
        ),
    ),
    (
        "leaves",
        (
            "compat._proc",
            "compat._atomic",
            "compat._valueclass",
            "compat._runtime",
            "compat._signals",
            "compat._text",
            "compat.errors",
            "compat.cache",
            "compat.versions",
            "compat.inputs",
            "compat.distributions",
            "compat.target",
            "compat.progress",
            "compat.schema_version",
            "compat.about",
            # Standalone child scripts, loaded by path into other interpreters: they import nothing from compat.
            "compat.probes._framework_child",
            "compat.probes._nvml_child",
            "compat.smoke._child_common",
            "compat.smoke._child_ddp",
            "compat.smoke._child_ddp_rank",
            "compat.smoke._child_jax",
            "compat.smoke._child_tf",
            "compat.smoke._child_torch",
            "compat.record.gpu_sampler",
            "compat.record.relay",
        ),
    ),
)

RANK = {name: len(LAYERS) - i for i, (name, _) in enumerate(LAYERS)}  # higher is further up


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int
    inner: bool
    """Inside a function (or method): run when called, not at import."""
    name: str | None = None
    """The name imported from `dst` (`from dst import name`), when it is not a module."""


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: list[Edge] = field(default_factory=list)

    def targets(self, src: str) -> set[str]:
        return {e.dst for e in self.edges if e.src == src}


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _owner(modules: dict[str, Path], name: str) -> str | None:
    """The module `name` lives in: itself, or the nearest package or module above it."""
    while name:
        if name in modules:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


def _imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it sits inside a function."""

    def walk(node: ast.AST, inner: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, inner
            yield from walk(
                child, inner or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            )

    yield from walk(tree, False)


def build(root: Path) -> Graph:
    modules = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    g = Graph(modules)
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node, inner in _imports(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    dst = _owner(modules, a.name)
                    if dst and dst != mod:
                        g.edges.append(Edge(mod, dst, node.lineno, inner))
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                full = f"{target}.{a.name}"
                if full in modules:
                    if full != mod:
                        g.edges.append(Edge(mod, full, node.lineno, inner))
                    continue
                dst = _owner(modules, target)
                if dst and dst != mod:
                    g.edges.append(Edge(mod, dst, node.lineno, inner, a.name))
    return g


def covers(pattern: str, mod: str) -> bool:
    """A pattern names a module and everything under it; the root package's name ("compat") names only itself."""
    return mod == pattern or ("." in pattern and mod.startswith(pattern + "."))


def layer_of(mod: str) -> str | None:
    best: tuple[int, str] | None = None
    for name, patterns in LAYERS:
        for p in patterns:
            if covers(p, mod) and (best is None or len(p) > best[0]):
                best = (len(p), name)
    return best[1] if best else None


def sccs(g: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    adj = {m: sorted(g.targets(m)) for m in g.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in g.modules:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(adj[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(adj[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@dataclass
class Violations:
    unplaced: list[str]
    upward: list[Edge]
    cycles: list[list[str]]
    private_names: list[Edge]
    private_modules: list[Edge]

    @property
    def ok(self) -> bool:
        return not (self.unplaced or self.upward or self.cycles or self.private_names or self.private_modules)


def judge(g: Graph) -> Violations:
    unplaced = [m for m in g.modules if layer_of(m) is None]
    upward: list[Edge] = []
    private_names = []
    private_modules = []
    seen: set[tuple[str, str, int]] = set()
    for e in g.edges:
        ls, ld = layer_of(e.src), layer_of(e.dst)
        if ls and ld and RANK[ld] > RANK[ls] and (e.src, e.dst, e.line) not in seen:
            seen.add((e.src, e.dst, e.line))  # one import statement naming three things is one upward import
            upward.append(e)
        if e.name and _private(e.name):
            private_names.append(e)
        last = e.dst.rpartition(".")[2]
        parent = e.dst.rpartition(".")[0]
        if _private(last) and not (e.src == parent or e.src.startswith(parent + ".")):
            private_modules.append(e)
    return Violations(unplaced, upward, sccs(g), private_names, private_modules)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent / "compat"))
    ap.add_argument("--check", action="store_true", help="exit 1 on any violation")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every violation")
    args = ap.parse_args(argv)
    g = build(Path(args.root))
    v = judge(g)
    inner = [e for e in g.edges if e.inner]
    in_cycles = sum(len(c) for c in v.cycles)
    print(f"modules: {len(g.modules)}; imports: {len(g.edges)} ({len(inner)} inside functions)")
    print(f"modules without a layer: {len(v.unplaced)}")
    print(
        f"upward imports: {len(v.upward)} ({sum(1 for e in v.upward if e.inner)} inside functions, "
        f"in {len({e.src for e in v.upward})} modules)"
    )
    print(f"import cycles: {len(v.cycles)} (sizes {sorted(len(c) for c in v.cycles)}; {in_cycles} modules)")
    print(
        f"private-name imports across modules: {len(v.private_names)} (in {len({e.src for e in v.private_names})} files); "
        f"private modules imported from outside their package: {len(v.private_modules)}"
    )
    if args.verbose or args.check:
        for m in v.unplaced:
            print(f"  unplaced: {m} ({g.modules[m]})")
        for e in v.upward:
            where = "in a function" if e.inner else "at module level"
            print(f"  upward: {e.src}:{e.line} ({layer_of(e.src)}) → {e.dst} ({layer_of(e.dst)}) {where}")
        for c in v.cycles:
            print(f"  cycle of {len(c)}: {' '.join(c)}")
        for e in v.private_names:
            print(f"  private name: {e.src}:{e.line} imports {e.name} from {e.dst}")
        for e in v.private_modules:
            print(f"  private module: {e.src}:{e.line} imports {e.dst}")
    if args.check and not v.ok:
        print("layers contract: FAILED", file=sys.stderr)
        return 1
    if args.check:
        print("layers contract: ok")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    raise SystemExit(main())
