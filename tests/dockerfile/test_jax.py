"""JAX in Dockerfiles (issue 17): which jax, CUDA build and CUDA source a stage's installs give it, the jax.*
checks on the image's facts, and fixes written as Dockerfile lines that close their finding when applied.

The release facts come from the shipped matrix/jax.yaml (wheel metadata read from PyPI; see its header).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compat.dockerfile import check_dockerfile
from compat.findings import Finding, Report

WriteDf = Callable[..., Path]
PY311 = "FROM python:3.11\n"
CUDA12_RT = "FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04\nRUN apt-get update && apt-get install -y python3-pip\n"
JAX_INDEX = "https://storage.googleapis.com/jax-releases/jax_cuda_releases.html"


def check(p: Path, m: Any, **kw: Any) -> Report:
    return check_dockerfile(p, m, **kw)


def by_id(r: Report, fid: str) -> list[Finding]:
    return [f for f in r.findings if f.id == fid]


def ids(r: Report) -> set[str]:
    return {f.id for f in r.findings}


def jax_fact(r: Report) -> str | None:
    f = r.facts.get("jax")
    return f["value"] if isinstance(f, dict) else None


def errors(r: Report) -> set[str]:
    return {f.id for f in r.findings if f.severity == "error"}


def apply_fix(text: str, line: int, command: str) -> str:
    """The Dockerfile with line `line` replaced by the fix's Dockerfile line."""
    lines = text.splitlines()
    lines[line - 1] = command
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ install forms -> the jax fact


@pytest.mark.parametrize(
    ("install", "fact"),
    [
        ('pip install "jax[cuda12]==0.4.30"', "0.4.30+cuda12"),
        ('pip install "jax[cuda13]==0.8.0"', "0.8.0+cuda13"),
        ('pip install "jax[cuda12_local]==0.4.30"', "0.4.30+cuda12"),
        (f'pip install "jax[cuda12_pip]==0.4.26" -f {JAX_INDEX}', "0.4.26+cuda12"),
        (f'pip install "jax[cuda11_pip]==0.4.25" -f {JAX_INDEX}', "0.4.25+cuda11"),
        (f'pip install "jax[cuda]==0.4.25" -f {JAX_INDEX}', "0.4.25+cuda11"),  # plain cuda was CUDA 11 then
        ('pip install "jax[cuda]==0.4.30"', "0.4.30+cuda12"),
        (f"pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89 -f {JAX_INDEX}", "0.4.26+cuda12"),
        (
            'pip install jax==0.4.34 jaxlib==0.4.34 "jax-cuda12-plugin[with-cuda]==0.4.34" jax-cuda12-pjrt==0.4.34',
            "0.4.34+cuda12",
        ),
        ('uv pip install --system "jax[cuda12]==0.4.30"', "0.4.30+cuda12"),
        ('python3 -m pip install "jax[cuda12]==0.4.30"', "0.4.30+cuda12"),
        ("pip install jax==0.4.30", "0.4.30"),
        ('pip install "jax[cpu]==0.4.30"', "0.4.30"),
    ],
)
def test_install_forms_give_the_jax_fact(write_df: WriteDf, dmatrix: Any, install: str, fact: str) -> None:
    r = check(write_df(f"{PY311}RUN {install}\n"), dmatrix)
    assert jax_fact(r) == fact
    assert r.facts["jax"]["source"] == "Dockerfile:2"


def test_requirements_file_with_hashes(write_df: WriteDf, dmatrix: Any) -> None:
    # pip-compile --generate-hashes output: the --hash options are not part of the requirement.
    req = (
        "jax[cuda12]==0.4.34 \\\n    --hash=sha256:44196854f40c5f9cea3142824b9f1051f85afc3fcf7593ec5479fc8db01c58db\n"
        "    # via app\njaxlib==0.4.34 \\\n    --hash=sha256:096f0ca309d41fa692a9d1f2f9baab1c5c8ca0749876ebb3f748e738a27c7ff4\n"
    )
    p = write_df(
        f"{PY311}COPY requirements.txt /app/\nRUN pip install -r /app/requirements.txt\n",
        **{"requirements.txt": req},
    )
    r = check(p, dmatrix)
    assert jax_fact(r) == "0.4.34+cuda12" and r.facts["jaxlib"]["value"] == "0.4.34"
    assert "dockerfile.invalid-requirement" not in ids(r)


