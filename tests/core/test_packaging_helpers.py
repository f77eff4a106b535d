"""Requirement strings, distribution names and wheel file names are read with `packaging` (issue 12, item 7)."""

from __future__ import annotations

import pytest
from packaging.utils import canonicalize_name

from compat.dockerfile.actions import norm_name
from compat.dockerfile.pip import _framework_wheel
from compat.dockerfile.rules import _name_version
from compat.installed import nvidia_pins

TORCH_URL = "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-cp310-linux_x86_64.whl"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (TORCH_URL, ("torch", "2.1.0+cu118", "3.10")),
        (TORCH_URL + "#sha256=0123abcd", ("torch", "2.1.0+cu118", "3.10")),
        ("/tmp/tensorflow_gpu-2.4.0-cp38-cp38-manylinux2010_x86_64.whl", ("tensorflow-gpu", "2.4.0", "3.8")),
        ("torch-2.3.1-cp312-cp312-manylinux1_x86_64.whl", ("torch", "2.3.1", "3.12")),
        # not a framework, not a CPython wheel, not a wheel file name, a version packaging cannot read
        ("https://x/torchvision-0.16.0-cp310-cp310-linux_x86_64.whl", None),
        ("https://x/torch-2.1.0-py3-none-any.whl", None),
        ("git+https://github.com/pytorch/pytorch@v2.1.0", None),
        ("https://x/torch-2.1.0.whl", None),
        ("https://x/torch-" + "9" * 5000 + "-cp311-cp311-linux_x86_64.whl", None),
    ],
)
def test_framework_wheels_by_file_name(target: str, expected: tuple[str, str, str] | None) -> None:
    assert _framework_wheel(target) == expected


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        ("torch==2.1.0+cu118", ("torch", "2.1.0+cu118", True)),
        ("Torch_Vision[extra]===0.16.0", ("torch-vision", "0.16.0", True)),
        ("torch>=2,<3", ("torch", None, True)),
        ("torch==2.1.*", ("torch", None, True)),  # a wildcard is not one version
        ("xformers", ("xformers", None, False)),
        ("numpy<2;python_version<'3.13'", ("numpy", None, True)),
        ("./local_pkg", ("", None, False)),
        (
            "flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
            ("flash-attn-2-5-8", None, True),
        ),
    ],
)
def test_requirement_words_of_a_pip_command(req: str, expected: tuple[str, str | None, bool]) -> None:
    assert _name_version(req) == expected


TF_REQUIRES = [
    "absl-py>=1.0.0",
    'nvidia-cublas-cu12==12.3.4.1; extra == "and-cuda"',
    "nvidia-cudnn-cu12 (==8.9.7.29) ; extra == 'and_cuda'",  # legacy parentheses, other quotes, unnormalised
    'nvidia-nccl-cu12==2.19.3; extra == "and-cuda" and platform_machine == "x86_64"',
    'nvidia-cuda-runtime-cu12>=12.3; extra == "and-cuda"',  # not a pin
    'nvidia-cufft-cu12==11.*; extra == "and-cuda"',  # not one version
    'tensorflow-io-gcs-filesystem>=0.23.1; python_version < "3.12"',
    "not a requirement ===",
]
TORCH_REQUIRES = [
    'nvidia-cuda-runtime-cu12==12.1.105; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia_cudnn_cu12==8.9.2.26; platform_system == "Linux" and platform_machine == "x86_64"',
    'opt-einsum>=3.3; extra == "opt-einsum"',
    'nvidia-nvtx-cu12==12.1.105; extra == "profiling"',
]


def test_nvidia_pins_of_an_extra() -> None:
    assert nvidia_pins(TF_REQUIRES, extra="and-cuda") == {
        "nvidia-cublas-cu12": "12.3.4.1",
        "nvidia-cudnn-cu12": "8.9.7.29",
        "nvidia-nccl-cu12": "2.19.3",
    }
    assert nvidia_pins(TF_REQUIRES, extra="and_cuda") == nvidia_pins(TF_REQUIRES, extra="and-cuda")
    assert nvidia_pins(TF_REQUIRES) == {}


def test_nvidia_pins_without_an_extra_ignore_platform_clauses() -> None:
    # The pins say what the wheel was built against, on whatever machine they are read.
    assert nvidia_pins(TORCH_REQUIRES) == {
        "nvidia-cuda-runtime-cu12": "12.1.105",
        "nvidia-cudnn-cu12": "8.9.2.26",
    }


@pytest.mark.parametrize(
    "name", ["Torch", "tensorflow_cpu", "jax.lib", "A__b--C..d", "nvidia-cudnn-cu12", ""]
)
def test_one_name_rule(name: str) -> None:
    assert norm_name(name) == canonicalize_name(name)
