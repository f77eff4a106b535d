"""Refresh the framework rows of matrix/ from the package index (maintainers' tool, not shipped in the wheel).

    python tools/refresh_matrix.py [--package torch|tensorflow|jax|nvidia-cudnn-cu12|...] [--since VERSION]
                                   [--matrix DIR] [--write] [--diff FILE] [--report FILE]

For every final release newer than the newest row of the shipped file (or than --since), it reads the
package index's JSON API and, by HTTP range requests on the Linux x86_64 wheel (zip central directory, then
only the members needed), the facts the row needs:

- torch: `torch/version.py` (local label = PyPI default variant, `cuda`), the METADATA `Requires-Dist` pins
  of `nvidia-*` / `cuda-toolkit`, the wheel CPython tags, and the compiled arch list
  (`torch/lib/libtorch_python.so` carries it as "sm_75 sm_80 ..." text; read only with --archs, as the member is
  large; a bound applies).
- tensorflow: `tensorflow/python/platform/build_info.py` (CUDA, cuDNN, compute capabilities), the
  `and-cuda` extra's pins, the CPython tags.
- jax, nvidia-cudnn-cu12/13 and other packages without a table of their own: a report only (new versions and
  the jax CUDA plugins' pins); their rows need NVIDIA's tables (docs/matrix-sources.md).

New rows are appended to the shipped file with --write; the unified diff against the shipped file is written
to --diff (or stdout). Every network call has a timeout and a size bound; nothing runs through a shell.

Why a script under tools/ and not `compat matrix refresh`: the refresh writes into the source tree's
`matrix/` and needs the network; an installed compat reads a read-only `compat/_matrix` and never goes online.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import json
import re
import struct
import sys
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

INDEX = "https://pypi.org/pypi"
TIMEOUT_S = 30.0
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_CD_BYTES = 16 * 1024 * 1024
MAX_MEMBER_BYTES = 4 * 1024 * 1024
MAX_ARCH_MEMBER_BYTES = 64 * 1024 * 1024
TAIL_BYTES = 128 * 1024
UA = "compat-matrix-refresh (+https://github.com/compat)"

ROOT = Path(__file__).resolve().parent.parent


class RefreshError(Exception):
    """A network or format problem: one line, reported, never a traceback."""


# ------------------------------------------------------------------ transport


Fetch = Callable[[str, "tuple[int, int] | None", int], bytes]
"""(url, inclusive byte range or None, max bytes) -> body. Replaced by recorded responses in tests."""


def http_fetch(url: str, rng: tuple[int, int] | None, limit: int) -> bytes:
    headers = {"User-Agent": UA, "Accept-Encoding": "identity"}
    if rng is not None:
        headers["Range"] = f"bytes={rng[0]}-{rng[1]}"
    try:
        req = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:  # noqa: S310 - https URLs we build
            if rng is not None and resp.status != 206:
                raise RefreshError(f"{url}: server ignored the byte range (HTTP {resp.status})")
            body: bytes = resp.read(limit + 1)
    except (urllib.error.URLError, ValueError, OSError) as exc:
        raise RefreshError(f"{url}: {exc}") from None
    except TimeoutError:
        raise RefreshError(f"{url}: timed out after {TIMEOUT_S:.0f} s") from None
    if len(body) > limit:
        raise RefreshError(f"{url}: response over {limit} bytes")
    return body


def index_json(fetch: Fetch, package: str, version: str | None = None) -> dict[str, Any]:
    """The index's JSON document; file URLs made absolute (mirrors serve them relative to the document)."""
    url = f"{INDEX}/{package}/json" if version is None else f"{INDEX}/{package}/{version}/json"
    try:
        doc = json.loads(fetch(url, None, MAX_JSON_BYTES))
    except ValueError:
        raise RefreshError(f"{url}: not JSON") from None
    if not isinstance(doc, dict):
        raise RefreshError(f"{url}: not a JSON object")
    lists = list((doc.get("releases") or {}).values()) + [doc.get("urls") or []]
    for files in lists:
        for f in files if isinstance(files, list) else []:
            if isinstance(f, dict) and isinstance(f.get("url"), str):
                f["url"] = urllib.parse.urljoin(url, f["url"])
    return doc


# ------------------------------------------------------------------ remote zip


@dataclasses.dataclass(frozen=True)
class Member:
    name: str
    method: int
    csize: int
    usize: int
    offset: int


