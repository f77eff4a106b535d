"""`compat check`: no vacuous OK, the GPU's compute capability from the matrix, and the in-build check's GPU."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True)
def _no_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for k in list(os.environ):
        if k.startswith("COMPAT_OVERRIDE_"):
            monkeypatch.delenv(k)


@pytest.mark.parametrize("args", [(), ("--os", "linux"), ("--require-gpu",), ("--json",)])
def test_check_without_facts_is_a_usage_error(run, args) -> None:  # type: ignore[no-untyped-def]
    r = run("check", *args)
    assert r.code == 2
    assert r.out == ""
    assert r.err.startswith("compat: error: nothing to check: give at least one of --driver")
    assert r.err.count("\n") == 1


def test_an_override_is_a_fact(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMPAT_OVERRIDE_DRIVER", "535.104.05")
    r = run("check", "--json")
    assert r.code == 0
    assert json.loads(r.out)["facts"]["driver"]["raw"] == "535.104.05"


def test_named_gpu_gets_its_cc_from_the_matrix(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", "A100", "--driver", "535.104.05", "--os", "linux")
    assert r.code == 0
    assert "gpu A100 (cc 8.0, from the matrix)" in r.out
    doc = json.loads(run("check", "--gpu", "A100", "--driver", "535.104.05", "--os", "linux", "--json").out)
    (g,) = doc["facts"]["gpus"]
    assert g["cc"] == "8.0" and g["cc_source"] == "matrix" and g["source"] == "--gpu"


def test_lenient_name_gets_the_cc_too(run) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("check", "--gpu", "rtx4090", "--os", "linux", "--json").out)
    assert doc["facts"]["gpus"][0]["cc"] == "8.9"


def test_given_cc_is_kept_and_not_attributed_to_the_matrix(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", "A100", "--cc", "8.0", "--os", "linux", "--json")
    assert r.code == 0
    (g,) = json.loads(r.out)["facts"]["gpus"]
    assert g["cc"] == "8.0" and "cc_source" not in g


def test_gpu_and_cc_that_disagree_are_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", "A100", "--cc", "9.0", "--os", "linux")
    assert r.code == 2 and r.out == ""
    assert "compute capability 8.0" in r.err and "--cc is 9.0" in r.err


def test_unknown_gpu_with_cc_is_still_accepted(run) -> None:  # type: ignore[no-untyped-def]
    r = run("check", "--gpu", "Imaginary X1", "--cc", "8.6", "--os", "linux", "--json")
    assert r.code == 0
    assert json.loads(r.out)["facts"]["gpus"][0]["cc"] == "8.6"


def test_target_driver_requires_a_gpu(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Inside `docker build`, a CPU-only torch in an image meant for driver V is an error, not OK."""
    import compat.installed as inst

    real = inst.installed_facts

    def cpu_torch() -> object:
        return real(dists={"torch": "2.5.1+cpu"}, reqs={"torch": []})

    monkeypatch.setattr(inst, "installed_facts", cpu_torch)
    r = run("check", "--target-driver", "550.54.14", "--json")
    doc = json.loads(r.out)
    ids = {f["id"]: f["severity"] for f in doc["findings"]}
    assert r.code == 1, doc
    assert ids.get("framework.cpu-build") == "error"


def test_os_help_lists_what_validation_accepts(run) -> None:  # type: ignore[no-untyped-def]
    from compat.facts import OS_NAMES

    out = run("check", "--help").out
    for name in OS_NAMES:
        assert name in out
    assert run("check", "--os", "macos", "--cuda", "12.1").code == 0


@pytest.mark.parametrize(("name", "cc"), [("RTX 2080 SUPER", "7.5"), ("GeForce RTX 4080 SUPER", "8.9")])
def test_super_cards_with_a_driver_reported_cc(run, name: str, cc: str) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run("check", "--gpu", name, "--os", "linux", "--json").out)
    assert doc["facts"]["gpus"][0]["cc"] == cc
