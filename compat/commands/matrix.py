"""`compat matrix`: validate a matrix directory and look single rows up."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Optional

import typer
from packaging.version import Version

from compat.commands.common import FORMAT_OPT, JSON_OPT, MATRIX_OPT, emit_document, load, options
from compat.errors import EXIT_OK, EXIT_USAGE, InputError, MatrixError
from compat.matrix import Matrix, load_matrix, resolve_matrix_dir
from compat.versions import parse_dotted, parse_version, python_wheel_tag

STALE_DAYS = 90
"""`compat matrix validate` warns when a file's `updated:` date is older than this."""

matrix_app = typer.Typer(
    help="Validate the matrix and look rows up.\n\nExample: compat matrix gpu 'RTX 4090'",
    no_args_is_help=True,
)


def _not_found(m: Matrix, subject: str, key: str) -> InputError:
    near = m.nearest_keys(subject, key)
    hint = f"; nearest known: {', '.join(near)}" if near else ""
    return InputError(f"no {subject} {key!r} in the matrix (updated {m.updated_date}){hint}")


def cuda_row(m: Matrix, key: str) -> dict[str, Any]:
    rel = m.cuda_release(parse_dotted(key, "CUDA version", min_parts=2))
    if rel is None:
        raise _not_found(m, "cuda", key)
    mc = m.minor_compat.get(rel.version.release[0])
    rng = m.cuda_cc_range(rel.version)
    return {
        "version": rel.raw,
        "name": rel.name,
        "min_driver": dict(rel.min_driver),
        "minor_compat_floor": dict(mc.floor) if mc else {"linux": None, "windows": None},
        "compute_capabilities": {"min": str(rng[0]), "max": str(rng[1])}
        if rng
        else {"min": None, "max": None},
        "not_listed": {
            **dict(rel.na),
            **({f"minor_compat_floor.{k}": v for k, v in mc.na.items()} if mc else {}),
        },
        "source": rel.source,
    }


def gpu_row(m: Matrix, key: str) -> dict[str, Any]:
    row = m.gpu(key)
    if row is None:
        sugg = m.gpu_suggestions(key)
        hint = f"; nearest known: {', '.join(sugg)}" if sugg else ""
        raise InputError(f"no gpu {key!r} in the matrix (updated {m.updated_date}){hint}")
    return {
        "name": row.name,
        "aliases": list(row.aliases),
        "compute_capability": str(row.cc),
        "architecture": row.architecture,
        "segment": row.segment,
        "source": row.source,
    }


def cudnn_row(m: Matrix, key: str) -> dict[str, Any]:
    rel = m.cudnn_release(parse_dotted(key, "cuDNN version"))
    if rel is None:
        raise _not_found(m, "cudnn", key)
    cuda = []
    drivers: dict[str, dict[str, Optional[str]]] = {}
    for p in rel.packages:
        cuda.append(
            {
                "major": p.cuda_major,
                "min": str(p.cuda_min) if p.cuda_min else None,
                "max": str(p.cuda_max) if p.cuda_max else None,
                "compute_capabilities": {
                    "min": str(p.cc_min) if p.cc_min else None,
                    "max": str(p.cc_max) if p.cc_max else None,
                },
            }
        )
        drivers[f"cuda{p.cuda_major}"] = dict(p.min_driver)
    not_listed = {f"cuda{p.cuda_major}.{k}": note for p in rel.packages for k, note in p.na.items()}
    return {
        "version": rel.raw,
        "cuda": cuda,
        "min_driver": drivers,
        "not_listed": not_listed,
        "source": rel.source,
    }


def torch_row(m: Matrix, key: str) -> dict[str, Any]:
    rel = m.torch_release(parse_version(key, "PyTorch version"))
    if rel is None:
        raise _not_found(m, "torch", key)
    return {
        "version": rel.raw,
        "python": list(rel.python),
        "pypi_default": rel.pypi_default,
        "pypi_requires": dict(rel.pypi_requires),
        "variants": [
            {
                "tag": v.tag,
                "cuda": v.cuda,
                "cudnn": v.cudnn,
                "archs": [str(a) for a in v.archs] if v.archs is not None else None,
                "index_url": v.index_url,
            }
            for v in rel.variants
        ],
        "source": rel.source,
    }