def _eocd(tail: bytes, tail_start: int, fetch: Fetch, url: str) -> tuple[int, int]:
    """(central directory offset, size) from the end of the archive."""
    i = tail.rfind(b"PK\x05\x06")
    if i < 0 or len(tail) - i < 22:
        raise RefreshError(f"{url}: no zip end-of-central-directory record")
    _, _, _, _, _, cd_size, cd_off, _ = struct.unpack("<IHHHHIIH", tail[i : i + 22])
    if cd_off == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
        j = tail.rfind(b"PK\x06\x07", 0, i)
        if j < 0:
            raise RefreshError(f"{url}: zip64 locator missing")
        (rec_off,) = struct.unpack("<Q", tail[j + 8 : j + 16])
        rec = (
            tail[rec_off - tail_start : rec_off - tail_start + 56]
            if rec_off >= tail_start
            else fetch(url, (rec_off, rec_off + 55), 56)
        )
        if rec[:4] != b"PK\x06\x06":
            raise RefreshError(f"{url}: bad zip64 end record")
        cd_size, cd_off = struct.unpack("<QQ", rec[40:56])
    return cd_off, cd_size


def _central_directory(cd: bytes) -> dict[str, Member]:
    out: dict[str, Member] = {}
    pos = 0
    while pos + 46 <= len(cd) and cd[pos : pos + 4] == b"PK\x01\x02":
        (method,) = struct.unpack("<H", cd[pos + 10 : pos + 12])
        csize, usize = struct.unpack("<II", cd[pos + 20 : pos + 28])
        nlen, xlen, clen = struct.unpack("<HHH", cd[pos + 28 : pos + 34])
        (offset,) = struct.unpack("<I", cd[pos + 42 : pos + 46])
        name = cd[pos + 46 : pos + 46 + nlen].decode("utf-8", "replace")
        extra = cd[pos + 46 + nlen : pos + 46 + nlen + xlen]
        vals = [v for v in (usize, csize, offset)]
        x = 0
        while x + 4 <= len(extra):  # zip64 extended information: the 0xFFFFFFFF fields, in this order
            hid, hlen = struct.unpack("<HH", extra[x : x + 4])
            if hid == 1:
                body = extra[x + 4 : x + 4 + hlen]
                k = 0
                for idx in range(3):
                    if vals[idx] == 0xFFFFFFFF and k + 8 <= len(body):
                        (vals[idx],) = struct.unpack("<Q", body[k : k + 8])
                        k += 8
            x += 4 + hlen
        out[name] = Member(name, method, vals[1], vals[0], vals[2])
        pos += 46 + nlen + xlen + clen
    return out


class RemoteZip:
    """A wheel on the index, read by byte ranges: the directory once, then single members."""

    def __init__(self, fetch: Fetch, url: str, size: int) -> None:
        self.fetch, self.url, self.size = fetch, url, size
        start = max(0, size - TAIL_BYTES)
        tail = fetch(url, (start, size - 1), TAIL_BYTES)
        cd_off, cd_size = _eocd(tail, start, fetch, url)
        if cd_size > MAX_CD_BYTES:
            raise RefreshError(f"{url}: central directory over {MAX_CD_BYTES} bytes")
        cd = (
            tail[cd_off - start : cd_off - start + cd_size]
            if cd_off >= start
            else fetch(url, (cd_off, cd_off + cd_size - 1), cd_size)
        )
        self.members = _central_directory(cd)

    def names(self) -> list[str]:
        return list(self.members)

    def read(self, name: str, limit: int = MAX_MEMBER_BYTES) -> bytes:
        m = self.members.get(name)
        if m is None:
            raise RefreshError(f"{self.url}: no member {name!r}")
        if m.usize > limit or m.csize > limit:
            raise RefreshError(f"{self.url}: member {name!r} is over {limit} bytes")
        head = self.fetch(self.url, (m.offset, m.offset + 29), 30)
        if head[:4] != b"PK\x03\x04":
            raise RefreshError(f"{self.url}: bad local header for {name!r}")
        nlen, xlen = struct.unpack("<HH", head[26:30])
        start = m.offset + 30 + nlen + xlen
        data = self.fetch(self.url, (start, start + m.csize - 1), m.csize) if m.csize else b""
        if m.method == 0:
            return data
        if m.method != 8:
            raise RefreshError(f"{self.url}: member {name!r} uses compression method {m.method}")
        d = zlib.decompressobj(-15)
        out = d.decompress(data, limit + 1)
        if len(out) > limit:
            raise RefreshError(f"{self.url}: member {name!r} inflates over {limit} bytes")
        return out

    def dist_info(self, leaf: str) -> str | None:
        return next(
            (
                n
                for n in self.members
                if n.count("/") == 1 and n.split("/")[0].endswith(".dist-info") and n.endswith("/" + leaf)
            ),
            None,
        )


