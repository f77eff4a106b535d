"""The PyTorch index URL is written in one place (compat/installcmd.py): the signature catalogue points at
`compat suggest` (re-checked) instead of a fixed index, and no other module builds a framework install command."""

from __future__ import annotations


def test_no_framework_install_command_is_built_outside_the_solver() -> None:
    # the `pip install torch==… --index-url …` fix was once built in about five places; the signature
    # catalogue now points at `compat suggest` (re-checked) instead of a fixed index.
    from tests.conftest import ROOT

    text = (ROOT / "matrix" / "signatures.yaml").read_text(encoding="utf-8")
    assert "download.pytorch.org" not in text
    for path in (ROOT / "compat").rglob("*.py"):
        if path.name == "installcmd.py":  # the one place that writes install commands
            continue
        assert "download.pytorch.org" not in path.read_text(encoding="utf-8"), path
