"""Python check: a framework release against the Python version (its published wheels)."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from compat.checks.context import Ctx, Result
from compat.checks.registry import check
from compat.findings import Finding, Fix, Repair, Skip

PYTHON_FRAMEWORK = "python.framework"


@check(PYTHON_FRAMEWORK)
def check_python(ctx: Ctx) -> Iterator[Result]:
    """4. Framework release vs Python version."""
    pairs: list[tuple[str, str, tuple[str, ...], str, list[Version]]] = []
    py = ctx.python_tag
    if ctx.torch is not None and ctx.torch.release is not None:
        pairs.append(
            (
                "PyTorch",
                ctx.torch.raw,
                ctx.torch.release.python,
                "torch",
                [r.version for r in ctx.m.torch if py and py in r.python],
            )
        )
    if ctx.tf is not None and ctx.tf.release is not None:
        pairs.append(
            (
                "TensorFlow",
                ctx.tf.raw,
                ctx.tf.release.python,
                "tensorflow",
                [r.version for r in ctx.m.tensorflow if py and py in r.python],
            )
        )
    if not pairs:
        yield Skip(
            PYTHON_FRAMEWORK,
            "no PyTorch or TensorFlow release given (JAX's Python wheels are checked by jax.python)"
            if ctx.facts.get("jax") is not None
            else "no known framework release given (--torch, --tensorflow)",
        )
        return
    if py is None:
        yield Skip(PYTHON_FRAMEWORK, ctx.facts.reason("python") or "no Python version (give --python)")
        return
    for name, raw, supported, pkg, ok_versions in pairs:
        if py in supported:
            continue
        del ok_versions
        finding = Finding(
            PYTHON_FRAMEWORK,
            "error",
            f"{name} {raw} has no wheels for Python {py}",
            f"{name} {raw} publishes wheels for Python {', '.join(supported)}; pip on Python {py} fails with "
            f"'No matching distribution found for {pkg}=={Version(raw).public}'.",
            # The manual advice only when no re-checked fix changes the Python.
            (Fix(f"Use a Python {name} {raw} has wheels for: {', '.join(supported)}"),),
            {"python": py, pkg: raw},
            group="frameworks",
            repair=Repair((pkg, "python"), unless_axis="python"),
        )
        yield finding