# ------------------------------------------------------------------ facts from wheel files


def python_tags(filenames: Sequence[str]) -> list[str]:
    """CPython versions of the wheels ("3.13t" = free-threaded), sorted by version."""
    out: set[str] = set()
    for fn in filenames:
        try:
            _, _, _, tags = parse_wheel_filename(fn)
        except InvalidWheelFilename:
            continue
        for t in tags:
            # cp37m / cp27mu: the pymalloc / wide-unicode ABI suffixes of Python < 3.8 (torch 1.x wheels)
            m = re.fullmatch(r"cp(\d)(\d+)(t?)(?:d?m?u?)", t.abi)
            if m and t.interpreter.startswith("cp"):
                out.add(f"{m.group(1)}.{m.group(2)}{m.group(3)}")
            elif t.abi == "abi3" or t.abi == "none":
                m2 = re.fullmatch(r"cp(\d)(\d+)", t.interpreter)
                if m2:
                    out.add(f"{m2.group(1)}.{m2.group(2)}")
    return sorted(out, key=lambda s: (Version(s.rstrip("t")), s.endswith("t")))


def metadata_requires(metadata: str) -> list[Requirement]:
    reqs = []
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:"):
            try:
                reqs.append(Requirement(line.split(":", 1)[1].strip()))
            except InvalidRequirement:
                continue
    return reqs


def cuda_pins(reqs: Sequence[Requirement], *, extra: str | None = None) -> dict[str, str]:
    """nvidia-* / cuda-toolkit pins that apply on Linux x86_64 (and with `extra`, only that extra's).
    An exact pin is written as its version, anything else as the specifier string."""
    env = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64"}
    out: dict[str, str] = {}
    for r in reqs:
        if not (r.name.startswith("nvidia-") or r.name == "cuda-toolkit" or r.name.startswith("jax-cuda")):
            continue
        if r.marker is not None:
            has_extra = "extra" in str(r.marker)
            if extra is None and has_extra:
                continue
            if extra is not None and not has_extra:
                continue
            if not r.marker.evaluate({**env, "extra": extra or ""}):
                continue
        elif extra is not None:
            continue
        specs = list(r.specifier)
        out[r.name] = (
            specs[0].version
            if len(specs) == 1 and specs[0].operator == "=="
            else ",".join(sorted((str(x) for x in specs), key=lambda x: (not x.startswith(">"), x)))
        )
    return dict(sorted(out.items()))


def torch_version_py(text: str) -> tuple[str | None, str | None]:
    """(local label such as "cu130", torch.version.cuda) from torch/version.py."""
    label = re.search(r"""__version__\s*=\s*['"][^'"+]+\+([A-Za-z0-9.]+)['"]""", text)
    cuda = re.search(r"""^cuda\s*(?::\s*\S+\s*)?=\s*['"]([0-9.]+)['"]""", text, re.M)
    return (label.group(1) if label else None, cuda.group(1) if cuda else None)


_ARCH_RUN = re.compile(rb"(?:sm|compute)_\d{2,3}[af]?(?:[ ;](?:sm|compute)_\d{2,3}[af]?){2,}")


def arch_list(blob: bytes) -> list[str] | None:
    """The compiled arch list ("sm_75 sm_80 ... compute_120") embedded in a torch CUDA library."""
    runs = _ARCH_RUN.findall(blob)
    if not runs:
        return None
    best = max(runs, key=len).decode()
    return re.split(r"[ ;]", best)


