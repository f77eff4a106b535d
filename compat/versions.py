"""Parsing of the version strings compat meets: drivers, CUDA, cuDNN, frameworks, Python, compute capability."""

from __future__ import annotations

import re
from functools import lru_cache, total_ordering

from packaging.version import InvalidVersion, Version

from compat._valueclass import valueclass
from compat.errors import InputError

_DRIVER_RE = re.compile(r"^\d{2,4}(\.\d{1,3}){1,2}$")
_BRANCH_RE = re.compile(r"^[Rr]?(\d{3,4})$")
_DOTTED_RE = re.compile(r"^\d+(\.\d+){0,3}$")
_CC_RE = re.compile(r"^(\d{1,2})\.(\d)$")
_ARCH_RE = re.compile(r"^(sm|compute)_(\d{1,2})(\d)([af]?)$")
_PY_RE = re.compile(r"^(\d)\.(\d{1,2})(\.\d+)?([a-z]+\d*)?\+?$")


def parse_version(raw: str, what: str = "version") -> Version:
    """A PEP 440 version, or InputError naming `what`."""
    text = raw.strip()
    try:
        v = Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a release number of over 4300 digits
        raise InputError(f"malformed {what} {raw!r}") from None
    if text.startswith(".") or ".." in text:
        raise InputError(f"malformed {what} {raw!r}")
    return v


@lru_cache(maxsize=4096)  # immutable answers; the matrix asks the same strings hundreds of times
def parse_dotted(raw: str, what: str, *, min_parts: int = 1) -> Version:
    """A purely numeric dotted version (CUDA, cuDNN): `12.4`, `12.4.1`, `9.1.0.70`."""
    text = raw.strip()
    if not _DOTTED_RE.match(text) or text.count(".") + 1 < min_parts:
        raise InputError(f"malformed {what} {raw!r} (expected numbers separated by dots, e.g. 12.4)")
    try:
        return Version(text)
    except ValueError:  # a number of over 4300 digits: int() refuses it
        raise InputError(f"malformed {what} {raw[:40]!r}... (a number too long to be a version)") from None


def parse_driver(raw: str) -> Version:
    """An NVIDIA driver version as printed by NVIDIA (`535.104.05`, `452.39`).

    packaging prints 535.104.05 as 535.104.5; compat keeps the raw string for display.
    """
    text = raw.strip()
    if not _DRIVER_RE.match(text):
        raise InputError(f"malformed driver version {raw!r} (expected e.g. 535.104.05)")
    return Version(text)


def driver_branch(raw: str) -> int | None:
    """The branch number when `raw` names a driver branch only (`535`, `R570`), else None."""
    m = _BRANCH_RE.match(raw.strip())
    return int(m.group(1)) if m else None


def parse_driver_input(raw: str) -> Version:
    """A driver as a user gives it: a release (`535.104.05`) or a branch (`535`, `R535`; Version(535), which the
    checks compare as that branch's first release, compat.checks.first_driver)."""
    branch = driver_branch(raw)
    if branch is not None:
        return Version(str(branch))
    text = raw.strip()
    if not _DRIVER_RE.match(text):
        raise InputError(
            f"malformed driver version {raw!r} (expected e.g. 535.104.05, or a branch such as 535)"
        )
    return Version(text)


@total_ordering
@valueclass
class CC:
    """A CUDA compute capability, e.g. 8.6."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def __eq__(self, other: object) -> bool:  # hot (the matrix's cc lookups): spelled out
        if other.__class__ is not CC:
            return NotImplemented
        return self.major == other.major and self.minor == other.minor  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.major, self.minor))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, CC):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    @property
    def sm(self) -> str:
        return f"sm_{self.major}{self.minor}"


def parse_cc(raw: str) -> CC:
    """`8.6` → CC(8, 6); also accepts `sm_86` / `86`-less forms are rejected to avoid guessing."""
    text = raw.strip()
    m = _CC_RE.match(text)
    if m is None:
        am = _ARCH_RE.match(text)
        if am is not None:
            return CC(int(am.group(2)), int(am.group(3)))
        raise InputError(f"malformed compute capability {raw!r} (expected MAJOR.MINOR, e.g. 8.6)")
    cc = CC(int(m.group(1)), int(m.group(2)))
    if not 1 <= cc.major <= 15:
        raise InputError(f"compute capability {raw!r} is out of range (expected 1.0 to 15.9)")
    return cc


@valueclass
class Arch:
    """One entry of a compiled architecture list: SASS (`sm_86`) or PTX (`compute_86`), maybe `sm_90a`."""

    kind: str  # "sm" or "compute"
    cc: CC
    suffix: str = ""  # "a" (arch-specific, runs only on exactly this cc) or "f" (family)

    def __str__(self) -> str:
        return f"{self.kind}_{self.cc.major}{self.cc.minor}{self.suffix}"


@lru_cache(maxsize=4096)  # immutable answers; the matrix asks the same strings hundreds of times
def parse_arch(raw: str) -> Arch:
    text = raw.strip().lower()
    m = _ARCH_RE.match(text)
    if m is None:
        raise InputError(f"malformed architecture {raw!r} (expected sm_86 or compute_90)")
    return Arch(m.group(1), CC(int(m.group(2)), int(m.group(3))), m.group(4))


@lru_cache(maxsize=4096)  # immutable answers; the matrix asks the same strings hundreds of times
def parse_python(raw: str) -> Version:
    """`3.11`, `3.11.7` or `3.13t` style; compared on major.minor."""
    text = raw.strip()
    m = _PY_RE.match(text)
    if m is None:
        raise InputError(f"malformed Python version {raw!r} (expected e.g. 3.11)")
    return Version(f"{m.group(1)}.{m.group(2)}")


def python_wheel_tag(raw: str) -> str:
    """The Python a wheel list names: `3.13` or, for free-threaded CPython (`3.13t`), `3.13t` (own cp313t wheels)."""
    m = _PY_RE.match(raw.strip())
    if m is None:
        raise InputError(f"malformed Python version {raw!r} (expected e.g. 3.11)")
    return f"{m.group(1)}.{m.group(2)}" + ("t" if m.group(4) == "t" else "")


def major_minor(v: Version) -> str:
    rel = v.release
    return f"{rel[0]}.{rel[1] if len(rel) > 1 else 0}"


def split_local(v: Version) -> tuple[Version, str | None]:
    """`2.5.1+cu124` → (2.5.1, 'cu124'); no label → (v, None)."""
    return Version(v.public), v.local


def public_version(raw: str | None) -> Version | None:
    """The public part of a version string (`2.5.1+cu124` -> 2.5.1); None when empty or not a PEP 440 version."""
    if not raw:
        return None
    try:
        return Version(Version(raw).public)
    except InvalidVersion:
        return None