def tf_row(m: Matrix, key: str) -> dict[str, Any]:
    rel = m.tf_release(parse_version(key, "TensorFlow version"))
    if rel is None:
        raise _not_found(m, "tensorflow", key)
    return {
        "version": rel.raw,
        "python": list(rel.python),
        "cuda": rel.cuda,
        "cudnn": rel.cudnn,
        "and_cuda": dict(rel.and_cuda),
        "windows_gpu": rel.windows_gpu,
        "compute_capabilities": [str(a) for a in rel.archs] if rel.archs is not None else None,
        "compiler": rel.compiler,
        "build_tool": rel.build_tool,
        "not_listed": dict(rel.na),
        "source": rel.source,
    }


def jax_row(m: Matrix, key: str) -> dict[str, Any]:
    from compat.jaxmatrix import JaxTableError, jax_table

    try:
        table = jax_table(m)
    except JaxTableError as exc:
        raise InputError(str(exc)) from None
    rel = table.release(parse_version(key, "JAX version"))
    if rel is None:
        near = [r.version for r in table.releases if r.version.startswith(key.split(".")[0] + ".")][:5]
        hint = f"; nearest: {', '.join(near)}" if near else ""
        raise InputError(f"no jax {key!r} in the matrix (jax.yaml updated {table.updated}){hint}")
    return {
        "version": rel.version,
        "released": rel.released or None,
        "python": list(rel.python),
        "requires_python": rel.requires_python,
        "jaxlib": rel.jaxlib,
        "minimum_jaxlib": rel.minimum_jaxlib,
        "extras": list(rel.extras),
        "cuda_extra": rel.cuda_extra,
        "cuda": [
            {
                "major": b.major,
                "kind": b.kind,
                "extras": list(b.extras),
                "package": b.package,
                "pin": b.pin,
                "plugin_version": b.plugin_version,
                "jaxlib": b.jaxlib,
                "cuda_min": b.cuda_min,
                "cudnn": b.cudnn,
                "nccl_min": b.nccl_min,
                "cc_min": table.majors[b.major].cc_min if b.major in table.majors else None,
                "driver_min_linux": table.majors[b.major].driver_min_linux
                if b.major in table.majors
                else None,
                "index": b.index,
                "plugin_source": b.plugin_source,
            }
            for b in rel.cuda
        ],
        "source": rel.source,
        "doc": rel.doc,
    }


def _framework_key(
    m: Matrix,
    subject: str,
    key: Optional[str],
    newest_default: bool,
    oldest_for_python: Optional[str],
    python: Optional[str],
) -> str:
    """The release KEY names, or the one --newest-default / --oldest-for-python selects."""
    picks = sum((key is not None, newest_default, oldest_for_python is not None))
    if picks != 1:
        raise InputError("give exactly one of KEY, --newest-default, --oldest-for-python")
    if key is not None:
        if python is not None:
            raise InputError("--python goes with --newest-default")
        return key
    if subject not in ("torch", "tensorflow"):
        raise InputError(
            f"--newest-default and --oldest-for-python are for torch and tensorflow, not {subject}"
        )
    python = python_wheel_tag(python) if python is not None else None
    oldest_for_python = python_wheel_tag(oldest_for_python) if oldest_for_python is not None else None
    if newest_default:
        rel = m.newest_default(subject, python)
        what = f"no final {subject} release" + (f" for Python {python}" if python else "")
    else:
        assert oldest_for_python is not None
        rel = m.oldest_for_python(subject, oldest_for_python)
        what = f"no {subject} release for Python {oldest_for_python}"
    if rel is None:
        raise InputError(f"{what} in the matrix (updated {m.updated_date})")
    return rel.raw