def tf_build_info(text: str) -> dict[str, Any]:
    """The `build_info` dict literal of tensorflow/python/platform/build_info.py (never executed)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "build_info" for t in node.targets
        ):
            expr = node.value
            if (  # collections.OrderedDict([(k, v), ...]), as the generated file writes it
                isinstance(expr, ast.Call)
                and isinstance(expr.func, (ast.Attribute, ast.Name))
                and (getattr(expr.func, "attr", None) or getattr(expr.func, "id", None))
                in ("OrderedDict", "dict")
                and len(expr.args) == 1
            ):
                expr = expr.args[0]
            try:
                val = ast.literal_eval(expr)
            except ValueError:
                break
            if isinstance(val, list) and all(isinstance(x, tuple) and len(x) == 2 for x in val):
                val = dict(val)
            if isinstance(val, dict):
                return val
    m = re.search(r"build_info\s*=\s*(\{.*?\})\s*$", text, re.S | re.M)
    if m:
        try:
            val = ast.literal_eval(m.group(1))
            if isinstance(val, dict):
                return val
        except (ValueError, SyntaxError):
            pass
    raise RefreshError("build_info.py has no build_info dict literal")


# ------------------------------------------------------------------ rows


def _linux_wheels(files: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        f
        for f in files
        if str(f.get("filename", "")).endswith(".whl")
        and ("manylinux" in f["filename"] and "x86_64" in f["filename"])
        and not f.get("yanked")
    ]


def _pick(wheels: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """A non-free-threaded CPython wheel of the newest Python, for reading build facts."""
    if not wheels:
        raise RefreshError("no Linux x86_64 wheel")
    plain = [w for w in wheels if not re.search(r"cp\d+t-", w["filename"])] or list(wheels)
    return sorted(plain, key=lambda w: w["filename"])[-1]


def torch_row(
    fetch: Fetch, version: str, files: Sequence[Mapping[str, Any]], *, archs: bool
) -> dict[str, Any]:
    wheels = _linux_wheels(files)
    w = _pick(wheels)
    z = RemoteZip(fetch, w["url"], int(w["size"]))
    label, cuda = torch_version_py(z.read("torch/version.py").decode("utf-8", "replace"))
    meta_name = z.dist_info("METADATA")
    reqs = metadata_requires(z.read(meta_name).decode("utf-8", "replace")) if meta_name else []
    pins = cuda_pins(reqs)
    notes = [f"read from {w['filename']} (torch/version.py, METADATA)"]
    variant: dict[str, Any] = {"tag": label or "cpu"}
    if cuda:
        variant["cuda"] = cuda
        cudnn = next(
            (v for k, v in pins.items() if k.startswith("nvidia-cudnn") and re.fullmatch(r"[\d.]+", v)), None
        )
        if cudnn:
            variant["cudnn"] = cudnn
        if archs:
            lib = next(
                (n for n in ("torch/lib/libtorch_python.so", "torch/lib/libtorch_cuda.so") if n in z.members),
                None,
            )
            found = arch_list(z.read(lib, MAX_ARCH_MEMBER_BYTES)) if lib else None
            if found:
                variant["archs"] = found
                notes.append(f"archs: the arch string in {lib}")
    if label and label.startswith("cu"):
        variant["index_url"] = f"https://download.pytorch.org/whl/{label}"
    row: dict[str, Any] = {
        "version": version,
        "python": python_tags([f["filename"] for f in wheels]),
        "pypi_default": variant["tag"],
        "pypi_requires": pins,
        "variants": [variant, {"tag": "cpu", "index_url": "https://download.pytorch.org/whl/cpu"}],
        "source": f"https://pypi.org/project/torch/{version}/#files",
    }
    if variant["tag"] == "cpu":
        row["variants"] = [row["variants"][1]]
    row["_notes"] = notes + [
        "other variants (download.pytorch.org) are not on PyPI: add them from RELEASE.md"
    ]
    return row


def tf_row(fetch: Fetch, version: str, files: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    wheels = _linux_wheels(files)
    w = _pick(wheels)
    z = RemoteZip(fetch, w["url"], int(w["size"]))
    info = tf_build_info(z.read("tensorflow/python/platform/build_info.py").decode("utf-8", "replace"))
    meta_name = z.dist_info("METADATA")
    reqs = metadata_requires(z.read(meta_name).decode("utf-8", "replace")) if meta_name else []
    and_cuda = cuda_pins(reqs, extra="and-cuda")
    row: dict[str, Any] = {"version": version, "python": python_tags([f["filename"] for f in wheels])}
    notes = [f"read from {w['filename']} (build_info.py, METADATA)"]
    cuda_v = info.get("cuda_version")
    if info.get("is_cuda_build") and isinstance(cuda_v, str) and re.match(r"\d+\.\d+", cuda_v):
        row["cuda"] = ".".join(cuda_v.split(".")[:2])
        cudnn = str(info.get("cudnn_version") or "")
        lower = re.search(
            r">=\s*(\d+\.\d+)", and_cuda.get("nvidia-cudnn-cu12", "") + and_cuda.get("nvidia-cudnn-cu13", "")
        )
        if lower and lower.group(1).split(".")[0] == cudnn.split(".")[0]:
            row["cudnn"] = lower.group(1)
            notes.append(f"cudnn: build_info says {cudnn!r}; minor from the and-cuda lower bound")
        elif re.fullmatch(r"\d+(\.\d+)*", cudnn):
            row["cudnn"] = cudnn
    if and_cuda:
        row["and_cuda"] = and_cuda
    row["windows_gpu"] = False
    ccs = info.get("cuda_compute_capabilities")
    if isinstance(ccs, list) and all(isinstance(c, str) for c in ccs):
        row["compute_capabilities"] = ccs
    row["source"] = f"https://pypi.org/project/tensorflow/{version}/#files"
    row["_notes"] = notes
    return row


def report_pins(
    fetch: Fetch, package: str, version: str, files: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Packages without a table of their own (jax, cuDNN wheels): the version and its CUDA pins (per extra),
    read from a wheel's METADATA, for review."""
    wheels = _linux_wheels(files) or [f for f in files if str(f.get("filename", "")).endswith(".whl")]
    w = _pick(wheels)
    z = RemoteZip(fetch, w["url"], int(w["size"]))
    meta_name = z.dist_info("METADATA")
    text = z.read(meta_name).decode("utf-8", "replace") if meta_name else ""
    reqs = metadata_requires(text)
    extras = sorted(
        {
            m
            for line in text.splitlines()
            if line.startswith("Provides-Extra:")
            for m in [line.split(":", 1)[1].strip()]
        }
    )
    pins = cuda_pins(reqs)
    for ex in extras:
        pins.update({f"[{ex}] {k}": v for k, v in cuda_pins(reqs, extra=ex).items()})
    return {
        "package": package,
        "version": version,
        "pins": pins,
        "source": f"https://pypi.org/project/{package}/{version}/#files",
        "_notes": [f"read from {w['filename']} (METADATA)"],
    }


