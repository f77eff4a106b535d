"""`compat matrix jax V` and the JAX answer of `compat suggest`."""

from __future__ import annotations

import json
from typing import Any


def test_matrix_jax_row(run: Any) -> None:
    r = run("matrix", "jax", "0.10.2", "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["version"] == "0.10.2"
    assert doc["python"] == ["3.11", "3.12", "3.13", "3.14"]
    majors = {b["major"]: b for b in doc["cuda"]}
    assert majors[13]["cc_min"] == "7.5" and majors[12]["cc_min"] == "5.2"
    assert majors[12]["cudnn"] == "<10.0,>=9.8"


def test_matrix_jax_unknown_is_exit_2_with_the_nearest(run: Any) -> None:
    r = run("matrix", "jax", "0.99.1")
    assert r.code == 2
    assert r.err.count("\n") == 1
    assert "no jax '0.99.1'" in r.err and "nearest" in r.err


def test_suggest_answers_for_jax(run: Any) -> None:
    r = run(
        "suggest",
        "--no-probe",
        "--os",
        "linux",
        "--driver",
        "550.54.15",
        "--gpu",
        "RTX 4090",
        "--python",
        "3.12",
        "--json",
    )
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    # Driver 550 (CUDA 12.4) cannot run JAX's CUDA 13 build (>= 580 per JAX's page): the cuda12 build.
    assert doc["jax"]["variant"] == "cuda12"
    assert doc["jax"]["command"].startswith('pip install -U "jax[cuda12]==')
    assert doc["jax"]["changes"]["jax"].endswith("+cuda12")
    new = run(
        "suggest",
        "--no-probe",
        "--os",
        "linux",
        "--driver",
        "580.65.06",
        "--gpu",
        "H100",
        "--python",
        "3.12",
        "--json",
    )
    assert json.loads(new.out)["jax"]["variant"] == "cuda13"


def test_suggest_jax_on_native_windows_is_unavailable(run: Any) -> None:
    r = run(
        "suggest",
        "--no-probe",
        "--os",
        "windows",
        "--driver",
        "560.94",
        "--gpu",
        "RTX 4090",
        "--python",
        "3.12",
        "--json",
    )
    doc = json.loads(r.out)
    assert doc["jax"] is None
    assert "native Windows" in doc["unavailable"]["jax"]


def test_check_jax_flag(run: Any) -> None:
    r = run(
        "check",
        "--jax",
        "0.10.2+cuda13",
        "--driver",
        "550.54.15",
        "--gpu",
        "RTX 4090",
        "--python",
        "3.12",
        "--os",
        "linux",
        "--json",
    )
    assert r.code == 1, r.err
    doc = json.loads(r.out)
    ids = [f["id"] for f in doc["findings"] if f["severity"] == "error"]
    assert ids == ["jax.driver"]
    assert doc["facts"]["jax"]["raw"] == "0.10.2+cuda13"
    ok = run(
        "check",
        "--jax",
        "0.10.2+cuda12",
        "--driver",
        "550.54.15",
        "--gpu",
        "RTX 4090",
        "--python",
        "3.12",
        "--os",
        "linux",
    )
    assert ok.code == 0, ok.out


def test_check_without_jax_says_nothing_about_jax(run: Any) -> None:
    r = run(
        "check", "--torch", "2.6.0", "--driver", "550.54.15", "--python", "3.12", "--os", "linux", "--json"
    )
    doc = json.loads(r.out)
    assert not any(x["id"].startswith("jax.") for x in doc["findings"] + doc["skipped"])


def test_bad_jax_value_is_one_line_exit_2(run: Any) -> None:
    r = run("check", "--jax", "0.10.2+rocm6")
    assert r.code == 2
    assert r.err.count("\n") == 1 and "JAX" in r.err


def test_override_variable(run: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("COMPAT_OVERRIDE_JAX", "0.6.2+cuda13")
    r = run("check", "--python", "3.11", "--os", "linux", "--json")
    assert r.code == 1
    assert [f["id"] for f in json.loads(r.out)["findings"]] == ["jax.cuda-build"]
