"""Child script of compat.probes.frameworks: run by another interpreter as a file, so it uses only the standard
library (and the framework it was asked to import).

    python _framework_child.py MODE OUT.json      MODE: meta | torch | tensorflow | jax

It writes a JSON object to OUT.json after every stage, so a crash or a hang still leaves what was learnt
("stage" says where it stopped). Nothing is printed on purpose; the frameworks' own output is the parent's
to keep. Python 3.7+ syntax: the interpreter under test may be older than compat's own.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any, Optional

LIBS = (
    "libcudart",
    "libcudnn",
    "libcublas",
    "libnccl",
    "libcuda.so",
    "libnvidia-ml",
    "libnvrtc",
    "libnvJitLink",
)
FRAMEWORK_DISTS = (
    "torch",
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tf-nightly",
    "tensorflow-macos",
    "jax",
    "jaxlib",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "jax-cuda12-pjrt",
    "jax-cuda13-pjrt",
    "intel-tensorflow",
)


def _norm(name: str) -> str:
    out = []
    prev = False
    for ch in name.lower():
        if ch in "-_.":
            if not prev:
                out.append("-")
            prev = True
        else:
            out.append(ch)
            prev = False
    return "".join(out)


class Out:
    def __init__(self, path: str) -> None:
        self.path = path
        self.doc: dict[str, Any] = {
            "stage": "start",
            "python": sys.version.split()[0],  # platform.python_version() without importing platform
            "executable": sys.executable,
        }

    def save(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, default=str)
        os.replace(tmp, self.path)

    def stage(self, name: str) -> None:
        self.doc["stage"] = name
        self.save()


def loaded_libs() -> Optional[list[str]]:
    """Shared libraries of interest mapped into this process (/proc/self/maps)."""
    out = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                base = os.path.basename(path)
                if any(base.startswith(n) for n in LIBS) and path not in out:
                    out.append(path)
    except OSError:
        return None
    return sorted(out)


def _package_dir(name: str) -> Optional[str]:
    """The directory of top-level package `name`, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, MemoryError, RecursionError):  # TypeError: {[1]: 2}, an unhashable key
        return None


def _assignments(path: str) -> dict[str, Any]:
    """Constant module-level assignments of a Python file, read without executing it."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        if isinstance(value, ast.Call) and value.args:  # collections.OrderedDict([...]) in TF's build_info.py
            lit = _literal(value.args[0])
            out[target] = dict(lit) if isinstance(lit, list) else lit
        else:
            out[target] = _literal(value)
    return out


STATIC_FILES = {
    "torch": ("torch", "version.py"),
    "tensorflow": ("tensorflow", "python/platform/build_info.py"),
}


def static_info(mode: str) -> Optional[dict[str, Any]]:
    """Build facts a framework writes into a plain Python file at build time, read without importing it."""
    pkg, rel = STATIC_FILES.get(mode, (mode, None))
    d = _package_dir(pkg)
    if d is None or rel is None:
        return None
    path = os.path.join(d, rel)
    try:
        values = _assignments(path)
    except (OSError, SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        return {"path": path, "error": "%s: %s" % (type(exc).__name__, exc)}
    if mode == "torch":
        keep = dict((k, values.get(k)) for k in ("__version__", "cuda", "hip", "debug", "git_version"))
        keep["version"] = keep.pop("__version__")
    else:
        bi = values.get("build_info")
        keep = {
            "build_info": dict((k, v) for k, v in bi.items() if isinstance(v, (str, int, float, bool, list)))
            if isinstance(bi, dict)
            else None
        }
    keep["path"] = path
    return keep


def package_stamp(name: str) -> Optional[list[list[Any]]]:
    """(path, mtime_ns, size) of a package's __init__.py and of its lib directory: changes on reinstall."""
    d = _package_dir(name)
    if d is None:
        return None
    out = []
    for p in (os.path.join(d, "__init__.py"), os.path.join(d, "lib"), d):
        try:
            st = os.stat(p)
        except OSError:
            continue
        out.append([p, st.st_mtime_ns, st.st_size])
    return out