# ------------------------------------------------------------------ YAML rows and the diff


def _q(v: str) -> str:
    return json.dumps(v)


def row_yaml(row: Mapping[str, Any]) -> str:
    """A row as YAML in the shipped files' style (versions quoted, flow lists), notes as comments."""
    lines = [f"  # refresh: {n}" for n in row.get("_notes", [])]
    first = True
    for key, val in row.items():
        if key.startswith("_"):
            continue
        lead = "  - " if first else "    "
        first = False
        if isinstance(val, list) and val and isinstance(val[0], dict):
            lines.append(f"{lead}{key}:")
            for item in val:
                sub = ", ".join(
                    f"{k}: [{', '.join(map(str, v))}]" if isinstance(v, list) else f"{k}: {_scalar(v)}"
                    for k, v in item.items()
                )
                lines.append(f"      - {{{sub}}}")
        elif isinstance(val, list):
            lines.append(
                f"{lead}{key}: [{', '.join(_q(str(x)) if key == 'python' else str(x) for x in val)}]"
            )
        elif isinstance(val, dict):
            if not val:
                lines.append(f"{lead}{key}: {{}}")
            else:
                lines.append(f"{lead}{key}:")
                lines.extend(f"      {k}: {_q(v)}" for k, v in val.items())
        else:
            lines.append(f"{lead}{key}: {_scalar(val)}")
    return "\n".join(lines) + "\n"


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    s = str(v)
    return s if s.startswith("http") else _q(s)


def append_rows(text: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """The file with the rows appended to its `releases:` list (the last top-level key of both files)."""
    if not rows:
        return text
    body = text if text.endswith("\n") else text + "\n"
    return body + "\n" + "\n".join(row_yaml(r) for r in rows)


def unified_diff(old: str, new: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), f"a/matrix/{name}", f"b/matrix/{name}"
        )
    )


