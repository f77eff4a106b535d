"""Start-up means (issue 12): Requires-Dist read from METADATA without importlib.metadata, the cheap name test
before packaging's parser, pin_conflicts without packaging where nothing can conflict, and the command line's
exit without the interpreter's teardown (compat.cli._exit_now)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from compat.installed import may_name_nvidia, requirement_name
from compat.probes import _framework_child as fchild
from compat.probes.frameworks import pin_conflicts
from tests.conftest import ROOT

CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# ------------------------------------------------------------------ requires_dist


def test_requires_dist_agrees_with_importlib_metadata_for_every_installed_distribution() -> None:
    where: dict[str, str] = {}
    dists = fchild.installed_distributions(where=where)
    assert set(where) == set(dists)
    compared = 0
    for name, path in sorted(where.items()):
        fast = fchild.requires_dist(path)
        if fast is None:  # an .egg-info: read the slow way by the caller
            assert not path.endswith(".dist-info") or not os.path.isfile(os.path.join(path, "METADATA"))
            continue
        assert fast == list(metadata.requires(name) or []), name
        compared += 1
    assert compared >= 20, f"only {compared} distributions compared"


def _dist(tmp_path: Path, text: str | None, name: str = "demo-1.0.dist-info") -> str:
    d = tmp_path / name
    d.mkdir()
    if text is not None:
        (d / ("PKG-INFO" if name.endswith(".egg-info") else "METADATA")).write_text(text, encoding="utf-8")
    return str(d)


METADATA_TEXT = (
    "Metadata-Version: 2.1\n"
    "Name: demo\n"
    "Version: 1.0\n"
    "License: Permission is hereby granted\n"
    "        \n"  # a folded line made only of spaces: the header goes on
    "        to any person obtaining a copy.\n"
    "Requires-Dist: alpha>=1.0\n"
    "requires-dist: beta[x]; extra == 'x'\n"  # header names are case-insensitive
    "Requires-Dist: gamma==2.0;\n"
    '  python_version < "3.12"\n'  # a folded Requires-Dist continues on the next line
    "Classifier: Programming Language :: Python\n"
    "   folded classifier text\n"  # folded, but not a Requires-Dist: ignored
    "Requires-Dist:   delta  \n"
    "Description-Content-Type: text/markdown\n"
    "\n"
    "# demo\n"
    "Requires-Dist: fake\n"  # the body: not a header
    "\n"
    "Requires-Dist: fake2\n"
)


def test_requires_dist_reads_the_header_only_and_unfolds_lines(tmp_path: Path) -> None:
    got = fchild.requires_dist(_dist(tmp_path, METADATA_TEXT))
    assert got == [
        "alpha>=1.0",
        "beta[x]; extra == 'x'",
        'gamma==2.0; python_version < "3.12"',
        "delta",
    ]


def test_requires_dist_matches_importlib_metadata_on_a_plain_file(tmp_path: Path) -> None:
    text = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nLicense: MIT\n        \n        more\n"
        "Requires-Dist: a\nRequires-Dist: b>=2; extra == 'x'\nrequires-dist: c\n\nRequires-Dist: body\n"
    )
    path = _dist(tmp_path, text)
    assert (
        fchild.requires_dist(path)
        == metadata.PathDistribution.at(path).requires
        == ["a", "b>=2; extra == 'x'", "c"]
    )


def test_requires_dist_of_a_header_without_requirements_is_empty(tmp_path: Path) -> None:
    assert fchild.requires_dist(_dist(tmp_path, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")) == []
    assert fchild.requires_dist(_dist(tmp_path, "", "empty-1.0.dist-info")) == []


def test_requires_dist_handles_crlf_line_ends(tmp_path: Path) -> None:
    text = "Name: demo\r\nRequires-Dist: a\r\n  ; extra == 'x'\r\n\r\nRequires-Dist: body\r\n"
    d = tmp_path / "crlf-1.0.dist-info"
    d.mkdir()
    (d / "METADATA").write_bytes(text.encode())
    assert fchild.requires_dist(str(d)) == ["a ; extra == 'x'"]


def test_requires_dist_is_none_without_a_metadata_file_or_for_an_egg_info(tmp_path: Path) -> None:
    assert fchild.requires_dist(_dist(tmp_path, None)) is None
    assert fchild.requires_dist(str(tmp_path / "missing-1.0.dist-info")) is None
    egg = _dist(tmp_path, "Metadata-Version: 1.0\nName: legacy\nVersion: 0.5\n", "legacy.egg-info")
    (Path(egg) / "METADATA").write_text("Requires-Dist: alpha\n")  # even with a METADATA inside
    assert fchild.requires_dist(egg) is None
    assert fchild.requires_dist("") is None


def test_installed_distributions_fill_where_with_the_winning_directory(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "Foo_Bar-1.0.dist-info").mkdir(parents=True)
    (second / "foo_bar-2.0.dist-info").mkdir(parents=True)
    (second / "baz-3.0.dist-info").mkdir()
    where: dict[str, str] = {}
    got = fchild.installed_distributions(None, [str(first), str(second)], where)
    assert got == {"foo-bar": "1.0", "baz": "3.0"}
    assert where == {
        "foo-bar": str(first / "Foo_Bar-1.0.dist-info"),
        "baz": str(second / "baz-3.0.dist-info"),
    }


# ------------------------------------------------------------------ the cheap name test


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("NVIDIA_cudnn.CU12==9.1.0.70", "nvidia-cudnn-cu12"),
        ("Nvidia-Cublas-Cu12 (>=12.1)", "nvidia-cublas-cu12"),
        ("nvidia__nccl..cu12>=2", "nvidia-nccl-cu12"),
        ("  torch>=2; extra == 'cuda'", "torch"),
        ("\tzope.interface", "zope-interface"),
        ("a", "a"),
        ("", None),
        ("   ", None),
        ("; python_version < '3'", None),
        ("-leading-dash", None),
    ],
)
def test_requirement_name_is_the_pep_503_name(line: str, name: str | None) -> None:
    assert requirement_name(line) == name


def test_may_name_nvidia() -> None:
    installed = {"nvidia-cudnn-cu12": "9.1.0.70", "torch": "2.5.1"}
    line = 'NVIDIA_CUDNN.cu12==9.1.0.70; platform_system == "Linux"'
    assert may_name_nvidia(line) is True
    assert may_name_nvidia(line, installed) is True
    assert may_name_nvidia("  nvidia-cudnn-cu12", installed) is True
    assert may_name_nvidia("nvidia-cublas-cu12==12.4.5.8", installed) is False  # not installed
    assert may_name_nvidia("nvidia-cublas-cu12==12.4.5.8") is True
    assert may_name_nvidia("nvidia-cublas-cu12==12.4.5.8", {}) is False
    assert may_name_nvidia("torch==2.5.1", installed) is False
    assert may_name_nvidia("nvidiaish==1") is False
    assert may_name_nvidia("") is False
    assert may_name_nvidia("", installed) is False


# ------------------------------------------------------------------ pin_conflicts


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason='torch\'s pin says platform_system == "Linux"'
)
def test_pin_conflicts_reports_an_installed_nvidia_version_torch_does_not_accept() -> None:
    dists = {"torch": "2.5.1", "nvidia-cudnn-cu12": "8.9.2.26"}
    requires = {"torch": ['nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"']}
    assert pin_conflicts(dists, requires) == [
        {
            "framework": "torch",
            "framework_version": "2.5.1",
            "dist": "nvidia-cudnn-cu12",
            "requires": "==9.1.0.70",
            "installed": "8.9.2.26",
            "extra": None,
        }
    ]
    assert pin_conflicts({**dists, "nvidia-cudnn-cu12": "9.1.0.70"}, requires) == []


PIN_CHILD = textwrap.dedent(
    """
    import json, sys
    from compat.probes.frameworks import pin_conflicts
    pin = 'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"'
    out = {"before": "packaging.requirements" in sys.modules}
    out["no_nvidia"] = pin_conflicts({"torch": "2.5.1"}, {"torch": [pin]})
    out["not_named"] = pin_conflicts(
        {"torch": "2.5.1", "nvidia-cublas-cu12": "12.4.5.8"}, {"torch": [pin, "filelock", "sympy==1.13.1"]}
    )
    out["after"] = "packaging.requirements" in sys.modules
    out["conflict"] = pin_conflicts({"torch": "2.5.1", "nvidia-cudnn-cu12": "8.9.2.26"}, {"torch": [pin]})
    out["then"] = "packaging.requirements" in sys.modules
    print(json.dumps(out))
    """
)


def test_pin_conflicts_does_not_import_packaging_when_nothing_can_conflict() -> None:
    res = subprocess.run(
        [sys.executable, "-c", PIN_CHILD],
        capture_output=True,
        text=True,
        timeout=60,
        env=CHILD_ENV,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out["no_nvidia"] == [] and out["not_named"] == []
    assert out["before"] is False and out["after"] is False
    assert out["then"] is True  # a line naming an installed nvidia-* distribution does need the parser
    assert len(out["conflict"]) == (1 if sys.platform.startswith("linux") else 0)


# ------------------------------------------------------------------ the command line's exit

CHECK = ["check", "--torch", "2.5.1", "--gpu", "RTX 4090", "--python", "3.11", "--json"]


@pytest.mark.parametrize(("driver", "code"), [("550.54.15", 0), ("520.61.05", 1)])
def test_the_command_line_exit_writes_the_whole_report(tmp_path: Path, driver: str, code: int) -> None:
    argv = [*CHECK, "--driver", driver]
    runs = {
        "module": [sys.executable, "-m", "compat", *argv],  # main(): argv is None, leaves through _exit_now
        "main": [sys.executable, "-c", "import sys; from compat.cli import main; main(sys.argv[1:])", *argv],
    }
    out: dict[str, tuple[int, str]] = {}
    for how, cmd in runs.items():
        path = tmp_path / f"{how}.json"
        with open(path, "w") as f:
            res = subprocess.run(
                cmd,
                stdout=f,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                env=CHILD_ENV,
                cwd=tmp_path,
                check=False,
            )
        out[how] = (res.returncode, path.read_text())
        assert res.returncode == code, (how, res.stderr[-2000:])
        doc = json.loads(out[how][1])
        assert doc["facts"]["driver"]["raw"] == driver
        assert ("driver.cuda" in [f["id"] for f in doc["findings"]]) is (code == 1)
    assert out["module"] == out["main"]


EXIT_CHILD = textwrap.dedent(
    """
    import atexit, sys, threading
    import compat.cli
    from compat.cli import _exit_now
    compat.cli._is_the_program = lambda: True  # started with -c here; as if `python -m compat`
    marker = sys.argv[1]
    def bye():
        sys.stdout.write("atexit-ran\\n")
        with open(marker, "w") as fh:
            fh.write("ran")
    atexit.register(bye)
    if sys.argv[2] == "thread":
        stop = threading.Event()
        t = threading.Thread(target=stop.wait, args=(0.5,))
        t.start()
    sys.stdout.write("x" * 200000 + "\\n")
    sys.stderr.write("to stderr\\n")
    _exit_now(3)
    sys.stdout.write("returned\\n")
    sys.exit(5)
    """
)


@pytest.mark.parametrize("case", ["plain", "thread"])
def test_exit_now_flushes_runs_atexit_and_exits_with_the_code(tmp_path: Path, case: str) -> None:
    marker = tmp_path / "marker"
    res = subprocess.run(
        [sys.executable, "-c", EXIT_CHILD, str(marker), case],
        capture_output=True,
        text=True,
        timeout=60,
        env=CHILD_ENV,
        check=False,
    )
    lines = res.stdout.splitlines()
    assert lines[0] == "x" * 200000 and "to stderr" in res.stderr
    assert marker.read_text() == "ran"
    if case == "plain":
        assert res.returncode == 3 and lines[1:] == ["atexit-ran"]
    else:  # a non-daemon thread still at work: _exit_now returns, the normal exit follows
        assert res.returncode == 5 and lines[1:] == ["returned", "atexit-ran"]


# A sitecustomize whose object says when the interpreter tears down (module globals are cleared then).
TEARDOWN_PROBE = """
import sys
class _Probe:
    def __del__(self):
        sys.stderr.write("TEARDOWN\\n")