def installed_distributions(
    metadata: Any = None, path: Optional[list[str]] = None, where: Optional[dict[str, str]] = None
) -> dict[str, str]:
    """Normalised name -> version of every installed distribution, the first on the import path winning.

    Read from the `{name}-{version}.dist-info` directory names (PEP 376/427: both parts escaped, so one "-"
    separates them) instead of parsing every METADATA file with the email parser: ~60 ms -> ~2 ms for 250
    distributions. A directory whose name does not split that way (an .egg-info, a legacy name) is read the
    slow way, through importlib.metadata (`metadata`, imported only then). `where` receives each winning
    distribution's directory.
    """
    dists: dict[str, str] = {}
    for entry in sys.path if path is None else path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for fname in names:
            if fname.endswith(".dist-info"):
                parts = fname[: -len(".dist-info")].split("-")
                if len(parts) == 2 and parts[0] and parts[1]:
                    name = _norm(parts[0])
                    if name not in dists:
                        dists[name] = parts[1]
                        if where is not None:
                            where[name] = os.path.join(entry or ".", fname)
                    continue
            elif not fname.endswith(".egg-info"):
                continue
            try:
                if metadata is None:
                    from importlib import metadata as md_mod

                    metadata = md_mod
                d = metadata.PathDistribution.at(os.path.join(entry or ".", fname))
                md: Any = d.metadata
                raw_name = md.get("Name") if md is not None else None
                if raw_name and _norm(raw_name) not in dists:
                    dists[_norm(raw_name)] = d.version
                    if where is not None:
                        where[_norm(raw_name)] = os.path.join(entry or ".", fname)
            except Exception:
                continue
    return dists


METADATA_MAX = 4 << 20
"""A distribution's METADATA header is read up to this many bytes."""


def requires_dist(dist_dir: str) -> Optional[list[str]]:
    """The Requires-Dist lines of a .dist-info's METADATA (the header only: it ends at the first empty line), as
    importlib.metadata.requires() gives them for well-formed files (a folded line is unfolded with one space);
    None when the file is not there or not readable."""
    if not dist_dir.endswith(".dist-info"):
        return None
    try:
        with open(os.path.join(dist_dir, "METADATA"), encoding="utf-8", errors="surrogateescape") as f:
            text = f.read(METADATA_MAX)
    except OSError:
        return None
    out: list[str] = []
    folding = False  # the previous header line was a Requires-Dist
    for line in text.split(
        "\n"
    ):  # the email parser's line ends only (splitlines() also splits at \x0c, \u2028)
        line = line[:-1] if line.endswith("\r") else line
        if not line:  # an empty line ends the header (a folded line may hold only spaces)
            break
        if line[:1] in (" ", "\t"):  # a folded header line continues the previous one
            if folding:
                out[-1] = out[-1] + " " + line.strip()
            continue
        name, sep, value = line.partition(":")
        folding = bool(sep) and name.strip().lower() == "requires-dist"
        if folding:
            out.append(value.strip())
    return out