def shipped_versions(path: Path) -> list[Version]:
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for r in doc.get("releases", []) if isinstance(doc, dict) else []:
        try:
            out.append(Version(str(r["version"])))
        except (InvalidVersion, KeyError, TypeError):
            continue
    return out


def new_versions(index: Mapping[str, Any], after: Version | None) -> list[str]:
    """Final, non-yanked releases with files, newer than `after`, oldest first."""
    out = []
    for raw, files in (index.get("releases") or {}).items():
        try:
            v = Version(raw)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or not files or all(f.get("yanked") for f in files):
            continue
        if after is None or v > after:
            out.append(raw)
    return sorted(out, key=Version)


TABLES = {"torch": "pytorch.yaml", "tensorflow": "tensorflow.yaml"}


@dataclasses.dataclass
class Result:
    package: str
    file: str | None
    rows: list[dict[str, Any]]
    diff: str
    errors: list[str]


def refresh(
    package: str, matrix: Path, *, since: str | None, fetch: Fetch, archs: bool, write: bool
) -> Result:
    table = TABLES.get(package)
    index = index_json(fetch, package)
    if since is not None:
        after: Version | None = Version(since)
    elif table:
        after = max(shipped_versions(matrix / table), default=None)
    else:
        after = None
    versions = new_versions(index, after)
    if table is None and after is None:
        versions = versions[-1:]  # no table to compare with: report the newest only
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    for v in versions:
        files = index["releases"][v]
        try:
            if package == "torch":
                rows.append(torch_row(fetch, v, files, archs=archs))
            elif package == "tensorflow":
                rows.append(tf_row(fetch, v, files))
            else:
                rows.append(report_pins(fetch, package, v, files))
        except RefreshError as exc:
            errors.append(f"{package} {v}: {exc}")
    diff = ""
    if table:
        path = matrix / table
        old = path.read_text(encoding="utf-8")
        new = append_rows(old, rows)
        diff = unified_diff(old, new, table)
        if write and new != old:
            path.write_text(new, encoding="utf-8")
    return Result(package, table, rows, diff, errors)


def main(argv: Sequence[str] | None = None, fetch: Fetch = http_fetch) -> int:
    ap = argparse.ArgumentParser(
        prog="refresh_matrix", description=__doc__.splitlines()[0] if __doc__ else None
    )
    ap.add_argument(
        "--package", action="append", help="torch, tensorflow, jax, nvidia-cudnn-cu12, ... (repeatable)"
    )
    ap.add_argument(
        "--since", help="treat releases after this version as new (default: the newest shipped row)"
    )
    ap.add_argument(
        "--matrix", default=str(ROOT / "matrix"), help="matrix directory (default: the source tree's)"
    )
    ap.add_argument("--write", action="store_true", help="append the new rows to the matrix files")
    ap.add_argument(
        "--archs", action="store_true", help="also read torch's compiled arch list (large member)"
    )
    ap.add_argument("--diff", help="write the unified diff here instead of stdout")
    ap.add_argument("--report", help="write a JSON report (rows, errors) here")
    args = ap.parse_args(argv)
    packages = args.package or ["torch", "tensorflow"]
    if args.since is not None:
        try:
            Version(args.since)
        except InvalidVersion:
            sys.stderr.write(f"refresh_matrix: error: --since {args.since!r} is not a version\n")
            return 2
    matrix = Path(args.matrix)
    if not matrix.is_dir():
        sys.stderr.write(f"refresh_matrix: error: matrix directory {str(matrix)!r} does not exist\n")
        return 2
    results = []
    for pkg in packages:
        try:
            results.append(
                refresh(pkg, matrix, since=args.since, fetch=fetch, archs=args.archs, write=args.write)
            )
        except RefreshError as exc:
            results.append(Result(pkg, TABLES.get(pkg), [], "", [str(exc)]))
    diff = "".join(r.diff for r in results)
    if args.diff:
        Path(args.diff).write_text(diff, encoding="utf-8")
    else:
        sys.stdout.write(diff)
    if args.report:
        Path(args.report).write_text(
            json.dumps([dataclasses.asdict(r) for r in results], indent=2, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    for r in results:
        sys.stderr.write(f"refresh_matrix: {r.package}: {len(r.rows)} new release(s)\n")
        for e in r.errors:
            sys.stderr.write(f"refresh_matrix: error: {e}\n")
    return 1 if any(r.errors for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
