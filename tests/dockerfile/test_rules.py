"""Rules of issue 16 on small Dockerfiles: companions, get-pip.py, compat libs, cuDNN for TE, deleted tags,
driver branches, parsing (if/elif/else, pip options, PIP_*/UV_* indexes, nightly channels)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat.dockerfile import check_dockerfile
from compat.dockerfile.rules import companion_for

DAY = _dt.date(2026, 11, 23)


def _ids(rep: Any) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in rep.findings:
        out.setdefault(f.id, []).append(f.line)
    return out


def _check(write_df: Callable[..., Path], m: Any, text: str, **kw: Any) -> Any:
    return check_dockerfile(write_df(text), m, today=DAY, **kw)


@pytest.mark.parametrize(
    "torch,pkg,want",
    [
        ("2.6.0", "torchvision", (0, 21)),
        ("2.1.2", "torchaudio", (2, 1)),
        ("1.13.1", "torchvision", (0, 14)),
        ("1.10.0", "torchaudio", (0, 10)),
        ("2.10.0", "torchvision", None),
        ("1.6.0", "torchvision", None),
    ],
)
def test_companion_table(torch: str, pkg: str, want: Any) -> None:
    from packaging.version import Version

    assert companion_for(Version(torch), pkg) == want


def test_companion_pin_mismatch_in_one_command(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # huggingface/text-generation-inference Dockerfile_intel before f7d47cb3 (tests/data/dockerfile/wild).
    rep = _check(
        write_df,
        dmatrix,
        "FROM ubuntu:22.04\nRUN pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.0.1\n",
    )
    errs = [f for f in rep.findings if f.id == "dockerfile.companion"]
    assert len(errs) == 1 and "torchaudio 2.0.1" in errs[0].title and errs[0].line == 2
    assert "ResolutionImpossible" in errs[0].message
    ok = _check(
        write_df,
        dmatrix,
        "FROM ubuntu:22.04\nRUN pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0\n",
    )
    assert "dockerfile.companion" not in _ids(ok)


def test_unpinned_companion_after_base_torch(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # AbdBarho/stable-diffusion-webui-docker before 015c2ec: `pip install xformers` on pytorch/pytorch:2.1.2.
    base = "FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime\n"
    rep = _check(write_df, dmatrix, base + "RUN pip install pyngrok xformers\n")
    assert _ids(rep).get("dockerfile.companion") == [2]
    for fine in (
        "RUN pip install xformers==0.0.23.post1\n",
        "RUN pip install --no-deps xformers\n",
        "RUN pip install torch==2.1.2 xformers\n",
    ):
        assert "dockerfile.companion" not in _ids(_check(write_df, dmatrix, base + fine)), fine


def test_get_pip_unversioned_on_old_python(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # facebookresearch/detectron2 before b70a86f9 (Ubuntu 18.04, Python 3.6).
    text = (
        "FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04\nRUN apt-get update && apt-get install -y python3-dev\n"
        "RUN wget https://bootstrap.pypa.io/get-pip.py && python3 get-pip.py\n"
    )
    rep = _check(write_df, dmatrix, text)
    assert _ids(rep).get("dockerfile.get-pip") == [3]
    fixed = text.replace("bootstrap.pypa.io/get-pip.py", "bootstrap.pypa.io/pip/3.6/get-pip.py")
    assert "dockerfile.get-pip" not in _ids(_check(write_df, dmatrix, fixed))
    newer = "FROM ubuntu:22.04\nRUN curl -O https://bootstrap.pypa.io/get-pip.py && python3.10 get-pip.py\n"
    assert "dockerfile.get-pip" not in _ids(_check(write_df, dmatrix, newer))


def test_compat_libs_warn_and_error_on_geforce(write_df: Callable[..., Path], dmatrix: Any) -> None:
    text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN ldconfig /usr/local/cuda/compat\n"
    rep = _check(write_df, dmatrix, text)
    f = next(f for f in rep.findings if f.id == "dockerfile.compat-libs")
    assert f.severity == "warning" and f.line == 2 and "804" in f.message
    rep = _check(write_df, dmatrix, text, target_gpu="GeForce RTX 4090")
    assert next(f for f in rep.findings if f.id == "dockerfile.compat-libs").severity == "error"
    env = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV LD_LIBRARY_PATH=/usr/local/cuda/compat:/usr/lib\n"
    assert _ids(_check(write_df, dmatrix, env)).get("dockerfile.compat-libs") == [2]


def test_transformer_engine_without_cudnn(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # huggingface/peft before a4bc0a9ac: TE in conda run on nvidia/cuda:12.8.1-devel (no cuDNN).
    text = 'FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\nRUN conda run -n peft pip install "transformer_engine[pytorch]"\n'
    assert _ids(_check(write_df, dmatrix, text)).get("dockerfile.no-cudnn") == [2]
    fixed = text.replace("12.8.1-devel", "12.8.1-cudnn-devel")
    assert "dockerfile.no-cudnn" not in _ids(_check(write_df, dmatrix, fixed))


def test_deleted_tag(write_df: Callable[..., Path], dmatrix: Any) -> None:
    rep = _check(write_df, dmatrix, "FROM nvidia/cuda:11.7.0-devel-ubuntu18.04\n")
    f = next(f for f in rep.findings if f.id == "dockerfile.deleted-tag")
    assert f.severity == "error" and f.line == 1 and "support-policy" in f.message
    assert "dockerfile.deleted-tag" not in _ids(
        _check(write_df, dmatrix, "FROM nvidia/cuda:11.7.1-devel-ubuntu18.04\n")
    )


@pytest.mark.parametrize(
    "image,gone",
    [
        ("nvidia/cuda:11.4.0-cudnn8-devel-ubuntu20.04", True),
        ("nvidia/cuda:11.4.2-devel-ubuntu20.04", True),
        ("nvidia/cuda:11.4.3-devel-ubuntu20.04", False),  # no report read: not assumed gone
    ],
)
def test_deleted_cuda_11_4_tags(write_df: Callable[..., Path], dmatrix: Any, image: str, gone: bool) -> None:
    rep = _check(write_df, dmatrix, f"FROM {image}\n")
    assert ("dockerfile.deleted-tag" in _ids(rep)) is gone


def test_driver_branch_default_and_override(write_df: Callable[..., Path], dmatrix: Any) -> None:
    text = "FROM nvidia/cuda:13.1.0-runtime-ubuntu24.04\n"
    rep = _check(write_df, dmatrix, text)
    f = next(f for f in rep.findings if f.id == "dockerfile.driver-branch")
    assert f.severity == "warning" and "R580" in f.title and "June 2028" in f.message
    rep = _check(write_df, dmatrix, text, target_driver="595.45.04")
    assert "dockerfile.driver-branch" not in _ids(rep)
    # On a day R535 (LTSB until June 2026) is still supported, a CUDA 12.8 image needs more than it.
    rep = check_dockerfile(
        write_df("FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04\n"), dmatrix, today=_dt.date(2026, 1, 5)
    )
    assert any(f.id == "dockerfile.driver-branch" and "R535" in f.title for f in rep.findings)
    rep = check_dockerfile(write_df("FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04\n"), dmatrix, today=DAY)
    assert "dockerfile.driver-branch" not in _ids(rep)


def test_every_if_branch_is_followed_and_named(write_df: Callable[..., Path], dmatrix: Any) -> None:
    text = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nARG GPU\nRUN apt-get update && apt-get install -y python3-pip\n"
        'RUN if [ "$GPU" = "1" ]; then pip install torch==2.1.1; \\\n'
        "    else pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cu999; fi\n"
    )
    rep = _check(write_df, dmatrix, text)
    f = next(f for f in rep.findings if f.id == "dockerfile.index-tag")
    assert "else branch of `if [" in f.message and f.line == 5


def test_pip_options_before_subcommand_and_env_indexes(write_df: Callable[..., Path], dmatrix: Any) -> None:
    base = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
    )
    rep = _check(
        write_df,
        dmatrix,
        base
        + "RUN python3 -m pip --no-cache-dir install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu\n",
    )
    assert "dockerfile.cpu-wheel" in _ids(rep)
    rep = _check(
        write_df,
        dmatrix,
        base + "ENV PIP_INDEX_URL=https://download.pytorch.org/whl/cpu\nRUN pip install torch==2.1.0\n",
    )
    assert _ids(rep).get("dockerfile.cpu-wheel") == [4]
    rep = _check(
        write_df,
        dmatrix,
        base
        + "ARG V=cpu\nRUN PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/$V pip install torch==2.1.0\n",
    )
    assert "dockerfile.cpu-wheel" in _ids(rep)
    rep = _check(
        write_df, dmatrix, base + "ENV UV_TORCH_BACKEND=cpu\nRUN uv pip install --system torch==2.1.0\n"
    )
    assert "dockerfile.cpu-wheel" in _ids(rep)


def test_nightly_channel_is_not_a_release_install(write_df: Callable[..., Path], dmatrix: Any) -> None:
    text = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
        "RUN pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu121\n"
    )
    rep = _check(write_df, dmatrix, text)
    ids = _ids(rep)
    assert ids.get("dockerfile.prerelease") == [3]
    assert "dockerfile.index-tag" not in ids and "dockerfile.unpinned" not in ids


def test_local_project_extras_from_pyproject_and_setup_cfg(
    write_df: Callable[..., Path], dmatrix: Any
) -> None:

    text = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
        "WORKDIR /app\nCOPY . .\nRUN pip install --no-cache-dir .[cpu,dev]\n"
    )
    cfg = "[options]\ninstall_requires =\n    numpy\n[options.extras_require]\ncpu =\n    torch==2.1.1+cpu\n"
    p = write_df(text, **{"setup.cfg": cfg})
    rep = check_dockerfile(p, dmatrix, today=DAY)
    f = next(f for f in rep.findings if f.id == "dockerfile.cpu-wheel")
    assert f.line == 5
    rep = check_dockerfile(
        write_df(text.replace(".[cpu,dev]", ".[dev]"), **{"setup.cfg": cfg}), dmatrix, today=DAY
    )
    assert "dockerfile.cpu-wheel" not in _ids(rep)
    toml = '[project]\nname = "x"\ndependencies = []\n[project.optional-dependencies]\ncpu = ["torch==2.1.1+cpu"]\n'
    (p.parent / "setup.cfg").unlink()
    (p.parent / "pyproject.toml").write_text(toml, encoding="utf-8")
    rep = check_dockerfile(write_df(text), dmatrix, today=DAY)
    assert "dockerfile.cpu-wheel" in _ids(rep)


def test_conda_installer_python_replaces_the_os_python(write_df: Callable[..., Path], dmatrix: Any) -> None:
    base = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
    )
    rep = _check(
        write_df,
        dmatrix,
        base
        + "RUN curl -Lso /m.sh https://repo.anaconda.com/miniconda/Miniconda3-py39_23.1.0-1-Linux-x86_64.sh && bash /m.sh -b\n",
    )
    assert rep.facts["python"]["raw"] == "3.9" and rep.facts["python"]["source"] == "Dockerfile:3"
    rep = _check(
        write_df,
        dmatrix,
        base
        + "RUN wget https://github.com/conda-forge/miniforge/releases/latest/download/Miniforge3-Linux-x86_64.sh\n",
    )
    assert "python" not in rep.facts  # unknown, not Ubuntu's 3.10


def test_setup_py_is_a_cuda_build_only_for_cuda_projects(write_df: Callable[..., Path], dmatrix: Any) -> None:
    base = (
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
    )
    hf = (
        base
        + "RUN git clone https://github.com/huggingface/transformers && cd transformers && python3 setup.py install\n"
    )
    assert "dockerfile.no-nvcc" not in _ids(_check(write_df, dmatrix, hf))
    apex = base + "RUN git clone https://github.com/NVIDIA/apex && cd apex && python3 setup.py install\n"
    assert _ids(_check(write_df, dmatrix, apex)).get("dockerfile.no-nvcc") == [3]
    own = base + "WORKDIR /src\nRUN FORCE_CUDA=1 python3 setup.py develop\n"
    assert "dockerfile.no-nvcc" in _ids(_check(write_df, dmatrix, own))


@pytest.mark.parametrize(
    "base,tf,want",
    [
        # TF pip loads the system CUDA/cuDNN; a python:/OS base has none: warning, fix by the and-cuda extra.
        ("python:3.10-slim", "tensorflow==2.15.0", "and-cuda"),
        # before 2.14 there is no [and-cuda] extra: the only fix is a CUDA base.
        ("ubuntu:20.04", "tensorflow==2.11.0", "nvidia/cuda"),
        # not judged: CPU package, and-cuda extra, a CUDA base, an unknown base.
        ("python:3.10-slim", "tensorflow-cpu==2.15.0", None),
        ("python:3.10-slim", "'tensorflow[and-cuda]==2.15.0'", None),
        ("nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04", "tensorflow==2.15.0", None),
        ("example.com/someone/custom:1", "tensorflow==2.15.0", None),
    ],
)
def test_gpu_tensorflow_on_cpu_base(
    write_df: Callable[..., Path], dmatrix: Any, base: str, tf: str, want: str | None
) -> None:
    rep = _check(write_df, dmatrix, f"FROM {base}\nRUN pip install {tf}\n")
    got = [f for f in rep.findings if f.id == "dockerfile.cpu-base"]
    if want is None:
        assert got == []
        return
    assert len(got) == 1 and got[0].severity == "warning" and got[0].line == 2
    assert want in " ".join(f"{x.text} {x.command or ''}" for x in got[0].fixes)
    if want == "nvidia/cuda":
        assert "predates" in got[0].message and not any(x.command for x in got[0].fixes)


def test_cuda_torch_wheel_on_cpu_base_is_not_judged(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # PyTorch's CUDA wheels carry their CUDA libraries; only the host driver is needed.
    rep = _check(
        write_df,
        dmatrix,
        "FROM python:3.11-slim\nRUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121\n",
    )
    assert not [f for f in rep.findings if f.id in ("dockerfile.cpu-base", "dockerfile.cpu-wheel")]


def test_driver_branch_r570_row(dmatrix: Any) -> None:
    # NVIDIA "Supported Drivers and CUDA Toolkit Versions" (R580-era edition): R570 Production Branch, EOL
    # February 2026, CUDA 12.x.
    from compat.dockerfile.drivers import branches, oldest_supported

    r570 = {b.branch: b for b in branches(dmatrix)}[570]
    assert (r570.designation, r570.eol) == ("production", (2026, 2))
    assert r570.supported_on(_dt.date(2026, 2, 27)) and not r570.supported_on(_dt.date(2026, 3, 1))
    # R535 (LTSB to June 2026) stays the oldest supported branch while R570 lives.
    oldest = oldest_supported(dmatrix, _dt.date(2026, 1, 15))
    assert oldest is not None and oldest.branch == 535


@pytest.mark.parametrize(
    "text,want",
    [
        # xformers 0.0.23's wheels require torch==2.1.1 (PyPI metadata): with torch 2.1.0 in one command, pip fails.
        ("RUN pip install torch==2.1.0 xformers==0.0.23\n", "ResolutionImpossible"),
        # a later command replaces the image's torch with the one xformers pins.
        ("RUN pip install torch==2.4.1\nRUN pip install xformers==0.0.29\n", "uninstalls torch 2.4.1"),
        ("RUN pip install torch==2.5.1\nRUN pip install xformers==0.0.28.post3\n", None),
        ("RUN pip install torch==2.11.0\nRUN pip install xformers==0.0.35\n", None),  # torch>=2.10
        ("RUN pip install torch==2.4.1\nRUN pip install --no-deps xformers==0.0.29\n", None),
        ("RUN pip install torch==2.4.1\nRUN pip install xformers==0.0.19\n", None),  # not in the table
    ],
)
def test_xformers_pin_against_torch(
    write_df: Callable[..., Path], dmatrix: Any, text: str, want: str | None
) -> None:
    rep = _check(write_df, dmatrix, "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\n" + text)
    got = [f for f in rep.findings if f.id == "dockerfile.companion"]
    if want is None:
        assert got == []
        return
    assert len(got) == 1 and got[0].severity == "error" and "xformers" in got[0].title
    assert want in got[0].message and "Requires-Dist" in got[0].message


def test_xformers_fix_is_the_release_built_for_torch(write_df: Callable[..., Path], dmatrix: Any) -> None:
    from packaging.version import Version

    from compat.dockerfile.rules import xformers_for

    assert xformers_for(Version("2.1.0")) == ["0.0.22.post7"]
    assert xformers_for(Version("2.5.1"))[0] == "0.0.29.post1"
    assert xformers_for(Version("1.12.1")) == []
    rep = _check(write_df, dmatrix, "FROM ubuntu:22.04\nRUN pip install torch==2.1.0 xformers==0.0.23\n")
    f = next(f for f in rep.findings if f.id == "dockerfile.companion")
    assert f.fixes[0].command == "pip install xformers==0.0.22.post7"


FA = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.5.8/flash_attn-2.5.8+{}-cp310-cp310-linux_x86_64.whl"


@pytest.mark.parametrize(
    "torch,tags,want",
    [
        ("2.4.1", "cu122torch2.4cxx11abiFALSE", None),
        (
            "2.4.1",
            "cu122torch2.3cxx11abiFALSE",
            "built for torch 2.3",
        ),  # another torch minor: undefined symbol
        ("2.4.1", "cu118torch2.4cxx11abiFALSE", "built for CUDA 11"),  # torch is a cu121 build
    ],
)
def test_flash_attn_wheel_against_torch(
    write_df: Callable[..., Path], dmatrix: Any, torch: str, tags: str, want: str | None
) -> None:
    rep = _check(
        write_df,
        dmatrix,
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\n"
        f"RUN pip install torch=={torch} --index-url https://download.pytorch.org/whl/cu121\n"
        f"RUN pip install {FA.format(tags)}\n",
    )
    got = [f for f in rep.findings if f.id == "dockerfile.companion"]
    if want is None:
        assert got == []
        return
    assert len(got) == 1 and got[0].severity == "error" and want in got[0].title and got[0].line == 3


FA27 = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/flash_attn-2.7.4.post1+{}-cp310-cp310-{}.whl"


@pytest.mark.parametrize(
    "install,tags,want",
    [
        # before 2.7 the pip wheels use the pre-C++11 ABI (pytorch.yaml cxx11_abi)
        (
            "torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121",
            "cu12torch2.4cxx11abiFALSE",
            None,
        ),
        (
            "torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121",
            "cu12torch2.4cxx11abiTRUE",
            "FALSE",
        ),
        # 2.6: the PyPI default (cu124) keeps the old ABI, the cu126 build uses the C++11 ABI
        ("torch==2.6.0", "cu12torch2.6cxx11abiTRUE", "FALSE"),
        ("torch==2.6.0", "cu12torch2.6cxx11abiFALSE", None),
        (
            "torch==2.6.0 --index-url https://download.pytorch.org/whl/cu126",
            "cu12torch2.6cxx11abiFALSE",
            "TRUE",
        ),
        ("torch==2.6.0 --index-url https://download.pytorch.org/whl/cu126", "cu12torch2.6cxx11abiTRUE", None),
        # from 2.7 every Linux wheel uses the C++11 ABI
        ("torch==2.9.1", "cu12torch2.9cxx11abiFALSE", "TRUE"),
        ("torch==2.9.1", "cu12torch2.9cxx11abiTRUE", None),
    ],
)
def test_flash_attn_wheel_cxx11_abi(
    write_df: Callable[..., Path], dmatrix: Any, install: str, tags: str, want: str | None
) -> None:
    rep = _check(
        write_df,
        dmatrix,
        "FROM nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04\n"
        f"RUN pip install {install}\n"
        f"RUN pip install {FA27.format(tags, 'linux_x86_64')}\n",
    )
    got = [f for f in rep.findings if f.id == "dockerfile.companion" and "cxx11abi" in f.title]
    if want is None:
        assert got == []
        return
    assert len(got) == 1
    f = got[0]
    assert f.severity == "error" and f.line == 3 and "undefined symbol" in f.message
    assert f.title.endswith(f"uses cxx11abi{want}")
    assert f.facts["torch_cxx11_abi"] == ("true" if want == "TRUE" else "false")
    # the fix names the same wheel with the torch's ABI flag
    right = (
        FA27.format(tags, "linux_x86_64")
        .split("/")[-1]
        .replace("cxx11abiTRUE" if want == "FALSE" else "cxx11abiFALSE", f"cxx11abi{want}")
    )
    assert right.removesuffix("-cp310-cp310-linux_x86_64.whl") in f.fixes[0].text


@pytest.mark.parametrize(
    "text",
    [
        # the torch ABI is unknown: no ABI finding
        "FROM pytorch/pytorch:2.4.1-cuda12.1-cudnn9-devel\n",  # torch from the base image
        "FROM nvcr.io/nvidia/pytorch:24.05-py3\n",  # NGC: torch built from source
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\nRUN conda install -y pytorch==2.4.1 pytorch-cuda=12.1 -c pytorch -c nvidia\n",
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\nRUN pip install torch --pre --index-url https://download.pytorch.org/whl/nightly/cu121\n",
    ],
)
def test_flash_attn_abi_unknown_torch_is_not_judged(
    write_df: Callable[..., Path], dmatrix: Any, text: str
) -> None:
    rep = _check(
        write_df,
        dmatrix,
        text + f"RUN pip install {FA27.format('cu12torch2.4cxx11abiTRUE', 'linux_x86_64')}\n",
    )
    assert [f for f in rep.findings if "cxx11abi" in f.title] == []


def test_flash_attn_abi_windows_wheel_is_not_judged(write_df: Callable[..., Path], dmatrix: Any) -> None:
    base = "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\nRUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121\n"
    win = _check(
        write_df, dmatrix, base + f"RUN pip install {FA27.format('cu12torch2.4cxx11abiTRUE', 'win_amd64')}\n"
    )
    assert [f for f in win.findings if "cxx11abi" in f.title] == []
    lin = _check(
        write_df,
        dmatrix,
        base + f"RUN pip install {FA27.format('cu12torch2.4cxx11abiTRUE', 'linux_x86_64')}\n",
    )
    assert len([f for f in lin.findings if "cxx11abi" in f.title]) == 1


def test_flash_attn_percent_encoded_wheel_url_is_read(write_df: Callable[..., Path], dmatrix: Any) -> None:
    # release asset URLs as GitHub links them: "+" written %2B
    url = FA27.format("cu12torch2.4cxx11abiTRUE", "linux_x86_64").replace("+", "%2B")
    rep = _check(
        write_df,
        dmatrix,
        "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\n"
        "RUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121\n"
        f"RUN pip install {url}\n",
    )
    got = [f for f in rep.findings if "cxx11abi" in f.title]
    assert len(got) == 1 and got[0].line == 3 and "cxx11abiFALSE" in got[0].fixes[0].text


def test_cxx11_abi_table_rows(dmatrix: Any) -> None:
    from packaging.version import Version

    abi = dmatrix.torch_cxx11_abi
    assert abi(Version("2.4.1"), "cu121") is False
    assert abi(Version("2.5.1+cu124"), "cpu-cxx11-abi") is True
    assert abi(Version("2.6.0"), "cu124") is False and abi(Version("2.6.0"), "cu126") is True
    assert abi(Version("2.7.0"), "cu118") is True and abi(Version("2.9.1"), "cpu") is True
    assert abi(Version("2.6.0"), "rocm6.2.4") is None  # ROCm builds are not covered


def test_cxx11_abi_table_is_validated(tmp_path: Path) -> None:
    import shutil

    from compat.errors import MatrixError
    from compat.matrix import load_matrix

    root = Path(__file__).resolve().parents[2] / "matrix"
    for f in root.glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    text = (tmp_path / "pytorch.yaml").read_text(encoding="utf-8")
    bad = text.replace('  - torch: ">=2.7"\n    cxx11: true\n', '  - torch: ">=2.7"\n    cxx11: "yes"\n', 1)
    assert bad != text
    (tmp_path / "pytorch.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(MatrixError, match="cxx11"):
        load_matrix(tmp_path)


@pytest.mark.parametrize(
    "text,line",
    [
        # open-mmlab/mmpose docker/Dockerfile before 21ee0395 (tests/data/dockerfile/wild), shortened.
        (
            'ARG PYTORCH="1.6.0"\nARG CUDA="10.1"\nFROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn7-devel\n'
            "RUN apt-get update && apt-get install -y git\n",
            4,
        ),
        # the key is fetched after the update: too late
        (
            "FROM pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel\nRUN apt update\n"
            "RUN apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/"
            "x86_64/3bf863cc.pub\n",
            2,
        ),
        # a later stage FROM the stale stage runs its own update
        (
            "FROM pytorch/pytorch:1.8.1-cuda10.2-cudnn7-devel AS base\nRUN pip install numpy\n"
            "FROM base\nRUN apt-get -y update\n",
            4,
        ),
    ],
)
def test_apt_key_rotation_on_stale_pytorch_devel_base(
    write_df: Callable[..., Path], dmatrix: Any, text: str, line: int
) -> None:
    rep = _check(write_df, dmatrix, text)
    errs = [f for f in rep.findings if f.id == "dockerfile.apt-key"]
    assert [(f.severity, f.line) for f in errs] == [("error", line)]
    assert "NO_PUBKEY A4B469963BF863CC" in errs[0].message
    assert any(fx.command and "sources.list.d/cuda.list" in fx.command for fx in errs[0].fixes)


@pytest.mark.parametrize(
    "text",
    [
        # new key fetched first (the fixed mmpose file)
        "FROM pytorch/pytorch:1.6.0-cuda10.1-cudnn7-devel\n"
        "RUN apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64/"
        "3bf863cc.pub\nRUN apt-get update\n",
        # stale lists removed in the same RUN (open-mmlab/mmdetection3d@3e965912)
        "FROM pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel\n"
        "RUN rm /etc/apt/sources.list.d/cuda.list && rm /etc/apt/sources.list.d/nvidia-ml.list && apt-get update\n",
        # cuda-keyring installed
        "FROM pytorch/pytorch:1.10.0-cuda11.3-cudnn8-devel\n"
        "RUN wget https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64/cuda-keyring_1.0-1_all.deb"
        " && dpkg -i cuda-keyring_1.0-1_all.deb && apt-get update\n",
        # runtime images are plain ubuntu (no NVIDIA apt lists); 1.12+ is not listed (unknown)
        "FROM pytorch/pytorch:1.6.0-cuda10.1-cudnn7-runtime\nRUN apt-get update\n",
        "FROM pytorch/pytorch:1.12.1-cuda11.3-cudnn8-devel\nRUN apt-get update\n",
        # no update at all
        "FROM pytorch/pytorch:1.6.0-cuda10.1-cudnn7-devel\nRUN pip install mmcv\n",
    ],
)
def test_apt_key_rotation_not_claimed(write_df: Callable[..., Path], dmatrix: Any, text: str) -> None:
    rep = _check(write_df, dmatrix, text)
    assert "dockerfile.apt-key" not in _ids(rep)


def test_stale_apt_key_rows_are_validated() -> None:
    from compat.dockerfile.images import validate_document

    doc: dict[str, Any] = {
        "updated": DAY,
        "stale_apt_key": [{"image": "pytorch/pytorch", "torch_below": 1.12}],
    }
    problems = validate_document(doc)
    assert any("missing 'source'" in p for p in problems)
    assert any("missing 'evidence'" in p for p in problems)
    assert any("'torch_below' must be a quoted string" in p for p in problems)


def test_torch_2_10_cu129_build_exists(write_df: Callable[..., Path]) -> None:
    # huggingface/diffusers docker/diffusers-pytorch-cuda at 537b7fc5 (tests/data/dockerfile/wild): the cu129
    # build of 2.10.0 is not in RELEASE.md but is published (the shipped pytorch.yaml cites the PyTorch issues).
    from compat.matrix import load_matrix

    shipped = load_matrix(Path(__file__).resolve().parents[2] / "matrix")
    head = "FROM python:3.10-slim\nRUN pip install torch==2.10.0 --index-url "
    ok = _check(write_df, shipped, head + "https://download.pytorch.org/whl/cu129\n")
    assert "dockerfile.index-tag" not in _ids(ok)
    bad = _check(write_df, shipped, head + "https://download.pytorch.org/whl/cu124\n")
    assert _ids(bad).get("dockerfile.index-tag") == [2]


WILD_FILES = Path(__file__).resolve().parents[1] / "data" / "dockerfile" / "wild" / "files"


def test_unpinned_torch_that_resolves_past_the_base_cuda_major(write_df: Callable[..., Path]) -> None:
    # huggingface/diffusers docker/diffusers-pytorch-gpu at d463c797 (wild corpus): `pip install torch` with the
    # cu116 extra index on nvidia/cuda:11.7.1 (Python 3.8). Built today pip takes PyPI's newest torch for 3.8,
    # a CUDA 12 build: a warning that names it and a CUDA 11 torch to pin instead.
    from compat.matrix import load_matrix

    shipped = load_matrix(Path(__file__).resolve().parents[2] / "matrix")
    real = WILD_FILES / "diffusers--docker-diffusers-pytorch-gpu-dockerfile--d463c797.Dockerfile"
    rep = check_dockerfile(real, shipped, today=DAY)
    (f,) = [f for f in rep.findings if f.id == "dockerfile.unpinned"]
    assert (f.severity, f.line) == ("warning", 24)
    assert f.facts["base_cuda"] == "11.7.1" and f.facts["torch_cuda"].startswith("12.")
    assert f"torch {f.facts['torch']}" in f.title and "driver" in f.message
    assert (
        f.fixes[0].command is not None
        and "--index-url https://download.pytorch.org/whl/cu11" in f.fixes[0].command
    )
    # the same unpinned install on a base of the CUDA major it resolves to, or on a CPU base: the info note only
    for base in ("nvidia/cuda:13.0.2-runtime-ubuntu24.04", "python:3.10-slim"):
        rep = _check(write_df, shipped, f"FROM {base}\nRUN pip install torch\n")
        assert [x.severity for x in rep.findings if x.id == "dockerfile.unpinned"] == ["info"], base


@pytest.mark.parametrize(
    "run,flagged",
    [
        ("pip install flash-attn==2.7.4.post1", True),
        ("python3 -m pip --no-cache-dir install flash_attn", True),
        ("uv pip install --system git+https://github.com/Dao-AILab/flash-attention.git@v2.8.3", True),
        # huggingface/peft docker/peft-gpu before 070af1d3 (tests/data/dockerfile/wild)
        ("conda run -n peft pip install git+https://github.com/NetEase-FuXi/EETQ.git", True),
        ("pip install flash-attn --no-build-isolation", False),
        ("uv pip install --system --no-build-isolation-package flash-attn flash-attn", False),
        ("PIP_NO_BUILD_ISOLATION=0 pip install flash-attn", False),
        (
            "pip install https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/"
            "flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
            False,
        ),
        ("pip install xformers", False),
    ],
)
def test_build_isolation_for_extensions_that_import_torch(
    write_df: Callable[..., Path], dmatrix: Any, run: str, flagged: bool
) -> None:
    rep = _check(
        write_df,
        dmatrix,
        f"FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch==2.6.0\nRUN {run}\n",
    )
    errs = [f for f in rep.findings if f.id == "dockerfile.build-isolation"]
    assert [(f.severity, f.line) for f in errs] == ([("error", 3)] if flagged else [])
    if flagged:
        assert "No module named 'torch'" in errs[0].message
        assert errs[0].fixes[0].command is not None and "--no-build-isolation" in errs[0].fixes[0].command


@pytest.mark.parametrize(
    "run,glued",
    [
        # huggingface/diffusers docker/diffusers-pytorch-cuda before 1a5797c6 (tests/data/dockerfile/wild)
        ("python3 -m pip install torch \\\n    torchaudio \\\n    python3 -m pip install numpy scipy", True),
        ("pip install torch \\\n  apt-get install -y git", False),  # glued, but without `-m`: not judged
        ("python3 -m pip install torch && \\\n    python3 -m pip install numpy", False),
        ("pip install --upgrade pip setuptools wheel", False),
        ("pip install python-dotenv pipx", False),
    ],
)
def test_command_glued_onto_pip_install(
    write_df: Callable[..., Path], dmatrix: Any, run: str, glued: bool
) -> None:
    rep = _check(write_df, dmatrix, f"FROM python:3.10-slim\nRUN {run}\n")
    errs = [f for f in rep.findings if f.id == "dockerfile.glued-command"]
    assert [(f.severity, f.line) for f in errs] == ([("error", 2)] if glued else [])
    if glued:
        assert "python3 -m pip install" in errs[0].title and "&&" in errs[0].fixes[0].text
