"""Shared pieces of the fuzz tests: the CLI's bad-input contract, hypothesis settings and JSON mutations.

The contract every input-facing command keeps (README "Exit codes"): exit 0 or 1 for input it can read,
2 with exactly one `compat: error: ...` line on stderr for input it cannot, never 3 (a bug in compat), never
a traceback, and never a hang: each input is timed and must finish well inside LIMIT_S.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

LIMIT_S = 5.0
"""Generous: every input here takes well under a second; a regex or loop gone quadratic takes minutes."""
WALL_FACTOR = 4.0
"""The limit is on this process's CPU time: the tests run in parallel (pytest-xdist, two workers per CPU), so the
wall clock also counts the other workers' turns. The wall clock still gets WALL_FACTOR x LIMIT_S (a hang)."""

FUZZ = settings(
    deadline=None,  # timed by hand against LIMIT_S, with the time in the failure message
    database=None,  # nothing written into the tree
    derandomize=True,  # the same examples on every run: a failure is reproducible, not flaky
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def check(run: Callable[..., Any], *args: str, limit: float = LIMIT_S, what: str = "") -> Any:
    """Run `compat ARGS` in-process and assert the bad-input contract; returns the result."""
    t, cpu = time.perf_counter(), time.process_time()
    res = run(*args)
    took, cpu = time.perf_counter() - t, time.process_time() - cpu
    label = what or " ".join(a if len(a) < 80 else a[:77] + "..." for a in args)
    assert res.code in (0, 1, 2), f"{label}: exit {res.code}: {res.err[:500]}"
    assert "Traceback" not in res.err and "Traceback" not in res.out, f"{label}: {res.err[:2000]}"
    if res.code == 2:
        assert res.err.startswith("compat: error: "), f"{label}: {res.err[:500]}"
        assert res.err.count("\n") == 1 and res.err.endswith("\n"), (
            f"{label}: not one line: {res.err[:500]!r}"
        )
    assert cpu < limit, f"{label}: {cpu:.2f} s of CPU (limit {limit} s)"
    assert took < WALL_FACTOR * limit, f"{label}: {took:.2f} s (limit {WALL_FACTOR * limit} s)"
    return res


WRONG: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    2**63,
    1.5,
    -1e308,
    "",
    "x",
    "1.2.3",
    "9" * 5000,
    "\u00b2",
    "\ud800",
    [],
    [None],
    [[]],
    {},
    {"": None},
    {"raw": []},
)
"""Values of every JSON type put in place of one field: wrong types, empty, huge, a lone surrogate."""


def json_paths(doc: Any, limit_list: int = 2, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value in `doc` (the first `limit_list` items of each list)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from json_paths(v, limit_list, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:limit_list]):
            yield from json_paths(v, limit_list, (*prefix, i))


def mutate(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of `doc` with the value at `path` replaced (the root itself for the empty path); `doc` itself
    when an earlier mutation removed the path."""
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(doc)
    cur = out
    try:
        for k in path[:-1]:
            cur = cur[k]
        cur[path[-1]] = copy.deepcopy(value)
    except (KeyError, IndexError, TypeError):
        return doc
    return out


def write_json(path: Path, doc: Any) -> Path:
    """JSON as any tool could write it: NaN allowed, a lone surrogate written as its escape."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


__all__ = ["FUZZ", "LIMIT_S", "WRONG", "check", "json_paths", "load", "mutate", "write_json"]
