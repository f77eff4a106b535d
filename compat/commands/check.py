"""`compat check`: the what-if entry point (facts from flags and/or a snapshot)."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional  # noqa: UP035 - typer needs typing.List on Python 3.9

import typer

from compat.commands.common import (
    FAIL_ON_OPT,
    FORMAT_OPT,
    IGNORE_OPT,
    JSON_OPT,
    MATRIX_OPT,
    SELECT_OPT,
    SHOW_SKIPPED_OPT,
    emit_report,
    load,
    options,
)
from compat.commands.values import OS_NAMES, choices
from compat.errors import InputError
from compat.facts import (
    Facts,
    apply_flags,
    apply_overrides,
    host_os,
    load_snapshot,
    make_fact,
    read_overrides,
)
from compat.matrix import Matrix
from compat.versions import parse_cc


def resolve_gpu_name(m: Matrix, name: Optional[str], cc: Optional[str]) -> None:
    """An unknown --gpu without --cc is a usage error that suggests the closest names; a --cc that contradicts
    the compute capability the matrix gives for --gpu is one too (one of the two is a typo)."""
    if name is None or not name.strip():
        return
    row = m.gpu(name)
    if cc and cc.strip():
        if row is not None:
            given = str(parse_cc(cc))
            if given != str(row.cc):
                raise InputError(
                    f"--gpu {name!r} has compute capability {row.cc} ({row.name}, from the matrix) but --cc is "
                    f"{given}: give one of them, or the right pair"
                )
        return
    if row is None:
        sugg = m.gpu_suggestions(name)
        hint = f"; did you mean: {', '.join(repr(s) for s in sugg)}" if sugg else ""
        raise InputError(f"unknown GPU {name!r}{hint} (or give its compute capability with --cc X.Y)")


def fill_gpu_cc(m: Matrix, facts: Facts) -> Facts:
    """GPUs named without a compute capability get the one the matrix gives (marked `cc_source: matrix`)."""
    if not facts.gpus:
        return facts
    out = []
    changed = False
    for g in facts.gpus:
        row = m.gpu(g.name) if g.name and not g.cc else None
        if row is not None:
            g = replace(g, cc=str(row.cc), details={**g.details, "cc_source": "matrix"})
            changed = True
        out.append(g)
    return facts.with_gpus(tuple(out), facts.gpus_source) if changed else facts


NOTHING_TO_CHECK = (
    "nothing to check: give at least one of --driver, --gpu, --cc, --cuda, --cudnn, --torch, --tensorflow, "
    "--jax, --python, --snapshot or --target-driver"
)


def build_facts(
    m: Matrix,
    *,
    snapshot: Optional[str],
    flags: dict[str, Optional[str]],
) -> Facts:
    facts = load_snapshot(snapshot) if snapshot else Facts()
    facts = apply_overrides(facts)
    if facts.get("os") is None and flags.get("os") is None:
        facts = facts.with_values({"os": make_fact("os", host_os(), "this machine")})
    resolve_gpu_name(m, flags.get("gpu"), flags.get("cc"))
    return apply_flags(facts, flags)


def _any_override() -> bool:
    return any(v is not None for v in read_overrides().values())


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        driver: Optional[str] = typer.Option(
            None,
            "--driver",
            metavar="V",
            help="NVIDIA driver version, e.g. 535.104.05, or a branch (535: compared as its first release).",
        ),
        os_name: Optional[str] = typer.Option(
            None,
            "--os",
            metavar="linux|windows|macos",
            autocompletion=choices(OS_NAMES),
            help="linux, windows or macos (also win32, win, darwin, mac, osx); default: this machine's.",
        ),
        gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME", help="GPU name, e.g. 'RTX 4090'."),
        cc: Optional[str] = typer.Option(None, "--cc", metavar="X.Y", help="GPU compute capability."),
        cuda: Optional[str] = typer.Option(
            None, "--cuda", metavar="X.Y[.Z]", help="CUDA toolkit/runtime version."
        ),
        cudnn: Optional[str] = typer.Option(None, "--cudnn", metavar="V", help="cuDNN version."),
        torch: Optional[str] = typer.Option(
            None, "--torch", metavar="V", help="2.6.0 (PyPI's wheel) or 2.5.1+cu124."
        ),
        tensorflow: Optional[str] = typer.Option(
            None, "--tensorflow", metavar="V", help="TensorFlow version."
        ),
        jax: Optional[str] = typer.Option(
            None,
            "--jax",
            metavar="V",
            help="JAX release: 0.10.2 (plain pip install jax: CPU only) or 0.10.2+cuda12 / +cuda13 (jax[cudaNN]).",
        ),
        python: Optional[str] = typer.Option(None, "--python", metavar="X.Y", help="Python version."),
        snapshot: Optional[str] = typer.Option(
            None, "--snapshot", metavar="FILE", help="Facts from a saved snapshot."
        ),
        require_gpu: bool = typer.Option(False, "--require-gpu", help="A missing GPU is an error."),
        target_driver: Optional[str] = typer.Option(
            None,
            "--target-driver",
            metavar="V",
            help="Check what is installed in this environment (e.g. inside `docker build`) against driver V "
            "(or a branch: 570).",
        ),
        json_out: bool = JSON_OPT,
        show_skipped: bool = SHOW_SKIPPED_OPT,
        fmt: Optional[str] = FORMAT_OPT,
        fail_on: Optional[str] = FAIL_ON_OPT,
        select: List[str] = SELECT_OPT,  # noqa: UP006
        ignore: List[str] = IGNORE_OPT,  # noqa: UP006
        matrix: Optional[str] = MATRIX_OPT,
    ) -> None:
        """What-if: check a stack described by flags (and/or a snapshot) against the matrix.

        Example: compat check --driver 535.104.05 --gpu "RTX 4090" --torch 2.5.1+cu124
        """
        opts = options(fmt, json_out, fail_on, select, ignore)
        m = load(matrix)
        flags = {
            "driver": driver,
            "os": os_name,
            "gpu": gpu,
            "cc": cc,
            "cuda": cuda,
            "cudnn": cudnn,
            "torch": torch,
            "tensorflow": tensorflow,
            "jax": jax,
            "python": python,
        }
        given = [k for k, v in flags.items() if v is not None and k != "os"]
        if target_driver is not None:
            # The in-build check: a target driver means the image is meant for a GPU, so a CPU-only
            # framework in it is an error, not an OK.
            require_gpu = True
            from compat.installed import installed_facts

            if driver is not None:
                raise InputError("give --driver or --target-driver, not both")
            base = installed_facts()
            flags["driver"] = target_driver
            facts = apply_flags(apply_overrides(base), {k: v for k, v in flags.items() if v is not None})
            resolve_gpu_name(m, gpu, cc)
        else:
            facts = build_facts(m, snapshot=snapshot, flags={k: v for k, v in flags.items() if v is not None})
        if not given and snapshot is None and target_driver is None and not _any_override():
            raise InputError(NOTHING_TO_CHECK)  # after the flags given were validated: a bad --os says so
        facts = fill_gpu_cc(m, facts)
        from compat.pipeline.check import check_stack

        extra: tuple = ()  # type: ignore[type-arg]
        if facts.probes:  # a doctor snapshot: its probe data reproduces the doctor's own checks too
            from compat.checks.doctor import doctor_checks

            extra = doctor_checks
        report = check_stack(facts, m, require_gpu=require_gpu, extra_checks=extra)
        if facts.probes:  # ... and its skipped checks read as the doctor's did
            from compat.pipeline.doctor import in_doctor_terms, inspected_python

            report.skipped[:] = in_doctor_terms(report.skipped, inspected_python(facts.probes))
        raise typer.Exit(
            emit_report(report, opts, title="compat check", kind="report", show_skipped=show_skipped)
        )
