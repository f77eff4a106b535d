"""Real virtual environments for the interpreter rule's tests: made with `python -m venv --without-pip` (tens of
milliseconds), compat put on their path by a .pth file (the checkout, and a copy of this interpreter's
site-packages with every framework left out), a framework faked by its dist-info alone."""

from __future__ import annotations

import os
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORK_PREFIXES = ("torch", "tensorflow", "tf_", "tf-", "jax", "nvidia", "triton", "keras", "tensorboard")
_ENTRY_POINT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from compat.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


def site_packages(env: Path) -> Path:
    v = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / v / "site-packages"


def dependencies(where: Path) -> Path:
    """A folder of links to this interpreter's installed packages but the frameworks and compat itself: what
    compat needs to run (typer, rich, ...) without a framework coming along."""
    where.mkdir(parents=True, exist_ok=True)
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        name = entry.name.lower()
        if name.startswith(FRAMEWORK_PREFIXES) or name.endswith(".pth") or "compat" in name:
            continue
        if name.startswith("__editable__") or name == "__pycache__":
            continue
        link = where / entry.name
        if not link.exists():
            link.symlink_to(entry)
    return where


def make_env(
    root: Path, *, deps: Path | None = None, frameworks: dict[str, str] | None = None, modules: bool = False
) -> Path:
    """A virtual environment at `root`: with compat (and its console script) when `deps` is given, with the
    named distributions' metadata (e.g. {"torch": "2.13.0"}) and, with `modules`, a module of that name whose
    import fails at once (a framework the smoke job finds and cannot train with); its python."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(root)
    sp = site_packages(root)
    if deps is not None:
        (sp / "compat_checkout.pth").write_text(f"{ROOT}\n{deps}\n", encoding="utf-8")
        script = root / "bin" / "compat"
        script.write_text(_ENTRY_POINT.format(python=root / "bin" / "python"), encoding="utf-8")
        script.chmod(0o755)
    for dist, version in (frameworks or {}).items():
        info = sp / f"{dist}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
        )
        if modules:
            (sp / dist).mkdir()
            (sp / dist / "__init__.py").write_text(
                f'raise ImportError("a fake {dist} for compat\'s tests")\n', encoding="utf-8"
            )
    return root / "bin" / "python"


def clean_env(path_first: Path | None = None, *, activate: Path | None = None) -> dict[str, str]:
    """os.environ with no environment active and compat importable only through a venv's .pth; `path_first`
    leads PATH, `activate` (a venv's root) is activated as its `activate` script would."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME", "_COMPAT_TARGET")
    }
    env["NO_COLOR"] = "1"
    first = [str(p) for p in (activate / "bin" if activate else None, path_first) if p is not None]
    env["PATH"] = os.pathsep.join([*first, env.get("PATH", os.defpath)])
    if activate is not None:
        env["VIRTUAL_ENV"] = str(activate)
    return env