def test_unpinned_resolves_for_the_image_python(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df('FROM python:3.10\nRUN pip install -U "jax[cuda12]"\n'), dmatrix)
    from compat.jaxmatrix import jax_table

    table = jax_table(dmatrix)
    newest_310 = max(
        (x for x in table.releases if x.python_ok("3.10") and not x.parsed.is_prerelease),
        key=lambda x: x.parsed,
    )
    assert jax_fact(r) == f"{newest_310.version}+cuda12"
    note = by_id(r, "dockerfile.unpinned")
    assert note and note[0].fixes[0].command == f'RUN pip install -U "jax[cuda12]=={newest_310.version}"'


def test_build_arg_version_unset_is_reported_not_guessed(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f'{PY311}ARG JAX_VERSION\nRUN pip install "jax[cuda12]==${{JAX_VERSION}}"\n'), dmatrix)
    assert "dockerfile.unresolved" in ids(r) and jax_fact(r) is None


# ------------------------------------------------------------------ Dockerfile checks


def test_plain_jax_in_cuda_image_is_cpu_only(write_df: WriteDf, dmatrix: Any) -> None:
    text = f"{CUDA12_RT}RUN pip install jax==0.4.30\n"
    r = check(write_df(text), dmatrix)
    f = by_id(r, "jax.cpu-build")
    assert len(f) == 1 and f[0].severity == "error" and f[0].line == 3
    assert f[0].fixes and f[0].fixes[0].command == 'RUN pip install -U "jax[cuda12]==0.4.30"'
    fixed = check(write_df(apply_fix(text, 3, f[0].fixes[0].command), name="fixed"), dmatrix)
    assert "jax.cpu-build" not in ids(fixed) and not {i for i in errors(fixed) if i.startswith("jax")}
    # A CPU image: a CPU jax is what it should be.
    assert "jax.cpu-build" not in ids(
        check(write_df(f"{PY311}RUN pip install jax==0.4.30\n", name="cpu"), dmatrix)
    )


def test_extra_the_release_lacks(write_df: WriteDf, dmatrix: Any) -> None:
    # jax 0.6.2 (the newest for Python 3.10) has no cuda12_pip extra: pip warns and installs a CPU-only jax.
    text = f'FROM python:3.10\nRUN pip install "jax[cuda12_pip]" -f {JAX_INDEX}\n'
    r = check(write_df(text), dmatrix)
    f = by_id(r, "dockerfile.jax-extra")
    assert len(f) == 1 and f[0].severity == "error" and f[0].line == 2 and "cuda12-pip" in f[0].title
    fact = jax_fact(r)
    assert fact is not None and "+cuda" not in fact
    cmd = f[0].fixes[0].command
    assert cmd is not None
    fixed = check(write_df(apply_fix(text, 2, cmd), name="fixed"), dmatrix)
    assert "dockerfile.jax-extra" not in ids(fixed) and (jax_fact(fixed) or "").endswith("+cuda12")
    # The release that has the extra: no finding.
    ok = check(
        write_df(f'FROM python:3.10\nRUN pip install "jax[cuda12_pip]==0.4.26" -f {JAX_INDEX}\n', name="ok"),
        dmatrix,
    )
    assert "dockerfile.jax-extra" not in ids(ok)


@pytest.mark.parametrize(
    ("base", "severity", "word"),
    [
        ("python:3.11", "error", "has none"),
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", "error", "only the CUDA runtime"),
        ("nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "error", "built for CUDA 12"),
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "error", "needs cuDNN"),
        ("nvidia/cuda:12.0.1-cudnn8-devel-ubuntu22.04", "error", "needs CUDA ≥ 12.1"),
        ("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", "warning", "-runtime"),
    ],
)
def test_local_extra_needs_the_system_cuda(
    write_df: WriteDf, dmatrix: Any, base: str, severity: str, word: str
) -> None:
    text = f'FROM {base}\nRUN apt-get install -y python3-pip\nRUN pip install "jax[cuda12_local]==0.4.30"\n'
    f = by_id(check(write_df(text), dmatrix), "dockerfile.jax-local")
    assert len(f) == 1 and f[0].severity == severity and word in f[0].title, [x.title for x in f]
    assert f[0].line == 3
    if severity == "error":  # the pip-CUDA fix closes it
        cmd = f[0].fixes[0].command
        assert cmd == 'RUN pip install -U "jax[cuda12]==0.4.30"'
        fixed = check(write_df(apply_fix(text, 3, cmd), name="fixed"), dmatrix)
        assert "dockerfile.jax-local" not in ids(fixed)


def test_local_extra_on_a_fitting_devel_image(write_df: WriteDf, dmatrix: Any) -> None:
    text = (
        "FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
        'RUN pip install "jax[cuda12_local]==0.4.30"\n'
    )
    r = check(write_df(text), dmatrix)
    assert "dockerfile.jax-local" not in ids(r) and not {i for i in errors(r) if i.startswith("jax")}


