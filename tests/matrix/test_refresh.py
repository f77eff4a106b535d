"""tools/refresh_matrix.py on recorded index responses (default suite) and on the real index (-m network)."""

from __future__ import annotations

import io
import json
import shutil
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from compat.matrix import load_matrix

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "matrix_refresh"
sys.path.insert(0, str(ROOT / "tools"))

import refresh_matrix as rm  # noqa: E402


def _wheel(members: Mapping[str, bytes], *, zip64: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        z.writestr("torch/__init__.py", b"# padding member\n" * 100)
        for name, data in members.items():
            with z.open(name, "w", force_zip64=zip64) as fh:
                fh.write(data)
    return buf.getvalue()


class Recorded:
    """Serves the recorded index JSON and wheels built from recorded members, honouring byte ranges."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.requests: list[tuple[str, Any]] = []

    def add_index(
        self, package: str, wheel_members: Mapping[str, Mapping[str, bytes]], *, zip64: bool = False
    ) -> None:
        doc = json.loads((DATA / f"{package}_index.json").read_text(encoding="utf-8"))
        for files in doc["releases"].values():
            for f in files:
                members = wheel_members.get(f["filename"])
                if members is not None:
                    blob = _wheel(members, zip64=zip64)
                    f["size"] = len(blob)
                    self.blobs[rm.urllib.parse.urljoin(f"{rm.INDEX}/{package}/json", f["url"])] = blob
        self.blobs[f"{rm.INDEX}/{package}/json"] = json.dumps(doc).encode()

    def __call__(self, url: str, rng: tuple[int, int] | None, limit: int) -> bytes:
        self.requests.append((url, rng))
        if url not in self.blobs:
            raise rm.RefreshError(f"{url}: HTTP Error 404: Not Found")
        blob = self.blobs[url]
        body = blob if rng is None else blob[rng[0] : rng[1] + 1]
        if len(body) > limit:
            raise rm.RefreshError(f"{url}: response over {limit} bytes")
        return body


TORCH_WHEEL = "torch-2.15.0-cp315-cp315-manylinux_2_28_x86_64.whl"
TF_WHEEL = "tensorflow-2.21.0-cp313-cp313-manylinux_2_27_x86_64.whl"


def _torch_members() -> dict[str, bytes]:
    return {
        "torch/version.py": (DATA / "torch-2.15.0.version.py.txt").read_bytes(),
        "torch-2.15.0.dist-info/METADATA": (DATA / "torch-2.15.0.METADATA").read_bytes(),
        "torch/lib/libtorch_python.so": b"\x00" * 5000 + (DATA / "libtorch_python.excerpt.bin").read_bytes(),
    }


def _tf_members() -> dict[str, bytes]:
    return {
        "tensorflow/python/platform/build_info.py": (
            DATA / "tensorflow-2.21.0.build_info.py.txt"
        ).read_bytes(),
        "tensorflow-2.21.0.dist-info/METADATA": (DATA / "tensorflow-2.21.0.METADATA").read_bytes(),
    }


def _matrix_without_newest(tmp_path: Path) -> Path:
    """A copy of the shipped matrix whose newest torch (2.15.0) and TensorFlow (2.21.0) rows are cut off."""
    d = tmp_path / "m"
    shutil.copytree(ROOT / "matrix", d)
    text = (d / "pytorch.yaml").read_text(encoding="utf-8")
    (d / "pytorch.yaml").write_text(
        text[: text.index("  # ------------------------------------------------------------------ 2.15")],
        encoding="utf-8",
    )
    text = (d / "tensorflow.yaml").read_text(encoding="utf-8")
    (d / "tensorflow.yaml").write_text(
        text[: text.index("  # Newest release on PyPI (2.22.0rc0")], encoding="utf-8"
    )
    return d


@pytest.mark.parametrize("zip64", [False, True], ids=["zip", "zip64"])
def test_refresh_rebuilds_the_shipped_newest_rows(tmp_path: Path, zip64: bool) -> None:
    shipped = load_matrix(ROOT / "matrix", cache=False)
    d = _matrix_without_newest(tmp_path)
    assert load_matrix(d, cache=False).newest_torch() == rm.Version("2.14.1")
    fetch = Recorded()
    fetch.add_index("torch", {TORCH_WHEEL: _torch_members()}, zip64=zip64)
    fetch.add_index("tensorflow", {TF_WHEEL: _tf_members()}, zip64=zip64)
    diff = tmp_path / "refresh.diff"
    report = tmp_path / "refresh.json"
    rc = rm.main(
        ["--matrix", str(d), "--write", "--archs", "--diff", str(diff), "--report", str(report)], fetch=fetch
    )
    assert rc == 0
    m = load_matrix(d, cache=False)  # the written rows validate
    new, old = m.torch_release(rm.Version("2.15.0")), shipped.torch_release(rm.Version("2.15.0"))
    assert new is not None and old is not None
    assert (new.python, new.pypi_default, dict(new.pypi_requires)) == (
        old.python,
        old.pypi_default,
        dict(old.pypi_requires),
    )
    assert new.variant("cu132") == old.variant("cu132")
    assert new.source == old.source
    tf_new, tf_old = m.tf_release(rm.Version("2.21.0")), shipped.tf_release(rm.Version("2.21.0"))
    assert tf_new is not None and tf_old is not None
    assert (tf_new.python, tf_new.cuda, tf_new.cudnn, tf_new.archs) == (
        tf_old.python,
        tf_old.cuda,
        tf_old.cudnn,
        tf_old.archs,
    )
    assert dict(tf_new.and_cuda) == dict(tf_old.and_cuda)
    text = diff.read_text(encoding="utf-8")
    assert "+++ b/matrix/pytorch.yaml" in text and '+  - version: "2.15.0"' in text
    assert "+++ b/matrix/tensorflow.yaml" in text and '+  - version: "2.21.0"' in text
    assert "2.22.0rc0" not in text  # pre-releases are not rows
    assert [r["package"] for r in json.loads(report.read_text(encoding="utf-8"))] == ["torch", "tensorflow"]


def test_only_ranges_are_read_from_wheels(tmp_path: Path) -> None:
    fetch = Recorded()
    fetch.add_index("torch", {TORCH_WHEEL: _torch_members()})
    rm.main(["--matrix", str(_matrix_without_newest(tmp_path)), "--package", "torch"], fetch=fetch)
    wheel_reads = [(u, r) for u, r in fetch.requests if u.endswith(".whl")]
    assert wheel_reads and all(r is not None for _, r in wheel_reads)


def test_nothing_new_gives_an_empty_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fetch = Recorded()
    fetch.add_index("torch", {TORCH_WHEEL: _torch_members()})
    assert rm.main(["--package", "torch"], fetch=fetch) == 0  # the shipped matrix already has 2.15.0
    out, err = capsys.readouterr()
    assert out == "" and "torch: 0 new release(s)" in err


def test_a_broken_wheel_is_an_error_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fetch = Recorded()
    fetch.add_index("torch", {TORCH_WHEEL: _torch_members()})
    for url in list(fetch.blobs):
        if url.endswith(".whl"):
            fetch.blobs[url] = b"not a zip" * 100
    rc = rm.main(["--matrix", str(_matrix_without_newest(tmp_path)), "--package", "torch"], fetch=fetch)
    assert rc == 1
    assert "no zip end-of-central-directory record" in capsys.readouterr().err


def test_bad_since_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert rm.main(["--since", "not a version"], fetch=Recorded()) == 2
    assert "is not a version" in capsys.readouterr().err


def test_parsers_on_recorded_files() -> None:
    label, cuda = rm.torch_version_py((DATA / "torch-2.15.0.version.py.txt").read_text(encoding="utf-8"))
    assert (label, cuda) == ("cu132", "13.2")
    assert rm.arch_list((DATA / "libtorch_python.excerpt.bin").read_bytes()) == [
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_90",
        "sm_100",
        "sm_120",
    ]
    info = rm.tf_build_info((DATA / "tensorflow-2.21.0.build_info.py.txt").read_text(encoding="utf-8"))
    assert info["cuda_version"] == "12.5.1" and info["cuda_compute_capabilities"][-1] == "compute_90"
    reqs = rm.metadata_requires((DATA / "tensorflow-2.21.0.METADATA").read_text(encoding="utf-8"))
    assert rm.cuda_pins(reqs) == {}  # every nvidia-* pin of tensorflow sits behind the and-cuda extra
    assert rm.cuda_pins(reqs, extra="and-cuda")["nvidia-cudnn-cu12"] == ">=9.3.0.75,<10.0"
    assert rm.python_tags(
        ["torch-2.15.0-cp313-cp313t-manylinux_2_28_x86_64.whl", "torch-2.15.0-cp311-cp311-win_amd64.whl"]
    ) == ["3.11", "3.13t"]
    # torch 1.0.0's Linux wheels (pypi.org/project/torch/1.0.0/#files): cp27mu, cp27m, cp35m .. cp37m ABI tags
    assert rm.python_tags(
        [
            "torch-1.0.0-cp27-cp27mu-manylinux1_x86_64.whl",
            "torch-1.0.0-cp27-cp27m-manylinux1_x86_64.whl",
            "torch-1.0.0-cp37-cp37m-manylinux1_x86_64.whl",
            "torch-1.0.0-cp35-cp35m-manylinux1_x86_64.whl",
        ]
    ) == ["2.7", "3.5", "3.7"]


@pytest.mark.network
def test_real_index_reproduces_the_shipped_torch_row() -> None:
    shipped = load_matrix(ROOT / "matrix", cache=False).torch_release(rm.Version("2.15.0"))
    assert shipped is not None
    index = rm.index_json(rm.http_fetch, "torch")
    row = rm.torch_row(rm.http_fetch, "2.15.0", index["releases"]["2.15.0"], archs=False)
    assert row["python"] == list(shipped.python)
    assert row["pypi_requires"] == dict(shipped.pypi_requires)
    assert row["variants"][0]["cuda"] == "13.2"
