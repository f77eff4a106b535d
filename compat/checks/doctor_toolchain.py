"""Doctor checks on the build toolchain and on the trustworthiness of what the driver answered (issue 18).

- driver.nvml-garbage: NVML answered values no working driver returns (compat.probes.sanity).
- toolkit.nvcc-broken: `nvcc` on PATH hung, crashed or printed something else; the CUDA version then came from
  another toolkit, which is said instead of silently used.
- toolkit.torch-mismatch: the local toolkit's CUDA major differs from the installed torch's: torch.utils.cpp_extension
  refuses to build extensions (RuntimeError "The detected CUDA version (X) mismatches the version that was used to
  compile PyTorch (Y)"); a minor difference only warns there.
- toolkit.host-compiler: the host C++ compiler is outside the range the local toolkit accepts (nvcc's
  crt/host_config.h stops with "unsupported GNU version"; torch.utils.cpp_extension checks the same bounds).

Each is registered in compat.checks.registry for the doctor entry point and reads only Facts (probes), so a saved
snapshot reproduces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Union

from compat.checks.registry import REGISTRY, CheckSpec, check, ordered
from compat.findings import Finding, Fix, Skip
from compat.probes.model import NvmlState, Toolchain, Toolkits

if TYPE_CHECKING:
    from compat.checks.context import Ctx

NVML_GARBAGE = "driver.nvml-garbage"
NVCC_BROKEN = "toolkit.nvcc-broken"
TORCH_MISMATCH = "toolkit.torch-mismatch"
HOST_COMPILER = "toolkit.host-compiler"

Result = Union[Finding, Skip]

# Host compiler bounds per CUDA release: [min, max) as (major, minor[, patch]). Source: PyTorch's own table, which
# torch.utils.cpp_extension enforces for extension builds and which its comment derives from the CUDA installation
# guide and include/crt/host_config.h: https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/cpp_extension.py
# (CUDA_GCC_VERSIONS, CUDA_CLANG_VERSIONS; torch 2.13.0, git cf30153c4c131c8164ee7798e5022d810682e2cb).
# A release not listed is unknown: the check skips with that reason.
_GCC5 = (5, 0, 0)
_GCC6 = (6, 0, 0)
_CLANG33 = (3, 3, 0)
HOST_COMPILER_BOUNDS: dict[str, dict[str, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    "gcc": {
        "11.0": (_GCC5, (10, 0)),
        "11.1": (_GCC5, (11, 0)),
        "11.2": (_GCC5, (11, 0)),
        "11.3": (_GCC5, (11, 0)),
        "11.4": (_GCC6, (12, 0)),
        "11.5": (_GCC6, (12, 0)),
        "11.6": (_GCC6, (12, 0)),
        "11.7": (_GCC6, (12, 0)),
        "12.0": (_GCC6, (13, 0)),
        "12.1": (_GCC6, (13, 0)),
        "12.2": (_GCC6, (13, 0)),
        "12.3": (_GCC6, (14, 0)),
        "12.4": (_GCC6, (14, 0)),
        "12.5": (_GCC6, (14, 0)),
        "12.6": (_GCC6, (14, 0)),
        "12.7": (_GCC6, (14, 0)),
        "12.8": (_GCC6, (15, 0)),
        "12.9": (_GCC6, (15, 0)),
        "13.0": (_GCC6, (16, 0)),
    },
    "clang": {
        "11.1": (_CLANG33, (11, 0)),
        "11.2": (_CLANG33, (12, 0)),
        "11.3": (_CLANG33, (12, 0)),
        "11.4": (_CLANG33, (13, 0)),
        "11.5": (_CLANG33, (13, 0)),
        "11.6": (_CLANG33, (14, 0)),
        "11.7": (_CLANG33, (14, 0)),
        "12.0": ((7, 0), (15, 0)),
        "12.1": ((7, 0), (15, 0)),
        "12.2": ((7, 0), (16, 0)),
        "12.3": ((7, 0), (16, 0)),
        "12.4": ((7, 0), (17, 0)),
        "12.5": ((7, 0), (18, 0)),
        "12.6": ((7, 0), (18, 0)),
        "12.7": ((7, 0), (19, 0)),
        "12.8": ((7, 0), (19, 0)),
        "12.9": ((7, 0), (19, 0)),
        "13.0": ((7, 0), (21, 0)),
    },
}
HOST_COMPILER_SOURCE = "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/cpp_extension.py"


def _toolkits(ctx: Ctx) -> Toolkits | None:
    t = ctx.probes.toolkits
    return t if isinstance(t, Toolkits) and t.status == "ok" else None


def _ints(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split("."):
        digits = "".join(c for c in part if c.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def _fmt(v: tuple[int, ...]) -> str:
    return ".".join(str(x) for x in v)


def _toolkit_for_extensions(ctx: Ctx) -> tuple[str, str] | None:
    """(CUDA release "12.4", where) of the toolkit torch.utils.cpp_extension builds with: CUDA_HOME/CUDA_PATH, else
    nvcc on PATH, else /usr/local/cuda (torch.utils.cpp_extension._find_cuda_home)."""
    t = _toolkits(ctx)
    if t is None:
        return None
    for key in ("CUDA_HOME", "CUDA_PATH"):
        home = t.cuda_home.get(key)
        if home:
            for tk in t.toolkits:
                if tk.path == home.rstrip("/") and tk.version:
                    return ".".join(tk.version.split(".")[:2]), f"{key}={home}"
            return None
    nv = t.nvcc
    if nv.release:
        return nv.release, f"nvcc on PATH ({nv.path or 'nvcc'})"
    for tk in t.toolkits:
        if tk.path == "/usr/local/cuda" and tk.version:
            return ".".join(tk.version.split(".")[:2]), "/usr/local/cuda"
    return None


@check(NVML_GARBAGE, entry_points=("doctor",))
def check_nvml_garbage(ctx: Ctx) -> Iterator[Result]:
    """NVML answered values no working driver returns."""
    nv = ctx.probes.nvml
    bad = list(nv.garbage) if isinstance(nv, NvmlState) else []
    if not bad:
        return
    lines = "; ".join(
        f"{'GPU ' + str(b.gpu) if b.gpu is not None else 'system'} {b.field} = {b.value!s} ({b.why})"
        for b in bad[:8]
    )
    more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
    yield Finding(
        NVML_GARBAGE,
        "error",
        f"The NVIDIA driver answered {len(bad)} impossible value(s)",
        f"NVML returned {lines}{more}. A working driver never does: the driver or its user-space library is "
        "corrupted, mismatched or only half loaded, and nothing it reports (GPUs, memory, health) can be trusted.",
        (
            Fix(
                "Check the driver state and the kernel log",
                "nvidia-smi -q; sudo dmesg | grep -i -E 'NVRM|Xid'",
            ),
            Fix("Reload the driver or reboot the node; reinstall the driver if it persists"),
        ),
        {"garbage": [b.to_json() for b in bad[:8]]},
        group="driver",
    )


@check(NVCC_BROKEN, entry_points=("doctor",))
def check_nvcc_broken(ctx: Ctx) -> Iterator[Result]:
    """`nvcc` on PATH hung, crashed or printed no version: said, never silently replaced."""
    t = _toolkits(ctx)
    if t is None:
        return
    nv = t.nvcc
    status = nv.status
    if status not in ("timeout", "crashed", "garbage", "failed", "error"):
        return
    what = {
        "timeout": "did not answer (killed after the probe timeout)",
        "crashed": "crashed",
        "garbage": "printed no CUDA version",
        "failed": "failed",
        "error": "could not be run",
    }[status]
    chosen = t.chosen
    instead = (
        f" The CUDA version compat reports ({chosen.version}) comes from {chosen.source} instead."
        if chosen is not None and chosen.version
        else " No other toolkit was found."
    )
    detail = nv.error or (nv.output or "")[:200]
    yield Finding(
        NVCC_BROKEN,
        "warning",
        f"nvcc on PATH {what}",
        f"`nvcc --version` {what}" + (f" ({detail})" if detail else "") + ". Builds that call nvcc (CUDA "
        "extensions, torch.utils.cpp_extension, JIT kernels) will hang or fail the same way." + instead,
        (Fix("Find which nvcc is first on PATH and fix or remove it", "command -v nvcc; nvcc --version"),),
        {"nvcc": status},
        group="cuda",
    )


@check(TORCH_MISMATCH, entry_points=("doctor",))
def check_torch_toolkit(ctx: Ctx) -> Iterator[Result]:
    """The local toolkit's CUDA vs the installed torch's: extension builds need the same major."""
    tc = ctx.facts.get("torch_cuda")
    torch_cuda = tc.raw if tc is not None and tc.raw else getattr(getattr(ctx, "torch", None), "cuda", None)
    if not torch_cuda:
        return  # no torch, or a CPU build: no extension build against a CUDA toolkit
    tk = _toolkit_for_extensions(ctx)
    if tk is None:
        return
    local, where = tk
    lv, tv = _ints(local), _ints(str(torch_cuda))
    if len(lv) < 2 or len(tv) < 2 or lv[:2] == tv[:2]:
        return
    torch_fact = ctx.facts.get("torch")
    torch_label = f"torch {torch_fact.raw}" if torch_fact is not None else "torch"
    facts = {"cuda": local, "torch_cuda": torch_cuda}
    if lv[0] != tv[0]:
        yield Finding(
            TORCH_MISMATCH,
            "warning",
            f"CUDA {local} toolkit ({where}) cannot build extensions for {torch_label} (CUDA {torch_cuda})",
            f"{torch_label} was built with CUDA {torch_cuda}; the toolkit torch.utils.cpp_extension would use is CUDA "
            f"{local} ({where}). Building a CUDA extension (pip install of a package with CUDA sources, "
            "load_inline, JIT ops) stops with 'The detected CUDA version ({0}) mismatches the version that was used "
            "to compile PyTorch ({1})'. Training with torch itself is not affected.".format(
                local, torch_cuda
            ),
            (
                Fix(
                    f"Install a CUDA {tv[0]}.x toolkit and point CUDA_HOME at it",
                    "export CUDA_HOME=/usr/local/cuda-X.Y",
                ),
                Fix(f"Or install a torch build for CUDA {lv[0]}.x"),
            ),
            facts,
            group="cuda",
        )
    else:
        yield Finding(
            TORCH_MISMATCH,
            "info",
            f"CUDA {local} toolkit ({where}) differs from {torch_label}'s CUDA {torch_cuda} in the minor version",
            "torch.utils.cpp_extension only warns about a minor-version difference; extensions usually build.",
            (),
            facts,
            group="cuda",
        )


@check(HOST_COMPILER, entry_points=("doctor",))
def check_host_compiler(ctx: Ctx) -> Iterator[Result]:
    """The host C++ compiler against the range the local toolkit's nvcc accepts."""
    tk = _toolkit_for_extensions(ctx)
    if tk is None:
        return
    local, where = tk
    found = ctx.probes.toolchain
    tc = found if isinstance(found, Toolchain) else Toolchain()
    family, version = tc.family, tc.version
    if not family or not version:
        yield Skip(
            HOST_COMPILER,
            f"no host C++ compiler version ({tc.cxx or 'c++'}: {tc.compiler_status or 'not probed'})",
        )
        return
    bounds = HOST_COMPILER_BOUNDS.get(str(family), {}).get(local)
    if bounds is None:
        yield Skip(
            HOST_COMPILER, f"no sourced {family} range for CUDA {local} (known: {HOST_COMPILER_SOURCE})"
        )
        return
    lo, hi = bounds
    v = _ints(str(version))
    if lo <= v < hi:
        return
    side = "older than" if v < lo else "newer than"
    yield Finding(
        HOST_COMPILER,
        "warning",
        f"{family} {version} is {side} CUDA {local} supports (>= {_fmt(lo)}, < {_fmt(hi)})",
        f"The host compiler ({tc.cxx}: {family} {version}) is {side} the range CUDA {local} ({where}) accepts. "
        "nvcc stops with '#error -- unsupported GNU version' (or clang version) and torch.utils.cpp_extension refuses "
        f"to build extensions. Range from {HOST_COMPILER_SOURCE}.",
        (
            Fix(
                "Use a supported compiler for CUDA builds (CXX and nvcc -ccbin)",
                f"export CXX=g++-{hi[0] - 1} CUDAHOSTCXX=g++-{hi[0] - 1}"
                if family == "gcc" and v >= hi
                else None,
            ),
        ),
        {"compiler": f"{family} {version}", "cuda": local},
        group="cuda",
    )


CHECK_NAMES = (NVML_GARBAGE, NVCC_BROKEN, TORCH_MISMATCH, HOST_COMPILER)


def registered_doctor_checks() -> tuple[Callable[[Any], Iterator[Result]], ...]:
    """This module's registered checks, in registry order, for doctor_checks (until the registry drives the doctor)."""
    specs: list[CheckSpec] = ordered(REGISTRY[n] for n in CHECK_NAMES)
    return tuple(s.run for s in specs)  # type: ignore[misc]


__all__ = ["CHECK_NAMES", "HOST_COMPILER_BOUNDS", "registered_doctor_checks"]