_probe = _Probe()
"""

AFTER_RUNPY = """
import runpy, sys
sys.argv = ["compat", "--help"]
try:
    runpy.run_module("compat", run_name="__main__")
finally:
    sys.stderr.write("CALLER-FINALLY\\n")
"""


def test_only_compat_as_the_whole_program_skips_the_teardown(tmp_path: Path) -> None:
    """`python -m compat` leaves through os._exit (no teardown); compat run by other code through runpy (IPython's
    %run -m, a harness) raises SystemExit as before, so the caller's own code still runs."""
    (tmp_path / "sitecustomize.py").write_text(TEARDOWN_PROBE)
    env = {**CHILD_ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{CHILD_ENV['PYTHONPATH']}"}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=60, env=env, check=False
        )

    alone = run("-m", "compat", "--help")
    assert alone.returncode == 0 and "Usage" in alone.stdout
    assert "TEARDOWN" not in alone.stderr
    hosted = run("-c", AFTER_RUNPY)
    assert hosted.returncode == 0 and "Usage" in hosted.stdout
    assert "CALLER-FINALLY" in hosted.stderr and "TEARDOWN" in hosted.stderr


CALLS_MAIN = """
import sys
sys.argv = ["compat", "--help"]
from compat.cli import main
try:
    main()
except SystemExit:
    sys.stderr.write("CAUGHT\\n")
sys.stderr.write("AFTER\\n")
"""


def test_another_programs_dash_m_keeps_its_code_after_compat(tmp_path: Path) -> None:
    """`python -m otherprogram` (pytest, a wrapper) that calls compat's main() gets SystemExit, not os._exit."""
    (tmp_path / "callsmain.py").write_text(CALLS_MAIN)
    env = {**CHILD_ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{CHILD_ENV['PYTHONPATH']}"}
    res = subprocess.run(
        [sys.executable, "-m", "callsmain"], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert res.returncode == 0 and "Usage" in res.stdout
    assert "CAUGHT" in res.stderr and "AFTER" in res.stderr
