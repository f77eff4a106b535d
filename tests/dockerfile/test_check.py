"""Findings for Dockerfiles written to show one problem each (and their fixed twins)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from compat.dockerfile import check_dockerfile
from compat.findings import Finding, Report

WriteDf = Callable[..., Path]


def check(p: Path, m: Any, **kw: Any) -> Report:
    return check_dockerfile(p, m, **kw)


def by_id(r: Report, fid: str) -> list[Finding]:
    return [f for f in r.findings if f.id == fid]


def ids(r: Report) -> set[str]:
    return {f.id for f in r.findings}


def test_cpu_wheel_in_cuda_image(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
        "RUN pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cpu\n"
    )
    f = by_id(check(p, dmatrix), "dockerfile.cpu-wheel")
    assert len(f) == 1 and f[0].severity == "error" and f[0].line == 3
    ok = write_df("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install torch==2.1.1\n", name="ok")
    assert "dockerfile.cpu-wheel" not in ids(check(ok, dmatrix))


def test_cpu_wheel_forms(write_df: WriteDf, dmatrix: Any) -> None:
    for i, line in enumerate(
        [
            "pip install torch==2.1.1+cpu -f https://download.pytorch.org/whl/torch_stable.html",
            "pip install tensorflow-cpu==2.15.0",
        ]
    ):
        p = write_df(f"FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04\nRUN {line}\n", name=f"d{i}")
        assert "dockerfile.cpu-wheel" in ids(check(p, dmatrix)), line
    # Not a CUDA image: a CPU wheel is what it should be.
    p = write_df(
        "FROM python:3.11-slim\nRUN pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cpu\n",
        name="cpu",
    )
    assert "dockerfile.cpu-wheel" not in ids(check(p, dmatrix))


def test_index_tag_only_index_fails_extra_is_ignored(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM python:3.11\nRUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu130\n"
    )
    f = by_id(check(p, dmatrix), "dockerfile.index-tag")
    assert f and f[0].severity == "error" and "No matching distribution" in f[0].message
    p = write_df(
        "FROM python:3.11\nRUN pip install torch==2.5.1 --extra-index-url https://download.pytorch.org/whl/cu130\n",
        name="extra",
    )
    r = check(p, dmatrix)
    f = by_id(r, "dockerfile.index-tag")
    assert f and f[0].severity == "warning" and "silently" in f[0].message
    assert r.facts["torch"]["raw"] == "2.5.1"  # PyPI's default build is what gets installed
    p = write_df(
        "FROM python:3.11\nRUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121\n",
        name="good",
    )
    r = check(p, dmatrix)
    assert "dockerfile.index-tag" not in ids(r) and r.facts["torch"]["raw"] == "2.5.1+cu121"


def test_tensorflow_needs_system_cudnn(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
        "RUN pip install tensorflow==2.15.0\n"
    )
    f = by_id(check(p, dmatrix), "dockerfile.cudnn")
    assert f and f[0].severity == "error" and f[0].line == 3 and "libcudnn" in f[0].message
    for name, text in (
        ("and-cuda", "pip install 'tensorflow[and-cuda]==2.15.0'"),
        ("x", "pip install tensorflow==2.15.0"),
    ):
        base = "12.2.2-runtime" if name == "and-cuda" else "12.2.2-cudnn8-runtime"
        q = write_df(f"FROM nvidia/cuda:{base}-ubuntu22.04\nRUN {text}\n", name=name)
        assert "dockerfile.cudnn" not in ids(check(q, dmatrix)), name


def test_second_cuda_stack(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\nRUN pip install torch==2.1.1\n")
    f = by_id(check(p, dmatrix), "dockerfile.second-cuda")
    assert f and f[0].severity == "warning" and "2-3 GB" in f[0].message
    same = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install torch==2.1.1\n", name="same"
    )
    f = by_id(check(same, dmatrix), "dockerfile.second-cuda")
    assert f and f[0].severity == "info"


def test_nvcc_major_mismatch_with_extension_build(write_df: WriteDf, dmatrix: Any) -> None:
    text = (
        "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
        "RUN pip install torch==2.1.1\nRUN pip install flash-attn --no-build-isolation\n"
    )
    f = by_id(check(write_df(text), dmatrix), "dockerfile.nvcc-torch")
    assert f and f[0].severity == "error" and f[0].line == 3 and "mismatches" in f[0].message
    no_build = write_df(
        "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN pip install torch==2.1.1\n", name="nb"
    )
    assert by_id(check(no_build, dmatrix), "dockerfile.nvcc-torch")[0].severity == "warning"
    fixed = write_df(
        text.replace("torch==2.1.1", "torch==2.1.1 --index-url https://download.pytorch.org/whl/cu118"),
        name="fixed",
    )
    assert "dockerfile.nvcc-torch" not in ids(check(fixed, dmatrix))


def test_arch_list_the_toolkit_cannot_compile(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df('FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="3.5;7.0;8.0+PTX"\n')
    f = by_id(check(p, dmatrix), "dockerfile.arch-list")
    assert f and f[0].line == 2 and "3.5" in f[0].title
    ok = write_df(
        'FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nARG TORCH_CUDA_ARCH_LIST="Volta;Turing;Ampere"\n',
        name="ok",
    )
    assert "dockerfile.arch-list" not in ids(check(ok, dmatrix))
    new = write_df(
        'FROM nvidia/cuda:11.7.1-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="8.0 9.0"\n', name="new"
    )
    assert "dockerfile.arch-list" in ids(check(new, dmatrix))


def test_arch_list_vs_target_gpu(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df('FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="7.0 7.5 8.0"\n')
    f = by_id(check(p, dmatrix, target_cc="9.0"), "dockerfile.arch-list")
    assert f and "no kernels" in f[0].title
    assert "dockerfile.arch-list" not in ids(check(p, dmatrix, target_cc="8.6"))  # sm_80 SASS runs on 8.6


def test_base_cuda_vs_target_driver(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    r = check(p, dmatrix, target_driver="545.23.08")
    rq = by_id(r, "dockerfile.require-cuda")
    assert rq and rq[0].severity == "error" and "525" in rq[0].message and rq[0].line == 1
    assert by_id(r, "driver.cuda")
    # R535 is listed in the 12.4 image's NVIDIA_REQUIRE_CUDA: starts under minor-version compatibility.
    r = check(p, dmatrix, target_driver="535.104.05")
    assert not by_id(r, "dockerfile.require-cuda") and by_id(r, "driver.cuda")[0].severity == "warning"
    disabled = write_df(
        "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_DISABLE_REQUIRE=1\n", name="off"
    )
    assert not by_id(check(disabled, dmatrix, target_driver="545.23.08"), "dockerfile.require-cuda")
    assert not by_id(check(p, dmatrix, target_driver="550.54.15"), "driver.cuda")


def test_target_gpu_vs_wheel_archs(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("FROM python:3.11\nRUN pip install torch==2.1.1\n")
    r = check(p, dmatrix, target_cc="12.0")
    assert by_id(r, "wheel.arch") and by_id(r, "wheel.arch")[0].line == 2


def test_python_vs_framework(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu24.04\nRUN apt-get install -y python3 python3-pip\n"
        "RUN pip install torch==2.1.1\n"
    )
    f = by_id(check(p, dmatrix), "python.framework")
    assert f and f[0].line == 3 and "3.12" in f[0].title


def test_unpinned_resolves_to_newest_for_the_python(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu20.04\nRUN apt-get install -y python3-pip\nRUN pip install torch\n"
    )
    r = check(p, dmatrix)
    f = by_id(r, "dockerfile.unpinned")
    assert f and "2.4.1" in f[0].title  # the newest fixture release with Python 3.8 wheels
    assert r.facts["torch"]["raw"] == "2.4.1"


def test_multistage_inherits_and_copy_from(write_df: WriteDf, dmatrix: Any) -> None:
    text = (
        "ARG CUDA=12.1.0\nFROM nvidia/cuda:${CUDA}-devel-ubuntu22.04 AS build\nRUN pip install torch==2.1.1\n"
        "FROM build AS test\nRUN echo ok\n"
        "FROM nvidia/cuda:${CUDA}-runtime-ubuntu22.04\nCOPY --from=build /usr/local/lib/python3.10/dist-packages "
        "/usr/local/lib/python3.10/dist-packages\n"
    )
    r = check(write_df(text), dmatrix)
    stages = r.extra["stages"]
    assert [s["name"] for s in stages] == ["build", "test", None]
    assert stages[1]["from_stage"] == "build" and stages[1]["facts"]["torch"]["raw"] == "2.1.1"
    assert stages[2]["facts"]["torch"]["source"] == "Dockerfile:7"
    assert stages[2]["facts"]["cuda"]["raw"] == "12.1.0"


def test_build_args_override_defaults(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "ARG CUDA=12.1.0\nFROM nvidia/cuda:${CUDA}-runtime-ubuntu22.04\nARG TORCH=2.1.1\n"
        "RUN pip install torch==${TORCH}\n"
    )
    r = check(p, dmatrix, build_args={"CUDA": "11.8.0", "TORCH": "2.5.1"})
    assert r.facts["cuda"]["raw"] == "11.8.0" and r.facts["torch"]["raw"] == "2.5.1"


def test_unset_version_variable_is_info_not_guess(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install torch==${TORCH_VERSION}\n")
    r = check(p, dmatrix)
    f = by_id(r, "dockerfile.unresolved")
    assert f and f[0].severity == "info" and "torch" not in r.facts


def test_requirements_from_context(write_df: WriteDf, dmatrix: Any, tmp_path: Path) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu22.04\nWORKDIR /app\nCOPY requirements.txt .\n"
        "RUN pip install -r requirements.txt\n",
        **{
            "requirements.txt": "numpy\n--extra-index-url https://download.pytorch.org/whl/cpu\ntorch==2.1.1\n"
        },
    )
    r = check(p, dmatrix)
    f = by_id(r, "dockerfile.cpu-wheel")
    assert f and f[0].line == 4 and r.facts["torch"]["raw"] == "2.1.1+cpu"
    missing = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN pip install -r reqs/gpu.txt\n", name="m"
    )
    assert by_id(check(missing, dmatrix), "dockerfile.requirements")


def test_heredoc_run_installs_are_read(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN <<EOF\nset -e\n"
        "pip install torch==2.1.1 --index-url https://download.pytorch.org/whl/cpu\nEOF\n"
    )
    f = by_id(check(p, dmatrix), "dockerfile.cpu-wheel")
    assert f and f[0].line == 4


def test_conda_pytorch_cuda(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\n"
        "RUN conda install -y python=3.10 pytorch==2.1.1 pytorch-cuda=12.1 -c pytorch -c nvidia\n"
    )
    r = check(p, dmatrix)
    assert r.facts["torch"]["raw"] == "2.1.1+cu121" and r.facts["python"]["raw"] == "3.10"
    assert by_id(r, "dockerfile.nvcc-torch")


def test_unknown_instruction_is_an_error_finding(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("FROM ubuntu:22.04\nRUNN pip install torch\n")
    f = by_id(check(p, dmatrix), "dockerfile.syntax")
    assert f and f[0].severity == "error" and f[0].line == 2


def test_arg_without_value_in_from(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df("ARG BASE\nFROM ${BASE}\nRUN pip install torch==2.1.1\n")
    r = check(p, dmatrix)
    assert by_id(r, "dockerfile.arg-unset")[0].line == 2
    assert r.extra["stages"][0]["facts"]["torch"]["raw"] == "2.1.1"


def test_every_finding_has_a_line(write_df: WriteDf, dmatrix: Any) -> None:
    p = write_df(
        "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN pip install torch==2.1.1 tensorflow==2.15.0\n"
    )
    r = check(p, dmatrix, target_driver="470.82.01", target_gpu="RTX 4090")
    assert r.findings and all(isinstance(f.line, int) for f in r.findings)
    doc: dict[str, Any] = r.to_json()
    assert all("line" in f for f in doc["findings"]) and doc["stages"][0]["base"].startswith("nvidia/cuda")