def test_system_cudnn_judged_only_when_jax_uses_it(write_df: WriteDf, dmatrix: Any) -> None:
    # cuDNN 8.9 in the image; jax 0.4.30's CUDA 12 build needs cuDNN >= 9.0.
    local = check(write_df(f'{CUDA12_RT}RUN pip install "jax[cuda12_local]==0.4.30"\n'), dmatrix)
    f = by_id(local, "jax.cudnn")
    assert f and f[0].severity == "error" and f[0].line == 3
    pip = check(write_df(f'{CUDA12_RT}RUN pip install "jax[cuda12]==0.4.30"\n', name="pip"), dmatrix)
    assert "jax.cudnn" not in ids(pip)
    dup = by_id(pip, "dockerfile.second-cuda")
    assert dup and dup[0].severity == "info" and "LD_LIBRARY_PATH" in dup[0].message


def test_monolithic_jaxlib_needs_jax_index(write_df: WriteDf, dmatrix: Any) -> None:
    base = "FROM nvidia/cuda:12.2.2-cudnn8-devel-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
    r = check(write_df(f"{base}RUN pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89\n"), dmatrix)
    f = by_id(r, "dockerfile.jax-index")
    assert f and f[0].severity == "error" and "No matching distribution" in f[0].message
    ok = check(
        write_df(
            f"{base}RUN pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89 -f {JAX_INDEX}\n", name="ok"
        ),
        dmatrix,
    )
    assert "dockerfile.jax-index" not in ids(ok) and not errors(ok)


def test_monolithic_jaxlib_on_a_cpu_base(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(
        write_df(f"{PY311}RUN pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89 -f {JAX_INDEX}\n"),
        dmatrix,
    )
    f = by_id(r, "dockerfile.jax-local")
    assert f and f[0].severity == "error"
    assert any("cuda12_pip" in (x.command or "") for x in f[0].fixes)


def test_plugin_without_with_cuda_needs_system_cuda(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(
        write_df(
            f"{PY311}RUN pip install jax==0.4.34 jaxlib==0.4.34 jax-cuda12-plugin==0.4.34 jax-cuda12-pjrt==0.4.34\n"
        ),
        dmatrix,
    )
    assert jax_fact(r) == "0.4.34+cuda12" and "dockerfile.jax-local" in ids(r)
    ok = check(
        write_df(
            f'{PY311}RUN pip install jax==0.4.34 jaxlib==0.4.34 "jax-cuda12-plugin[with-cuda]==0.4.34"\n',
            name="ok",
        ),
        dmatrix,
    )
    assert "dockerfile.jax-local" not in ids(ok)


# ------------------------------------------------------------------ resolver checks on the image's facts


def test_jaxlib_newer_than_jax(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f'{PY311}RUN pip install "jax[cuda12]==0.4.30" jaxlib==0.4.31\n'), dmatrix)
    f = by_id(r, "jax.jaxlib")
    assert f and f[0].severity == "error" and f[0].line == 2


def test_python_of_the_base_outside_the_release(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df('FROM python:3.8\nRUN pip install "jax[cuda12]==0.4.30"\n'), dmatrix)
    f = by_id(r, "jax.python")
    assert f and f[0].severity == "error" and f[0].line == 2 and "3.8" in f[0].title


def test_driver_fix_is_a_dockerfile_line_that_closes_it(write_df: WriteDf, dmatrix: Any) -> None:
    # CUDA 13 needs driver >= 580 (JAX's installation page); on 550 the CUDA 12 build of the same release runs.
    text = f'{PY311}RUN pip install "jax[cuda13]==0.8.0"\n'
    r = check(write_df(text), dmatrix, target_driver="550.54.15")
    f = by_id(r, "jax.driver")
    assert f and f[0].line == 2
    cmds = [x.command for x in f[0].fixes if x.command]
    assert cmds and all(c.startswith("RUN pip install") for c in cmds)
    fixed = check(write_df(apply_fix(text, 2, cmds[0]), name="fixed"), dmatrix, target_driver="550.54.15")
    assert "jax.driver" not in ids(fixed) and jax_fact(fixed) == "0.8.0+cuda12"


def test_uv_install_gets_uv_fixes(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f"{CUDA12_RT}RUN uv pip install --system jax==0.4.30\n"), dmatrix)
    f = by_id(r, "jax.cpu-build")
    assert f and (f[0].fixes[0].command or "").startswith("RUN uv pip install")


def test_unknown_release_is_a_warning_not_a_guess(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f'{PY311}RUN pip install "jax[cuda]==0.4.1" -f {JAX_INDEX}\n'), dmatrix)
    assert "jax.unknown-version" in ids(r) and not errors(r)


