from __future__ import annotations

import pytest
from packaging.version import Version

from compat.errors import InputError
from compat.versions import (
    CC,
    parse_arch,
    parse_cc,
    parse_dotted,
    parse_driver,
    parse_python,
    parse_version,
    split_local,
)


@pytest.mark.parametrize("raw", ["535.104.05", "470.82.01", "452.39", "580.65.06", "551.78"])
def test_driver_versions_parse(raw: str) -> None:
    assert parse_driver(raw) == Version(raw)


def test_driver_compares_numerically_not_as_strings() -> None:
    # "535.104.05" < "535.54.03" as strings, but not as versions.
    assert parse_driver("535.104.05") > parse_driver("535.54.03")


@pytest.mark.parametrize("raw", ["banana", "535", "535.", ".535.1", "535..1", "5.35.1.2.3", ""])
def test_bad_driver_is_input_error(raw: str) -> None:
    with pytest.raises(InputError, match="malformed driver version"):
        parse_driver(raw)


@pytest.mark.parametrize("raw", ["2..1", "two", "2.1..", ".2.1"])
def test_bad_framework_version(raw: str) -> None:
    with pytest.raises(InputError):
        parse_version(raw, "PyTorch version")


def test_local_label_split() -> None:
    v = parse_version("2.5.1+cu124")
    assert split_local(v) == (Version("2.5.1"), "cu124")
    assert split_local(parse_version("2.6.0")) == (Version("2.6.0"), None)


def test_prerelease_parses() -> None:
    assert parse_version("2.7.0rc1") < parse_version("2.7.0")


@pytest.mark.parametrize(
    ("raw", "cc"), [("8.6", CC(8, 6)), ("12.0", CC(12, 0)), ("sm_90", CC(9, 0)), (" 7.5 ", CC(7, 5))]
)
def test_cc(raw: str, cc: CC) -> None:
    assert parse_cc(raw) == cc


@pytest.mark.parametrize("raw", ["99", "8", "8.66", "0.5", "abc", "99.0"])
def test_bad_cc(raw: str) -> None:
    with pytest.raises(InputError):
        parse_cc(raw)


def test_cc_ordering() -> None:
    assert CC(8, 9) < CC(9, 0) < CC(10, 0) < CC(12, 0)
    assert str(CC(12, 0)) == "12.0" and CC(8, 6).sm == "sm_86"


def test_arch() -> None:
    a = parse_arch("compute_90")
    assert a.kind == "compute" and a.cc == CC(9, 0) and str(a) == "compute_90"
    assert str(parse_arch("sm_90a")) == "sm_90a"
    assert parse_arch("sm_120").cc == CC(12, 0)
    with pytest.raises(InputError):
        parse_arch("gfx90a")


def test_dotted_and_python() -> None:
    assert parse_dotted("12.4.1", "CUDA version") == Version("12.4.1")
    with pytest.raises(InputError):
        parse_dotted("12.x", "CUDA version")
    assert parse_python("3.11.7") == Version("3.11")
    assert parse_python("3.13t") == Version("3.13")
    with pytest.raises(InputError):
        parse_python("python3")
