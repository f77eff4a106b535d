"""Issue 27: every fix installs what it says: a post release where the plain [and-cuda] pin does not install, the
CUDA and cuDNN of a holistic `tensorflow[and-cuda]` fix as its `changes` (so the closure sweep re-checks it), and the
CUDA and cuDNN a native-Windows TensorFlow GPU release needs, named in its fix."""

from __future__ import annotations

from packaging.version import Version

from compat.findings import Finding, Fix
from compat.installcmd import PIP, tf_and_cuda, tf_command
from compat.pipeline.check import check_stack
from tests.solver.sweep import closure_failures, facts_of

A100_535 = {"gpu": "A100", "driver": "535.183.01", "python": "3.10"}


def _fixes(report, fid: str) -> list[Fix]:  # type: ignore[no-untyped-def]
    found: list[Finding] = [f for f in report.findings if f.id == fid]
    assert found, [f.id for f in report.findings]
    return [x for f in found for x in f.fixes]


def test_the_matrix_says_which_release_installs_with_and_cuda_for_2_15_0(matrix) -> None:  # type: ignore[no-untyped-def]
    r = matrix.tf_release(Version("2.15.0"))
    assert r.and_cuda_release == "2.15.0.post1" and "tensorrt" in (r.and_cuda_broken or "")
    assert matrix.tf_release(Version("2.15.1")).and_cuda_release == "2.15.1"


def test_tf_2_15_0_on_cuda_11_8_gets_the_post_release_not_the_broken_pin(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(tensorflow="2.15.0", cuda="11.8", cudnn="8.6", **A100_535)
    rep = check_stack(facts, matrix)
    cmds = [x.command or "" for f in rep.findings for x in f.fixes]
    assert not [c for c in cmds if "[and-cuda]==2.15.0'" in c], cmds
    fix = _fixes(rep, "tensorflow.cuda")[0]
    assert fix.command == "pip install 'tensorflow[and-cuda]==2.15.0.post1'"
    assert fix.change_map == {"tensorflow": "2.15.0.post1", "cuda": "12.2", "cudnn": "8.9.4"}
    assert not list(closure_failures(matrix, facts, "tf 2.15.0 cuda 11.8"))


def test_every_and_cuda_command_for_2_15_0_installs_the_post_release(matrix) -> None:  # type: ignore[no-untyped-def]
    r = matrix.tf_release(Version("2.15.0"))
    want = "pip install 'tensorflow[and-cuda]==2.15.0.post1'"
    assert tf_command(r, True, "linux", PIP) == want  # solver candidates and check's own fixes
    assert tf_and_cuda("2.15.0", m=matrix) == want  # Dockerfile and doctor fixes
    assert (
        tf_command(r, False, "linux", PIP) == "pip install tensorflow==2.15.0"
    )  # no extra: the plain pin works


def test_holistic_and_cuda_fix_carries_the_wheels_cuda_and_cudnn(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(tensorflow="2.16.1", cuda="11.8", cudnn="8.6", **A100_535)
    rep = check_stack(facts, matrix)
    holistic = [
        x for x in _fixes(rep, "tensorflow.cuda") if x.command == "pip install 'tensorflow[and-cuda]==2.16.1'"
    ]
    # TensorFlow 2.16.1's [and-cuda] pins nvidia-cuda-runtime-cu12 12.3.101 and nvidia-cudnn-cu12 8.9.7.29.
    assert holistic and holistic[0].change_map == {"cuda": "12.3", "cudnn": "8.9.7"}
    assert not list(closure_failures(matrix, facts, "tf 2.16.1 cuda 11.8 cudnn 8.6"))


def test_a_holistic_fix_that_would_not_work_here_is_not_shown(matrix) -> None:  # type: ignore[no-untyped-def]
    # R470 cannot run the CUDA 12.3 that tensorflow[and-cuda]==2.16.1 brings: the re-check drops that fix.
    facts = facts_of(
        tensorflow="2.16.1", cuda="11.8", cudnn="8.6", gpu="A100", driver="470.82.01", python="3.10"
    )
    rep = check_stack(facts, matrix)
    assert all("[and-cuda]==2.16.1" not in (x.command or "") for f in rep.findings for x in f.fixes)
    assert not list(closure_failures(matrix, facts, "tf 2.16.1 cuda 11.8 R470"))


def test_closure_covers_every_holistic_fix(matrix) -> None:  # type: ignore[no-untyped-def]
    # Every TensorFlow release with [and-cuda] on a system CUDA 11.8 / cuDNN 8.6 and on 12.4 / 9.1.0.
    seen = 0
    failures: list[str] = []
    for r in matrix.tensorflow:
        if not r.and_cuda:
            continue
        for cuda, cudnn in (("11.8", "8.6"), ("12.4", "9.1.0")):
            facts = facts_of(tensorflow=r.raw, cuda=cuda, cudnn=cudnn, gpu="RTX 4090", driver="580.65.06")
            rep = check_stack(facts, matrix)
            for f in rep.findings:
                for x in f.fixes:
                    if "[and-cuda]" in (x.command or ""):
                        assert x.changes, (r.raw, f.id, x)
                        seen += 1
            failures += closure_failures(matrix, facts, f"tf {r.raw} cuda {cuda} cudnn {cudnn}", before=rep)
    assert seen >= 20
    assert failures == [], failures[:10]


def test_native_windows_tf_2_10_fix_names_the_cuda_and_cudnn_it_needs(matrix) -> None:  # type: ignore[no-untyped-def]
    facts = facts_of(os="windows", tensorflow="2.11.0", gpu="RTX 3060", python="3.10")
    fix = next(x for x in _fixes(check_stack(facts, matrix), "tensorflow.windows-gpu") if x.changes)
    assert fix.change_map == {"tensorflow": "2.10.1"}
    # TensorFlow's tested Windows GPU build of 2.10: CUDA 11.2, cuDNN 8.1 (matrix/tensorflow.yaml).
    assert "CUDA 11.2" in fix.text and "cuDNN 8.1" in fix.text, fix.text


def test_the_wsl2_fix_is_pinned_or_names_what_it_needs(matrix) -> None:  # type: ignore[no-untyped-def]
    def wsl2(tf: str) -> Fix:
        facts = facts_of(os="windows", tensorflow=tf, gpu="RTX 3060", python="3.10")
        return next(
            x for x in _fixes(check_stack(facts, matrix), "tensorflow.windows-gpu") if "WSL2" in x.text
        )

    assert wsl2("2.16.1").command == "pip install 'tensorflow[and-cuda]==2.16.1'"
    old = wsl2("2.11.0")  # no [and-cuda] extra before 2.14: the system CUDA and cuDNN are named instead
    assert old.command is None and "CUDA 11.2" in old.text and "cuDNN 8.1" in old.text
