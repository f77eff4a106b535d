"""Cheap facts from installed distributions (importlib.metadata): nothing is imported or initialised."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Optional

from compat.distributions import CPU_ONLY, providing
from compat.errors import InputError
from compat.facts import Fact, Facts, host_os, host_python, make_fact, missing

FRAMEWORKS = {
    "torch": "torch",
    "tensorflow": "tensorflow",
    "tensorflow-cpu": "tensorflow",
    "tf-nightly": "tensorflow",
    "jax": "jax",
    "jaxlib": "jaxlib",
}


def requires(dist_name: str) -> list[str]:
    from importlib import metadata  # ~15 ms (the email parser): imported where it is used

    try:
        return list(metadata.requires(dist_name) or [])
    except metadata.PackageNotFoundError:
        return []


_NAME_RE = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(requirement: str) -> Optional[str]:
    """The PEP 503 name a Requires-Dist line starts with, read without packaging's parser (None: no name)."""
    m = _NAME_RE.match(requirement)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else None


def may_name_nvidia(requirement: str, installed: Optional[Mapping[str, str]] = None) -> bool:
    """Whether a Requires-Dist line names an `nvidia-*` distribution (and, given `installed`, one installed): a
    cheap test before packaging's parser, which costs ~16 ms to import."""
    name = requirement_name(requirement)
    return name is not None and name.startswith("nvidia-") and (installed is None or name in installed)


def _may_pin(line: str, extra: Optional[str]) -> bool:
    """A cheap superset of the lines nvidia_pins keeps: an nvidia-* name, "==" before the marker, and an extra
    in the marker exactly when one is asked for."""
    head, _, marker = line.partition(";")
    if "==" not in head or ("extra" in marker) != (extra is not None):
        return False
    return may_name_nvidia(line)


def nvidia_pins(reqs: Iterable[str], extra: Optional[str] = None) -> dict[str, str]:
    """`nvidia-*==X` pins among Requires-Dist lines (optionally only those of one extra).

    Read with packaging's Requirement, whose marker text comes back normalised (double quotes, extra names as
    PEP 685 writes them), so `extra == 'and_cuda'` is the and-cuda extra. Platform clauses are not evaluated:
    the pins say what the wheel was built against, whichever machine reads them.
    """
    reqs = [line for line in reqs if _may_pin(line, extra)]
    if not reqs:  # packaging's parser (~16 ms to import) only for lines that can be such a pin
        return {}
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    want = f'extra == "{canonicalize_name(extra)}"' if extra is not None else None
    out: dict[str, str] = {}
    for line in reqs:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        specs = list(req.specifier)
        if not name.startswith("nvidia-") or len(specs) != 1 or specs[0].operator != "==":
            continue
        version = specs[0].version
        if "*" in version or not version[:1].isdigit():
            continue
        marker = str(req.marker) if req.marker is not None else ""
        if (want is None and "extra" in marker) or (want is not None and want not in marker):
            continue
        out[name] = version
    return out


def cuda_from_pins(pins: Mapping[str, str]) -> Optional[str]:
    for key in (
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-runtime-cu13",
        "nvidia-cuda-runtime",
    ):
        if key in pins:
            parts = pins[key].split(".")
            return ".".join(parts[:2])
    return None


def cudnn_from_pins(pins: Mapping[str, str]) -> Optional[str]:
    for key, val in pins.items():
        if key.startswith("nvidia-cudnn"):
            return val
    return None


def _installed_version(name: str) -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


WATCHED = (
    "torch",
    "tensorflow",
    "tensorflow-cpu",
    "tf-nightly",
    "jax",
    "jaxlib",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
)


def watched_distributions() -> dict[str, str]:
    """Only the distributions compat reasons about: far cheaper than scanning every installed one."""
    from importlib import metadata

    out: dict[str, str] = {}
    for name in WATCHED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def installer_of(names: Iterable[str]) -> Optional[tuple[str, str]]:
    """(installer, distribution) from the first installed distribution's INSTALLER file (PEP 376/627: "pip",
    "uv", "conda"), or None when none says."""
    from importlib import metadata

    for name in names:
        try:
            text = metadata.distribution(name).read_text("INSTALLER")
        except (metadata.PackageNotFoundError, OSError):
            continue
        tool = (text or "").strip().lower()
        if tool in ("pip", "uv", "conda"):
            return tool, name
    return None


