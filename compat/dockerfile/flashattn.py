"""flash-attn's prebuilt wheels in a Dockerfile: the torch minor, CUDA major and C++ ABI their file names say they
were built for, against the stage's torch (a mismatch fails at import with "undefined symbol")."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from compat.dockerfile.model import COMPANION, Event, Stage
from compat.findings import Finding, Fix
from compat.matrix import Matrix
from compat.versions import public_version

# flash-attn's prebuilt wheels (GitHub releases of Dao-AILab/flash-attention) name what they were compiled
# against: flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl. The extension links
# against that torch minor's C++ API; under another torch it fails to import ("undefined symbol").
FLASH_ATTN_WHEEL = re.compile(
    r"flash_attn-(?P<v>\d+(?:\.\d+)*(?:\.post\d+)?)(?:\+|%2B)cu(?P<cu>\d+)torch(?P<torch>\d+\.\d+)cxx11abi(?P<abi>TRUE|FALSE)-"
)
# The platform tag after the Python tags ("cp310-cp310-linux_x86_64"): the C++ ABI flag means something only
# for Linux wheels (libstdc++); Windows builds of the same name scheme are not judged on it.
FLASH_ATTN_PLATFORM = re.compile(r"[\w.]+-[\w.]+-(\w+?)(?:\.whl|$)")


def torch_abi(st: Stage, raw: str | None, m: Matrix) -> bool | None:
    """The C++ ABI (True: _GLIBCXX_USE_CXX11_ABI=1) of the stage's torch `raw`, from pytorch.yaml's cxx11_abi
    table; None where unknown: a torch from the base image (pytorch/pytorch, NGC), a conda install, a nightly,
    a release or variant the table does not cover."""
    t = st.torch
    if raw is None or t is None or t.raw != raw or t.from_base or t.install is None:
        return None
    if t.install.tool not in ("pip", "uv") or t.install.channel is not None:
        return None
    try:
        v = Version(raw)
    except InvalidVersion:
        return None
    tag = v.local
    if tag is None:
        rel = m.torch_release(v)
        tag = rel.pypi_default if rel is not None else None
    if not tag:
        return None
    return m.torch_cxx11_abi(v, tag)


def flash_attn_wheel(st: Stage, ev: Event, matrix: Matrix) -> Iterator[Finding]:
    torch = public_version(ev.torch)
    m = FLASH_ATTN_WHEEL.search(ev.what + "-")
    if torch is None or m is None or len(torch.release) < 2:
        return
    built = m.group("torch")
    have = f"{torch.release[0]}.{torch.release[1]}"
    if built != have:
        yield Finding(
            COMPANION,
            "error",
            f"flash-attn wheel built for torch {built}, the stage has torch {torch}",
            f"Line {ev.line} installs {ev.what}{ev.in_branch}, compiled against torch {built} (its file name says so); "
            f"with torch {torch} its CUDA extension fails to import ('undefined symbol' from flash_attn_2_cuda).",
            (
                Fix(
                    f"Install the flash-attn wheel whose name says torch{have}, or build flash-attn from source"
                ),
            ),
            {"torch": str(torch), "flash_attn_wheel": ev.what, "stage": st.label},
            group="dockerfile",
            line=ev.line,
        )
        return
    tcuda = st.torch.cuda if st.torch is not None and st.torch.cuda else None
    wheel_major = m.group("cu")[:2]
    if tcuda is not None and tcuda.split(".")[0] != wheel_major:
        yield Finding(
            COMPANION,
            "error",
            f"flash-attn wheel built for CUDA {wheel_major}, torch {torch} uses CUDA {tcuda}",
            f"Line {ev.line} installs {ev.what}{ev.in_branch}, compiled with CUDA {wheel_major} (cu{m.group('cu')} in its "
            f"file name); the stage's torch is a CUDA {tcuda} build, so the extension cannot load its CUDA runtime.",
            (
                Fix(
                    f"Install the flash-attn wheel whose name says cu{tcuda.split('.')[0]}, matching torch's CUDA"
                ),
            ),
            {"torch": str(torch), "torch_cuda": tcuda, "flash_attn_wheel": ev.what, "stage": st.label},
            group="dockerfile",
            line=ev.line,
        )
    wheel_abi = m.group("abi") == "TRUE"
    abi = torch_abi(st, ev.torch, matrix) if ev.platform is None or ev.platform.startswith("linux") else None
    if abi is not None and abi != wheel_abi:
        want = "TRUE" if abi else "FALSE"
        right = ev.what.replace(f"cxx11abi{m.group('abi')}", f"cxx11abi{want}")
        yield Finding(
            COMPANION,
            "error",
            f"flash-attn wheel built for cxx11abi{m.group('abi')}, torch {torch} uses cxx11abi{want}",
            f"Line {ev.line} installs {ev.what}{ev.in_branch}, compiled with _GLIBCXX_USE_CXX11_ABI="
            f"{int(wheel_abi)} (cxx11abi{m.group('abi')} in its file name); the stage's torch {ev.torch} wheel is "
            f"built with _GLIBCXX_USE_CXX11_ABI={int(abi)} (torch.compiled_with_cxx11_abi() is {abi}), so its "
            "CUDA extension fails to import ('undefined symbol' from flash_attn_2_cuda).",
            (Fix(f"Install the flash-attn wheel whose name says cxx11abi{want}: {right}"),),
            {
                "torch": str(torch),
                "torch_cxx11_abi": str(abi).lower(),
                "flash_attn_wheel": ev.what,
                "stage": st.label,
            },
            group="dockerfile",
            line=ev.line,
        )