def _sha256(data: bytes) -> Any:
    """hashlib.sha256 without hashlib's OpenSSL binding (milliseconds of the doctor's start): same digest."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]  # CPython <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]  # CPython >= 3.12
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    return sha256(data)


def meta(out: Out) -> None:
    # This script also runs under older interpreters: below 3.8 there is no importlib.metadata.
    if sys.version_info < (3, 8):  # noqa: UP036
        out.doc["error"] = "importlib.metadata is not available (Python < 3.8)"
        return
    where: dict[str, str] = {}
    dists = installed_distributions(None, where=where)
    out.doc["distributions"] = dict(
        (k, v) for k, v in dists.items() if k in FRAMEWORK_DISTS or k.startswith("nvidia-")
    )
    out.doc["dists_digest"] = _sha256(
        "\n".join("%s==%s" % kv for kv in sorted(dists.items())).encode("utf-8")
    ).hexdigest()
    out.doc["static"] = dict(
        (m, static_info(m))
        for m in ("torch", "tensorflow")
        if m in dists
        or (m == "tensorflow" and any(k.startswith("tensorflow") or k == "tf-nightly" for k in dists))
    )
    out.doc["stamps"] = dict((m, package_stamp(m)) for m in ("torch", "tensorflow", "jax"))
    reqs: dict[str, list[str]] = {}
    for name in FRAMEWORK_DISTS:
        if name in dists:
            fast = requires_dist(where.get(name, ""))
            if fast is not None:
                reqs[name] = fast
                continue
            try:  # an .egg-info (requires.txt) or a METADATA that could not be read: importlib.metadata
                from importlib import metadata

                reqs[name] = list(metadata.requires(name) or [])
            except Exception:
                reqs[name] = []
    out.doc["requires"] = reqs
    out.doc["platform"] = sys.platform


def _catch(out: Out, key: str, fn: Callable[[], Any]) -> None:
    try:
        out.doc[key] = fn()
    except Exception as exc:
        out.doc.setdefault("errors", {})[key] = "%s: %s" % (type(exc).__name__, exc)


def _dotted(v: Any) -> str:
    return ".".join(str(x) for x in v) if isinstance(v, (tuple, list)) else str(v)


def probe_torch(out: Out) -> None:
    t0 = time.time()
    import torch

    out.doc["import_seconds"] = round(time.time() - t0, 3)
    out.doc["version"] = str(torch.__version__)
    out.doc["file"] = getattr(torch, "__file__", None)
    v = getattr(torch, "version", None)
    out.doc["cuda"] = getattr(v, "cuda", None)
    out.doc["hip"] = getattr(v, "hip", None)
    out.doc["git"] = getattr(v, "git_version", None)
    out.doc["debug"] = getattr(v, "debug", None)
    # The compiled architectures, read without needing a GPU (get_arch_list() is empty without one).
    _catch(
        out,
        "arch_flags",
        lambda: torch._C._cuda_getArchFlags() if hasattr(torch._C, "_cuda_getArchFlags") else None,
    )
    out.stage("cudnn")
    _catch(
        out,
        "cudnn",
        lambda: torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,  # type: ignore[no-untyped-call]
    )
    out.stage("cuda-init")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _catch(out, "cuda_available", lambda: bool(torch.cuda.is_available()))
        _catch(out, "device_count", lambda: int(torch.cuda.device_count()))
    out.doc["warnings"] = [str(w.message) for w in caught][:10]
    if out.doc.get("cuda_available"):
        out.stage("devices")

        def devices() -> list[dict[str, Any]]:
            res = []
            for i in range(torch.cuda.device_count()):
                cap = torch.cuda.get_device_capability(i)
                res.append({"index": i, "name": torch.cuda.get_device_name(i), "cc": "%d.%d" % cap})
            return res

        _catch(out, "devices", devices)
        _catch(out, "arch_list", lambda: list(torch.cuda.get_arch_list()))
        _catch(out, "nccl", lambda: _dotted(torch.cuda.nccl.version()))  # type: ignore[no-untyped-call]


def probe_tensorflow(out: Out) -> None:
    t0 = time.time()
    import tensorflow as tf

    out.doc["import_seconds"] = round(time.time() - t0, 3)
    out.doc["version"] = str(getattr(tf, "__version__", None) or tf.version.VERSION)
    out.doc["file"] = getattr(tf, "__file__", None)

    def build_info() -> dict[str, Any]:
        info = dict(tf.sysconfig.get_build_info())
        return dict(
            (k, v) for k, v in info.items() if isinstance(v, (str, int, float, bool, list, type(None)))
        )

    _catch(out, "build_info", build_info)
    out.stage("devices")
    _catch(out, "gpus", lambda: [d.name for d in tf.config.list_physical_devices("GPU")])


def probe_jax(out: Out) -> None:
    t0 = time.time()
    import jax  # type: ignore[import-not-found]

    out.doc["import_seconds"] = round(time.time() - t0, 3)
    out.doc["version"] = str(jax.__version__)
    try:
        import jaxlib  # type: ignore[import-not-found]

        out.doc["jaxlib"] = str(getattr(jaxlib, "__version__", None) or jaxlib.version.__version__)
    except Exception as exc:
        out.doc.setdefault("errors", {})["jaxlib"] = "%s: %s" % (type(exc).__name__, exc)
    out.stage("devices")
    _catch(out, "backend", lambda: str(jax.default_backend()))
    _catch(out, "devices", lambda: [str(d) for d in jax.devices()])


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: _framework_child.py MODE OUT.json\n")
        return 2
    mode, path = argv[1], argv[2]
    out = Out(path)
    out.doc["mode"] = mode
    out.stage("import")
    try:
        if mode == "meta":
            meta(out)
        elif mode == "torch":
            probe_torch(out)
        elif mode == "tensorflow":
            probe_tensorflow(out)
        elif mode == "jax":
            probe_jax(out)
        else:
            out.doc["error"] = "unknown mode %r" % mode
    except BaseException as exc:
        out.doc["error"] = "%s: %s" % (type(exc).__name__, exc)
        out.doc["traceback"] = traceback.format_exc()[-4000:]
        out.doc["libs"] = loaded_libs()
        out.save()
        return 1
    out.doc["libs"] = loaded_libs()
    out.stage("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
