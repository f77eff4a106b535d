"""Issue 27: a Dockerfile fix installs what it says: TensorFlow 2.15.0's [and-cuda] pin does not install from PyPI
(its extra pins TensorRT wheels that are not there), so the fix installs 2.15.0.post1, the same build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat.dockerfile import check_dockerfile


@pytest.mark.parametrize(
    "dockerfile",
    [
        "FROM python:3.10-slim\nRUN pip install tensorflow==2.15.0\n",
        "FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
        "RUN pip install tensorflow==2.15.0\n",
        "FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04\nRUN pip install tensorflow-cpu==2.15.0\n",
    ],
)
def test_the_and_cuda_fix_for_2_15_0_is_the_post_release(
    dockerfile: str, write_df: Callable[..., Path], dmatrix: Any
) -> None:
    cmds = [
        x.command or "" for f in check_dockerfile(write_df(dockerfile), dmatrix).findings for x in f.fixes
    ]
    assert "pip install 'tensorflow[and-cuda]==2.15.0.post1'" in cmds, cmds
    assert not [c for c in cmds if "[and-cuda]==2.15.0'" in c]
