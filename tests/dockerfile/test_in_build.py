"""`RUN compat check --target-driver V` inside `docker build`: facts from installed distributions only.

At build time there is no GPU, so compat reads what pip installed (importlib.metadata), never importing
torch. These tests inject the distributions: a fake site-packages on sys.path, and compat.installed's
seams.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

TORCH_REQS = [
    "filelock",
    'nvidia-cuda-runtime-cu12==12.1.105; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cudnn-cu12==8.9.2.26; platform_system == "Linux" and platform_machine == "x86_64"',
]


def fake_site_packages(root: Path, name: str, version: str, requires: list[str]) -> Path:
    """A dist-info directory as pip leaves it (METADATA with Requires-Dist), nothing importable."""
    sp = root / "site-packages"
    info = sp / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sp


def only(monkeypatch: pytest.MonkeyPatch, sp: Path) -> None:
    """compat.installed sees the fake site-packages and nothing else of this interpreter."""
    from importlib import metadata

    original = metadata.distributions

    def dists() -> Any:
        return original(path=[str(sp)])

    def requires(name: str) -> list[str]:
        for d in original(path=[str(sp)]):
            if d.metadata["Name"] == name:
                return list(d.requires or [])
        raise metadata.PackageNotFoundError(name)

    def version(name: str) -> str:
        for d in original(path=[str(sp)]):
            if d.metadata["Name"] == name:
                return str(d.version)
        raise metadata.PackageNotFoundError(name)

    # compat.installed imports importlib.metadata where it uses it (start-up time): patch the module itself.
    monkeypatch.setattr(metadata, "distributions", dists)
    monkeypatch.setattr(metadata, "requires", requires)
    monkeypatch.setattr(metadata, "version", version)


def test_installed_facts_read_pins_without_importing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compat.installed import installed_facts

    sp = fake_site_packages(tmp_path, "torch", "2.1.1", TORCH_REQS)
    only(monkeypatch, sp)
    facts = installed_facts()
    assert facts.get("torch").raw == "2.1.1"  # type: ignore[union-attr]
    assert facts.get("torch_cuda").raw == "12.1"  # type: ignore[union-attr]
    assert facts.get("torch_cudnn").raw == "8.9.2.26"  # type: ignore[union-attr]
    assert "torch" not in sys.modules or not hasattr(sys.modules.get("torch"), "cuda")


def test_check_target_driver_too_old_fails_the_build(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dmatrix: Any
) -> None:
    sp = fake_site_packages(tmp_path, "torch", "2.1.1", TORCH_REQS)
    only(monkeypatch, sp)
    r = run("check", "--target-driver", "470.82.01", "--json", "--matrix", str(dmatrix.directory))
    assert r.code == 1, r.err
    doc = json.loads(r.out)
    drv = [f for f in doc["findings"] if f["id"] == "driver.cuda"]
    assert drv and drv[0]["severity"] == "error"
    assert doc["facts"]["driver"]["raw"] == "470.82.01"
    assert doc["facts"]["torch_cuda"]["raw"] == "12.1"


def test_check_target_driver_new_enough_passes(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dmatrix: Any
) -> None:
    sp = fake_site_packages(tmp_path, "torch", "2.1.1", TORCH_REQS)
    only(monkeypatch, sp)
    # --python: torch 2.1.1 has no wheels for the newest Pythons the tests run on (a finding of its own)
    r = run(
        "check",
        "--target-driver",
        "535.104.05",
        "--python",
        "3.11",
        "--json",
        "--matrix",
        str(dmatrix.directory),
    )
    assert r.code == 0, (r.out, r.err)
    assert not [
        f for f in json.loads(r.out)["findings"] if f["id"] == "driver.cuda" and f["severity"] == "error"
    ]


def test_injected_distributions_cpu_tensorflow(dmatrix: Any) -> None:
    from compat.facts import apply_flags
    from compat.installed import installed_facts
    from compat.resolver import resolve

    facts = installed_facts(dists={"tensorflow-cpu": "2.15.0"}, reqs={})
    facts = apply_flags(facts, {"driver": "535.104.05", "cc": "8.6"})
    rep = resolve(facts, dmatrix, require_gpu=True)
    assert any(f.id == "framework.cpu-build" for f in rep.findings)
