"""explain's advice fits the log: an OOM fix names only the log's framework, invents no flags and shows Python as
Python, not a shell command; the no-kernel-image fix names no foreign architecture."""

from __future__ import annotations

OOM_LOG = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "23.65 GiB of which 1.12 GiB is free."
)


def test_oom_advice_invents_no_flags_and_python_is_not_a_shell_command() -> None:
    from compat.explain import diagnose_text
    from compat.explain.render import render

    diags = diagnose_text(OOM_LOG)
    oom = next(d for d in diags if d.category == "gpu_oom")
    assert all("--batch-size" not in (f.command or "") for f in oom.fixes)
    py = [f for f in oom.fixes if (f.command or "").startswith("torch.")]
    assert py and all(f.kind == "python" for f in py)
    text = render(diags, "log", 1)
    assert "$ torch.autocast" not in text and "torch.autocast(" in text


def test_no_kernel_image_advice_names_no_foreign_arch() -> None:
    from compat.explain import diagnose_text

    log = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    d = next(d for d in diagnose_text(log) if d.category == "arch_not_supported")
    assert all('TORCH_CUDA_ARCH_LIST="3.5"' not in (f.command or "") for f in d.fixes)


TF_OOM_LOG = (
    "(0) Resource exhausted: OOM when allocating tensor with shape[8,64,224,224] and type float on "
    "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
)


def test_oom_advice_names_only_the_framework_of_the_log() -> None:
    from compat.explain import diagnose_text

    tf = next(d for d in diagnose_text(TF_OOM_LOG) if d.category == "gpu_oom")
    assert not [
        f for f in tf.fixes if "torch" in f"{f.text} {f.command}".lower() or "XLA_" in (f.command or "")
    ]
    torch = next(d for d in diagnose_text(OOM_LOG) if d.category == "gpu_oom")
    assert not [f for f in torch.fixes if "XLA" in f"{f.text} {f.command}" or "tf." in (f.command or "")]
    assert any("torch.autocast" in (f.command or "") for f in torch.fixes)
