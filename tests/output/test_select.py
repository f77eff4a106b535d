"""`--select` / `--ignore` (finding-id prefixes, repeatable and comma-separated) on every command that reports
findings, and the same lists, `fail-on` and `format` in `[tool.compat]` of the nearest pyproject.toml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.output.conftest import DOCKERFILE, FLEET, SNAPSHOT

WARN = [
    "check",
    "--driver",
    "550.54.15",
    "--torch",
    "2.7.0",
    "--gpu",
    "RTX 4090",
    "--python",
    "3.11",
    "--os",
    "linux",
]
"""A stack with a driver.cuda warning (CUDA minor-version compatibility) and a torch.variant note."""


def ids(out: str) -> list[str]:
    return [f["id"] for f in json.loads(out)["findings"]]


def test_ignore_drops_findings_and_the_verdict_and_exit_follow(run: Any) -> None:
    full = run("check", "--snapshot", str(SNAPSHOT), "--json")
    assert full.code == 1 and "driver.cuda" in ids(full.out)
    r = run("check", "--snapshot", str(SNAPSHOT), "--json", "--ignore", "driver")
    assert r.code == 0
    doc = json.loads(r.out)
    assert "driver.cuda" not in ids(r.out) and doc["verdict"] != "error"


def test_select_keeps_only_matching_prefixes_repeatable_and_comma_separated(run: Any) -> None:
    assert sorted(ids(run(*WARN, "--json").out)) == ["driver.cuda", "torch.variant"]
    assert ids(run(*WARN, "--json", "--select", "torch").out) == ["torch.variant"]
    assert sorted(ids(run(*WARN, "--json", "--select", "torch,driver.cuda").out)) == [
        "driver.cuda",
        "torch.variant",
    ]
    assert sorted(ids(run(*WARN, "--json", "--select", "torch", "--select", "driver").out)) == [
        "driver.cuda",
        "torch.variant",
    ]
    # A prefix matches whole dotted parts only: "torch.var" is not "torch.variant".
    assert ids(run(*WARN, "--json", "--select", "torch.var").out) == []
    assert ids(run(*WARN, "--json", "--select", "driver", "--ignore", "driver.cuda").out) == []


def test_fail_on_warning_and_selection_together(run: Any) -> None:
    assert run(*WARN, "--fail-on", "warning").code == 1
    assert run(*WARN, "--fail-on", "warning", "--ignore", "driver.cuda").code == 0


def test_dockerfile_select(run: Any) -> None:
    full = ids(run("dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--json").out)
    assert any(i.startswith("dockerfile.") for i in full) and "driver.cuda" in full
    only = ids(
        run(
            "dockerfile", str(DOCKERFILE), "--target-driver", "470.82.01", "--json", "--select", "dockerfile"
        ).out
    )
    assert only and all(i.startswith("dockerfile.") for i in only)
    assert len(only) == sum(1 for i in full if i.startswith("dockerfile."))


def test_explain_select_by_category_or_explain_id(run: Any, gpu_oom_log: str) -> None:
    base = json.loads(run("explain", gpu_oom_log, "--json").out)
    assert base["diagnoses"][0]["category"] == "gpu_oom"
    for pattern in ("gpu_oom", "explain.gpu_oom"):
        doc = json.loads(run("explain", gpu_oom_log, "--json", "--ignore", pattern).out)
        assert "gpu_oom" not in [d["category"] for d in doc["diagnoses"]], pattern
    doc = json.loads(run("explain", gpu_oom_log, "--json", "--select", "explain.gpu_oom").out)
    assert [d["category"] for d in doc["diagnoses"]] == ["gpu_oom"]
    doc = json.loads(run("explain", gpu_oom_log, "--json", "--select", "segfault").out)
    assert doc == {"schema_version": 1, "status": "nothing-found", "diagnoses": []}


def test_fleet_merge_ignore_applies_to_every_node(run: Any) -> None:
    full = json.loads(run("fleet", "merge", *FLEET, "--json").out)
    assert full["summary"]["unhealthy_gpus"] == 3 and full["summary"]["smoke_failed"] == 1
    doc = json.loads(run("fleet", "merge", *FLEET, "--json", "--ignore", "gpu.,smoke").out)
    assert doc["summary"]["unhealthy_gpus"] == 0 and doc["summary"]["nodes_with_errors"] == 0
    assert all(not n["errors"] and not n["warnings"] for n in doc["nodes"])
    assert doc["summary"]["drift"] == full["summary"]["drift"]  # drift is about facts, not findings


def test_tool_compat_in_the_nearest_pyproject(run: Any, in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.compat]\nignore = ["torch"]\nfail-on = "warning"\nformat = "json"\n',
        encoding="utf-8",
    )
    sub = in_tmp / "a" / "b"
    sub.mkdir(parents=True)
    import os

    os.chdir(sub)  # the nearest pyproject.toml is two folders up
    r = run(*WARN)
    assert ids(r.out) == ["driver.cuda"]  # format json and ignore torch from the file
    assert r.code == 1  # fail-on warning from the file
    # The command line wins, list by list.
    r = run(*WARN, "--ignore", "driver", "--format", "text", "--fail-on", "error")
    assert r.out.startswith("compat check: ") and "[torch.variant]" in r.out and "[driver.cuda]" not in r.out
    assert r.code == 0
    assert ids(run(*WARN, "--select", "driver", "--json").out) == ["driver.cuda"]


def test_a_bad_tool_compat_table_is_a_one_line_usage_error(run: Any, in_tmp: Path) -> None:
    for body, words in (
        ('[tool.compat]\nfail-on = "info"\n', "fail-on must be one of error, warning"),
        ('[tool.compat]\nformat = "html"\n', "format must be one of"),
        ("[tool.compat]\nignore = [1]\n", "ignore must be a list"),
        ("[tool.compat\n", "not valid TOML"),
    ):
        (in_tmp / "pyproject.toml").write_text(body, encoding="utf-8")
        r = run(*WARN)
        assert r.code == 2, body
        assert r.out == "" and r.err.startswith("compat: error: ") and words in r.err, (body, r.err)
        assert r.err.count("\n") == 1


def test_no_pyproject_and_other_tools_tables_change_nothing(run: Any, in_tmp: Path) -> None:
    plain = run(*WARN, "--json")
    (in_tmp / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n", encoding="utf-8")
    assert run(*WARN, "--json").out == plain.out


def test_the_selection_is_the_one_matcher_the_guard_uses() -> None:
    from compat.findings import Finding, Report
    from compat.output.options import OutputOptions, select_report
    from compat.selection import matches

    fids = [
        "driver.cuda",
        "driver.gpu-support",
        "known.torch-251-sm120",
        "gpu.xid",
        "torch.variant",
        "drivers.x",
    ]
    for ignore in (("driver",), ("known.",), ("gpu.xid", "torch"), ("driver.cuda",)):
        rep = Report([Finding(i, "warning", i, "") for i in fids], [], {}, "x")
        kept = [f.id for f in select_report(rep, OutputOptions(ignore=ignore)).findings]
        assert kept == [i for i in fids if not matches(i, ignore)], ignore
    assert not matches("drivers.x", ("driver",))


def test_a_removed_current_folder_means_no_configuration(tmp_path: Path, monkeypatch: Any) -> None:
    from compat.output.options import find_pyproject, output_options

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_pyproject() is None
    assert output_options().format == "text"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[project\nname = 'x'\n", "not valid TOML"),  # broken elsewhere: still the one-line error
        ("tool = { compat = { fail-on = 'nope' } }\n", "fail-on must be one of"),  # an inline table
        ("[[tool.compat]]\nselect = ['driver']\n", "must be a table"),
        ('["\\u0074ool".compat]\nfail-on = "nope"\n', "fail-on must be one of"),  # an escaped key
    ],
)
def test_every_toml_spelling_is_read_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    from compat.errors import InputError
    from compat.output.options import load_tool_config

    monkeypatch.setenv("COMPAT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text(text)
    for _ in range(2):  # parsed, then from the cache: the same answer
        with pytest.raises(InputError, match=why):
            load_tool_config(tmp_path)


def test_a_known_pyproject_is_not_parsed_again(tmp_path: Path) -> None:
    """The parser's outcome is kept per file content: the second run imports no TOML parser; an edit is parsed."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    (tmp_path / "pyproject.toml").write_text("[tool.compat]\nselect = ['driver']\n")
    code = (
        "import sys; from pathlib import Path; from compat.output.options import load_tool_config; "
        "print(load_tool_config(Path(sys.argv[1]))['select'], bool({'tomllib', 'tomli'} & set(sys.modules)))"
    )
    env = {"PYTHONPATH": str(ROOT), "COMPAT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}

    def run() -> str:
        out = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, timeout=60
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert run() == "('driver',) True"
    assert run() == "('driver',) False"
    (tmp_path / "pyproject.toml").write_text("[tool.compat]\nselect = ['gpu']\n")
    assert run() == "('gpu',) True"