def side_file_owners() -> tuple[ModuleType, ...]:
    """Every module that owns a matrix side file: importing one registers its file's validator
    (compat.matrixfiles), so `compat matrix validate` checks every file. A new side file's owner goes here."""
    from compat import jaxmatrix
    from compat.checks import first_driver
    from compat.dockerfile import drivers, images
    from compat.explain import catalogue, error_codes
    from compat.probes import health

    return (catalogue, error_codes, images, drivers, health, jaxmatrix, first_driver)


EXAMPLE_KEYS = {
    "cuda": "12.4",
    "gpu": "'RTX 4090'",
    "cudnn": "9.1.0",
    "torch": "2.5.1",
    "tensorflow": "2.17.0",
    "jax": "0.4.35",
}


def register(app: typer.Typer) -> None:
    app.add_typer(matrix_app, name="matrix")

    @matrix_app.command("validate")
    def validate(directory: Optional[str] = typer.Argument(None, metavar="[DIR]")) -> None:
        """Validate a matrix directory; every problem is listed, exit 2 if any.

        Example: compat matrix validate matrix/
        """
        from compat.cli import matrix_dir

        d = resolve_matrix_dir(directory or matrix_dir(None))
        side_file_owners()
        try:
            m = load_matrix(d, validate_extras=True)
        except MatrixError as exc:
            sys.stderr.write(f"compat: error: matrix {str(d)!r} has {len(exc.problems)} problem(s)\n")
            for p in exc.problems:
                sys.stderr.write(f"  {p}\n")
            raise typer.Exit(EXIT_USAGE) from None
        for name, age in m.stale_files(STALE_DAYS):
            sys.stderr.write(
                f"compat: warning: {name} was last updated {m.updated_for(name)} ({age} days ago, over "
                f"{STALE_DAYS}); refresh it (tools/refresh_matrix.py, docs/matrix-sources.md)\n"
            )
        n = (len(m.cuda_releases), len(m.gpus), len(m.cudnn), len(m.torch), len(m.tensorflow))
        sys.stdout.write(
            f"matrix {d} is valid (updated {m.updated_date}): {n[0]} CUDA releases, {n[1]} GPUs, "
            f"{n[2]} cuDNN releases, {n[3]} PyTorch releases, {n[4]} TensorFlow releases\n"
        )
        raise typer.Exit(EXIT_OK)

    lookups = {
        "cuda": (cuda_row, "CUDA"),
        "gpu": (gpu_row, "GPU"),
        "cudnn": (cudnn_row, "cuDNN"),
        "torch": (torch_row, "PyTorch"),
        "tensorflow": (tf_row, "TensorFlow"),
        "jax": (jax_row, "JAX"),
    }
    for subject, (fn, label) in lookups.items():

        def make(fn: Any = fn, label: str = label, subject: str = subject) -> None:
            @matrix_app.command(
                subject,
                help=f"Look up one {label} row.\n\nExample: compat matrix {subject} {EXAMPLE_KEYS[subject]}",
            )
            def lookup(
                key: Optional[str] = typer.Argument(None, metavar="KEY"),
                json_out: bool = JSON_OPT,
                fmt: Optional[str] = FORMAT_OPT,
                matrix: Optional[str] = MATRIX_OPT,
                newest_default: bool = typer.Option(
                    False,
                    "--newest-default",
                    help="torch/tensorflow: the newest release a plain `pip install` gets (with --python: for it).",
                ),
                oldest_for_python: Optional[str] = typer.Option(
                    None,
                    "--oldest-for-python",
                    metavar="X.Y",
                    help="torch/tensorflow: the oldest release for Python X.Y.",
                ),
                python: Optional[str] = typer.Option(
                    None, "--python", metavar="X.Y", help="With --newest-default: for this Python."
                ),
            ) -> None:
                opts = options(fmt, json_out)
                m = load(matrix)
                key = _framework_key(m, subject, key, newest_default, oldest_for_python, python)
                from compat.output.matrix_row import MatrixRowDocument

                raise typer.Exit(emit_document(MatrixRowDocument(subject, fn(m, key), label), opts))

        make()


__all__ = ["Version", "cuda_row", "cudnn_row", "gpu_row", "jax_row", "register", "tf_row", "torch_row"]
