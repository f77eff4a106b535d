"""The first diagnosis is the root cause, not the loudest symptom (logs joined from real excerpts)."""

from __future__ import annotations

import pytest

from tests.explain.helpers import log


@pytest.mark.parametrize(
    ("first", "second", "root"),
    [
        # "driver too old" followed by "no CUDA GPUs are available" is driver_too_old
        ("yolov5-2389", "cor-gs-23", "driver_too_old"),
        ("cor-gs-23", "yolov5-2389", "driver_too_old"),
        # a device-side assert followed by an illegal memory access is illegal_memory_access
        ("pytorch-unet-258", "tegnas-19", "illegal_memory_access"),
        # a DataLoader worker killed by a bus error is dataloader_shm, not segfault
        ("neuralclassifier-3", "gpt2-chinese-172", "dataloader_shm"),
        ("gpt2-chinese-172", "neuralclassifier-3", "dataloader_shm"),
        # one rank's OOM makes the others time out in NCCL
        ("ofa-271", "pytorch-16417", "gpu_oom"),
        # an Xid explains the illegal memory access that follows it
        ("tegnas-19", "gpu-burn-1", "hardware_xid"),
        # a kernel/library mismatch explains a missing GPU
        ("pytorch-67991", "easydiffusion-379", "nvml_mismatch"),
        # the OOM killer explains the NCCL timeout on the surviving ranks
        ("llamafactory-7396", "docker-for-linux-1001", "host_oom"),
        # a cuDNN that cannot initialise next to a GPU OOM: the OOM is the cause
        ("tensorflow-60913", "azure-ml-notebooks-880", "gpu_oom"),
    ],
)
def test_root_cause_first(first: str, second: str, root: str, diagnose) -> None:  # type: ignore[no-untyped-def]
    diags = diagnose(log(first) + "\n" + log(second))
    assert diags[0].category == root, [(d.category, d.confidence) for d in diags]
    # a symptom of another category is still reported, after the cause and with a lower confidence
    for d in diags[1:]:
        assert d.confidence < diags[0].confidence


def test_suppressed_symptom_names_its_cause(diagnose) -> None:  # type: ignore[no-untyped-def]
    diags = diagnose(log("yolov5-2389") + "\n" + log("cor-gs-23"))
    symptom = next(d for d in diags if d.category == "no_gpu_visible")
    assert "consequence of driver_too_old" in symptom.explanation


def test_weak_generic_message_never_outranks_a_specific_one(diagnose) -> None:  # type: ignore[no-untyped-def]
    # "NCCL INFO ... -> 2" is generic; a real GPU OOM in the same log is the cause.
    diags = diagnose(log("nccl-1381") + "\n" + log("mgfn-35"))
    assert diags[0].category == "gpu_oom"


def test_nothing_recognised_gives_an_empty_list(diagnose) -> None:  # type: ignore[no-untyped-def]
    assert diagnose("epoch 1 loss 0.31\nepoch 2 loss 0.27\nTraining finished.\n") == []
    assert diagnose("") == []


def test_benign_nccl_plugin_probe_is_not_a_missing_library(diagnose) -> None:  # type: ignore[no-untyped-def]
    line = (
        "c39f5cf046aa:4533:4533 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object "
        "file: No such file or directory No plugin found (libnccl-net.so), using internal implementation"
    )
    assert [d.category for d in diagnose(line)] == []