def _fact(name: str, raw: Optional[str], source: str) -> Fact:
    """make_fact, but installed metadata that does not parse ("Version: UNKNOWN") is a missing fact, not an error."""
    try:
        return make_fact(name, raw, source)
    except InputError as exc:
        return missing(source, f"{source}: {exc}")


def jax_from_distributions(dists: Mapping[str, str]) -> str | None:
    """The `jax` fact of an environment: "0.10.2+cuda12" with the jax-cuda12-plugin installed, "0.4.20+cuda12"
    for a monolithic jaxlib+cuda12 build, plain "0.10.2" for the CPU-only install."""
    ver = dists.get("jax")
    if not ver:
        return None
    for major in (13, 12, 11):
        if dists.get(f"jax-cuda{major}-plugin") or dists.get(f"jax_cuda{major}_plugin"):
            return f"{ver}+cuda{major}"
    jl = str(dists.get("jaxlib") or "")
    if "+cuda" in jl:
        label = jl.split("+cuda", 1)[1]
        digits = "".join(c for c in label.split(".")[0] if c.isdigit())
        if digits[:2].isdigit() and len(digits) >= 2:
            return f"{ver}+cuda{digits[:2]}"
    return str(ver)


def installed_facts(
    dists: Optional[Mapping[str, str]] = None, reqs: Optional[Mapping[str, list[str]]] = None
) -> Facts:
    """OS, Python and the framework versions installed here, with the CUDA/cuDNN their pins imply."""
    d = watched_distributions() if dists is None else dists
    values: dict[str, Fact] = {
        "os": make_fact("os", host_os(), "this machine"),
        "python": make_fact("python", host_python(), "sys.version"),
    }

    def req(name: str) -> list[str]:
        return reqs.get(name, []) if reqs is not None else requires(name)

    if "torch" in d:
        values["torch"] = _fact("torch", d["torch"], "installed distribution torch")
        pins = nvidia_pins(req("torch"))
        cu = cuda_from_pins(pins)
        if cu:
            values["torch_cuda"] = _fact("torch_cuda", cu, "torch's nvidia-cuda-runtime pin")
            values["torch_build"] = make_fact("torch_build", "cuda", "torch's nvidia-* pins")
        dn = cudnn_from_pins(pins)
        if dn:
            values["torch_cudnn"] = _fact("torch_cudnn", dn, "torch's nvidia-cudnn pin")
    tf_name = next((n for n in providing("tensorflow") if n in d), None)
    if tf_name:
        values["tensorflow"] = _fact("tensorflow", d[tf_name], f"installed distribution {tf_name}")
        if tf_name in CPU_ONLY:
            values["tf_build"] = make_fact("tf_build", "cpu", f"installed distribution {tf_name}")
        # [and-cuda] is installed when the extra's nvidia-* pins are all present at their pinned versions.
        extra = nvidia_pins(req(tf_name), extra="and-cuda")
        if extra:
            have = all(_installed_version(n) == v for n, v in extra.items())
            values["tf_and_cuda"] = make_fact(
                "tf_and_cuda", "true" if have else "false", f"{tf_name}[and-cuda] requirements"
            )
    jx = jax_from_distributions(d)
    if jx is not None:
        values["jax"] = _fact("jax", jx, "installed distributions jax (and jax-cudaNN-plugin)")
        if d.get("jaxlib"):
            values["jaxlib"] = _fact("jaxlib", d["jaxlib"], "installed distribution jaxlib")
    found = installer_of(("torch", tf_name or "tensorflow", "compat")) if dists is None else None
    if found is not None:
        values["installer"] = make_fact("installer", found[0], f"{found[1]}'s INSTALLER file")
    return Facts(values=values)
