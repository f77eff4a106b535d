"""`jax.*` checks on real cases: JAX's installation page and the published wheels say what runs where."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compat.checks.jax import JaxFacts, jax_findings, newest_for
from compat.installcmd import jax_command
from compat.jaxmatrix import JaxTable, jax_table, parse_jax
from compat.matrix import Matrix, load_matrix
from compat.versions import CC

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def m() -> Matrix:
    return load_matrix(ROOT / "matrix")


@pytest.fixture(scope="module")
def table(m: Matrix) -> JaxTable:
    return jax_table(m)


def run(table: JaxTable, m: Matrix, jax: str, **kw: Any) -> list[tuple[str, str, list[str | None]]]:
    fs, _ = jax_findings(JaxFacts(jax=parse_jax(jax), **kw), table, m)
    return [(f.id, f.severity, [x.command for x in f.fixes]) for f in fs]


def test_clean_stack_has_no_finding(table: JaxTable, m: Matrix) -> None:
    assert run(table, m, "0.10.2+cuda12", python="3.12", os="linux", driver="535.104.05", cc=CC(8, 0)) == []
    assert run(table, m, "0.10.2+cuda13", python="3.12", os="linux", driver="580.65.06", cc=CC(9, 0)) == []


def test_cuda13_on_a_cuda12_driver_offers_the_cuda12_build(table: JaxTable, m: Matrix) -> None:
    # JAX's page: "the driver version must be >= 525 for CUDA 12 on Linux, and >= 580 for CUDA 13 on Linux."
    got = run(table, m, "0.10.2+cuda13", python="3.12", os="linux", driver="550.54.15", cc=CC(8, 9))
    assert [g[0] for g in got] == ["jax.driver"]
    assert got[0][2][0] == 'pip install -U "jax[cuda12]==0.10.2"'


def test_cuda12_on_a_cuda11_driver_is_an_error(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.10.2+cuda12", python="3.12", os="linux", driver="470.82.01", cc=CC(8, 0))
    assert [g[:2] for g in got] == [("jax.driver", "error")]


def test_cuda13_needs_turing_or_newer(table: JaxTable, m: Matrix) -> None:
    # "On CUDA 13, JAX supports NVIDIA GPUs that have SM version 7.5 or newer." A GTX 1080 is 6.1.
    got = run(
        table, m, "0.10.2+cuda13", python="3.12", os="linux", driver="580.65.06", cc=CC(6, 1), gpu="GTX 1080"
    )
    assert [g[0] for g in got] == ["jax.arch"]
    assert got[0][2] == ['pip install -U "jax[cuda12]==0.10.2"']


def test_plain_jax_on_a_gpu_machine_runs_on_the_cpu(table: JaxTable, m: Matrix) -> None:
    got = run(
        table, m, "0.10.2", python="3.12", os="linux", driver="580.65.06", cc=CC(8, 0), gpu_present=True
    )
    assert [g[0] for g in got] == ["jax.cpu-build"]
    assert got[0][2] == ['pip install -U "jax[cuda13]==0.10.2"']
    # Without a GPU, the CPU build is what the user wants.
    assert run(table, m, "0.10.2", python="3.12", os="linux") == []


def test_python_without_wheels_suggests_the_newest_release_that_has_them(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.10.2+cuda12", python="3.10", os="linux", driver="535.104.05", cc=CC(8, 0))
    assert [g[0] for g in got] == ["jax.python"]
    assert got[0][2] == ['pip install -U "jax[cuda12]==0.6.2"']  # 0.6.2: the last jaxlib for Python 3.10


def test_missing_cuda13_build_before_0_7(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.6.2+cuda13", python="3.11", os="linux", driver="580.65.06", cc=CC(8, 0))
    assert [g[0] for g in got] == ["jax.cuda-build"]
    assert got[0][2] == ['pip install -U "jax[cuda12]==0.6.2"']


def test_windows_native_has_no_gpu_support(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.10.2+cuda12", python="3.12", os="windows", driver="560.94", cc=CC(8, 6))
    assert [g[0] for g in got] == ["jax.windows-gpu"]


def test_jaxlib_outside_the_release_range(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.10.2+cuda12", python="3.12", os="linux", jaxlib="0.9.2")
    assert [g[0] for g in got] == ["jax.jaxlib"]
    assert run(table, m, "0.10.2+cuda12", python="3.12", os="linux", jaxlib="0.10.1") == []


def test_old_cudnn_for_the_plugin(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "0.10.2+cuda12", python="3.12", os="linux", driver="535.104.05", cudnn="9.1.0")
    assert [g[0] for g in got] == ["jax.cudnn"]


def test_unknown_release_is_not_an_error(table: JaxTable, m: Matrix) -> None:
    got = run(table, m, "9.9.9+cuda12", python="3.12", driver="535.104.05")
    assert got == [("jax.unknown-version", "info", [])]


def test_install_commands(table: JaxTable) -> None:
    r = table.release("0.4.25")
    assert r is not None
    assert jax_command(r, 12) == (
        'pip install -U "jax[cuda12_pip]==0.4.25" -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html'
    )
    new = table.release("0.10.2")
    assert new is not None
    assert jax_command(new, None) == 'pip install -U "jax==0.10.2"'


def test_every_fix_passes_its_own_recheck(table: JaxTable, m: Matrix) -> None:
    """Closure: applying a fix's jax version to the same facts leaves no jax error."""
    import re

    drivers = ["470.82.01", "535.104.05", "550.54.15", "580.65.06"]
    ccs = [CC(6, 1), CC(7, 0), CC(8, 0), CC(9, 0)]
    pythons = ["3.9", "3.10", "3.11", "3.12", "3.13"]
    checked = 0
    for release in table.releases[:20]:
        for label in ("", "+cuda12", "+cuda13"):
            for drv in drivers:
                for cc in ccs:
                    for py in pythons:
                        facts: dict[str, Any] = dict(
                            python=py, os="linux", driver=drv, cc=cc, gpu_present=True
                        )
                        fs, _ = jax_findings(
                            JaxFacts(jax=parse_jax(release.version + label), **facts), table, m
                        )
                        for f in fs:
                            for fix in f.fixes:
                                if not fix.command:
                                    continue
                                mm = re.search(r'"jax\[cuda(\d+)(?:_pip)?\]==([^"]+)"', fix.command)
                                assert mm, fix.command
                                again, _ = jax_findings(
                                    JaxFacts(jax=parse_jax(f"{mm.group(2)}+cuda{mm.group(1)}"), **facts),
                                    table,
                                    m,
                                )
                                assert [a.id for a in again if a.severity == "error"] == [], (
                                    f.id,
                                    fix.command,
                                    facts,
                                )
                                checked += 1
    assert checked > 500


def test_newest_for_suggest(table: JaxTable, m: Matrix) -> None:
    best = newest_for(table, m, python="3.11", driver="550.54.15", cc=CC(8, 0))
    assert best is not None
    assert (best[0].version, best[1]) == ("0.10.2", 12)
    best13 = newest_for(table, m, python="3.12", driver="580.65.06", cc=CC(9, 0))
    assert best13 is not None and best13[1] == 13
