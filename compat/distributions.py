"""The one table of framework distributions: which pip distribution provides which framework.

Read by the framework probe (which child mode imports a distribution), the smoke job (which distributions
provide the module it trains with), the installed-distribution facts and the Dockerfile reader. The framework
child script (probes/_framework_child.py) runs in another interpreter without compat and gets the list on its
command line.
"""

from __future__ import annotations

DISTRIBUTIONS: dict[str, str] = {
    "torch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "tensorflow-gpu": "tensorflow",
    "tensorflow-macos": "tensorflow",
    "tensorflow-intel": "tensorflow",
    "intel-tensorflow": "tensorflow",
    "tf-nightly": "tensorflow",
    "tf-nightly-gpu": "tensorflow",
    "tf-nightly-cpu": "tensorflow",
    "jax": "jax",
}
"""Distribution -> the framework (importable module) it provides."""

SUPPORT: dict[str, str] = {"jaxlib": "jax"}
"""Distributions that belong to a framework without providing its module."""

CPU_ONLY = frozenset({"tensorflow-cpu", "tf-nightly-cpu"})
"""Distributions built without CUDA."""

ALIASES: dict[str, str] = {"pytorch": "torch"}
"""Names written in requirements and Dockerfiles that mean a framework without being its distribution."""


def providing(framework: str) -> tuple[str, ...]:
    """The distributions that provide `framework`'s module, the canonical one first."""
    return tuple(d for d, f in DISTRIBUTIONS.items() if f == framework)