def test_multi_stage_copy_of_site_packages_carries_jax(write_df: WriteDf, dmatrix: Any) -> None:
    text = (
        "FROM python:3.11 AS build\nRUN pip install jax==0.4.30\n"
        "FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04\n"
        "COPY --from=build /usr/local/lib/python3.11/site-packages /usr/local/lib/python3.11/site-packages\n"
    )
    r = check(write_df(text), dmatrix)
    f = by_id(r, "jax.cpu-build")
    assert len(f) == 1 and f[0].line == 4 and f[0].facts["stage"] == "1"


def test_uninstall_clears_jax(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f"{CUDA12_RT}RUN pip install jax==0.4.30\nRUN pip uninstall -y jax jaxlib\n"), dmatrix)
    assert "jax.cpu-build" not in ids(r) and jax_fact(r) is None


def test_unknown_release_with_a_cuda_extra_is_not_called_cpu_only(write_df: WriteDf, dmatrix: Any) -> None:
    text = "FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
    r = check(write_df(f'{text}RUN pip install "jax[cuda]==0.4.1" -f {JAX_INDEX}\n'), dmatrix)
    assert "jax.unknown-version" in ids(r) and "jax.cpu-build" not in ids(r)


def test_jax_pep503_index_serves_cuda_jaxlib(write_df: WriteDf, dmatrix: Any) -> None:
    idx = "https://us-python.pkg.dev/ml-oss-artifacts-published/jax/simple/"
    r = check(
        write_df(f"{PY311}RUN pip install jax==0.4.26 jaxlib==0.4.26+cuda12.cudnn89 -i {idx}\n"), dmatrix
    )
    assert "dockerfile.jax-index" not in ids(r) and jax_fact(r) == "0.4.26+cuda12"


def test_target_gpu_below_the_cuda13_floor(write_df: WriteDf, dmatrix: Any) -> None:
    # On CUDA 13 JAX supports compute capability 7.5 or newer (JAX's installation page); 6.1 is a Pascal GPU.
    text = f'{PY311}RUN pip install "jax[cuda13]==0.8.0"\n'
    r = check(write_df(text), dmatrix, target_cc="6.1", target_driver="580.65.06")
    f = by_id(r, "jax.arch")
    assert f and f[0].severity == "error" and f[0].line == 2
    cmd = next(x.command for x in f[0].fixes if x.command)
    assert cmd == 'RUN pip install -U "jax[cuda12]==0.8.0"'
    fixed = check(
        write_df(apply_fix(text, 2, cmd), name="fixed"), dmatrix, target_cc="6.1", target_driver="580.65.06"
    )
    assert "jax.arch" not in ids(fixed)


def test_cpu_build_is_reported_once_with_a_target_gpu(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f"{CUDA12_RT}RUN pip install jax==0.4.30\n"), dmatrix, target_gpu="A100 SXM4 80GB")
    f = by_id(r, "jax.cpu-build")
    assert len(f) == 1 and f[0].fixes[0].command == 'RUN pip install -U "jax[cuda12]==0.4.30"'
    # On a CPU base the target GPU makes the resolver's own jax.cpu-build apply, its fix a Dockerfile line.
    cpu = check(
        write_df(f"{PY311}RUN pip install jax==0.4.30\n", name="cpu"), dmatrix, target_gpu="A100 SXM4 80GB"
    )
    g = by_id(cpu, "jax.cpu-build")
    assert len(g) == 1 and g[0].line == 2 and (g[0].fixes[0].command or "").startswith("RUN pip install")


def test_a_jax_cuda_stage_is_a_gpu_stack_for_compose(write_df: WriteDf, dmatrix: Any) -> None:
    from compat.sources.images import stage_facts_gpu

    gpu = check(write_df(f'{PY311}RUN pip install "jax[cuda12]==0.4.30"\n'), dmatrix)
    cpu = check(write_df(f"{PY311}RUN pip install jax==0.4.30\n", name="cpu"), dmatrix)
    assert stage_facts_gpu(dict(gpu.facts)) and not stage_facts_gpu(dict(cpu.facts))


def test_pin_fix_of_a_monolithic_extra_reads_jax_index(write_df: WriteDf, dmatrix: Any) -> None:
    r = check(write_df(f'{PY311}RUN pip install "jax[cuda12_pip]<0.4.27" -f {JAX_INDEX}\n'), dmatrix)
    note = by_id(r, "dockerfile.unpinned")
    assert note and note[0].fixes[0].command == f'RUN pip install -U "jax[cuda12-pip]==0.4.26" -f {JAX_INDEX}'
    assert jax_fact(r) == "0.4.26+cuda12"
