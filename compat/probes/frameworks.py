"""Frameworks: what is installed (importlib.metadata, nothing imported), conflicts between the nvidia-* versions
the frameworks pin, and what each framework really reports when imported in a child interpreter (bounded;
`python` may be another environment's interpreter). A crash, hang or import error of the child is a result."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

from compat import _proc
from compat import cache as cache_mod
from compat._proc import run as run_command
from compat._proc import signal_name, tail
from compat.distributions import DISTRIBUTIONS, SUPPORT
from compat.probes.host import run_bounded
from compat.probes.outcome import describe_child

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_framework_child.py")

# Installed distribution -> the child mode that imports it (the one table: compat.distributions).
MODES = dict(DISTRIBUTIONS)
FRAMEWORK_DISTS = (*MODES, *SUPPORT)
# Extras whose nvidia-* pins count: TensorFlow's CUDA libraries come with tensorflow[and-cuda].
EXTRAS = {"tensorflow": ("and-cuda",), "tf-nightly": ("and-cuda",), "jax": ("cuda12", "cuda13", "cuda")}


# ------------------------------------------------------------------ installed distributions (no import)


def installed_here() -> dict[str, Any]:
    """This interpreter's distributions, the frameworks' requirements and their static build files: the child's
    "meta" answer, computed in-process (importlib.metadata and file reads; no framework is imported)."""
    from compat.probes import _framework_child as child

    out = child.Out(os.devnull)
    child.meta(out)
    return {"status": "ok", **out.doc}


def pin_conflicts(dists: Mapping[str, str], requires: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """Installed nvidia-* versions a framework's requirement does not accept (torch's pins, tensorflow[and-cuda]'s).

    Requirements of an extra count only when some nvidia-* distribution is installed (the extra was wanted).
    """
    from compat.installed import may_name_nvidia

    any_nvidia = any(k.startswith("nvidia-") for k in dists)
    out: list[dict[str, Any]] = []
    if not any_nvidia or not any(may_name_nvidia(x, dists) for lines in requires.values() for x in lines):
        return out  # nothing to conflict with: packaging's parser (~16 ms to import) is not needed
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    for fw in sorted(requires):
        extras = ("",) + (EXTRAS.get(fw, ()) if any_nvidia else ())
        for line in requires[fw]:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            name = canonicalize_name(req.name)
            if not name.startswith("nvidia-") or name not in dists:
                continue
            if req.marker is not None:
                try:
                    if not any(req.marker.evaluate({"extra": e}) for e in extras):
                        continue
                except Exception:
                    continue
            if not req.specifier:
                continue
            try:
                ok = req.specifier.contains(Version(dists[name]), prereleases=True)
            except InvalidVersion:
                continue
            if not ok:
                out.append(
                    {
                        "framework": fw,
                        "framework_version": dists.get(fw),
                        "dist": name,
                        "requires": str(req.specifier),
                        "installed": dists[name],
                        "extra": "and-cuda"
                        if req.marker is not None and "extra" in str(req.marker)
                        else None,
                    }
                )
    return out


def framework_modes(dists: Mapping[str, str]) -> dict[str, str]:
    """mode -> the installed distribution it imports ("tensorflow" -> "tensorflow-cpu")."""
    out: dict[str, str] = {}
    for dist, mode in MODES.items():
        if dist in dists and mode not in out:
            out[mode] = dist
    return out


# ------------------------------------------------------------------ the child interpreter


def run_child(
    python: str, mode: str, timeout: float, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Run the child script once; its (maybe partial) JSON, and how the process ended."""
    import tempfile  # only when a child runs (a warm doctor starts none)

    d = _proc.track_dir(tempfile.mkdtemp(prefix="compat-probe-"))
    try:
        path = os.path.join(d, "out.json")
        res = run_command([python, CHILD, mode, path], timeout, environ=environ, cwd=d)
        doc: dict[str, Any] | None = None
        bad_json = None
        data = cache_mod.read_regular(path, CHILD_JSON_MAX)
        try:
            loaded = json.loads(data) if data is not None else None
            doc = loaded if isinstance(loaded, dict) else None
            if data is None and os.path.exists(path):
                bad_json = f"its answer is not a regular file of at most {CHILD_JSON_MAX >> 20} MiB"
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            bad_json = f"{type(exc).__name__}: {exc}" if isinstance(exc, RecursionError) else str(exc)
    finally:
        _proc.remove_dir(d)
    if res.status == "ok" and doc is not None and doc.get("stage") == "done" and not doc.get("error"):
        status = "ok"
    elif res.status == "timeout":
        status = "timeout"
    elif res.status == "crashed":
        status = "crashed"
    elif res.status in ("not-found", "error"):
        status = "not-run"
    elif doc is not None and doc.get("error"):
        status = "import-error"
    else:
        status = "failed"
    return {
        "status": status,
        "mode": mode,
        "returncode": res.returncode,
        "signal": signal_name(res.returncode) if res.status == "crashed" else None,
        "seconds": round(res.seconds, 2),
        "describe": res.describe(),
        "output": tail(res.output, 3000),
        "result": doc,
        "bad_json": bad_json,
        "timeout": timeout,
    }


# ------------------------------------------------------------------ cache of successful imports

CACHE_FORMAT = 2
"""The doctor's import entries in compat's one cache (compat.cache)."""
CHILD_JSON_MAX = 16 << 20
CACHE_TTL = 6 * 3600.0
"""A successful import is re-used for at most this long, and only while nothing it depends on changed."""
_KEY_ENV_PREFIXES = (
    "CUDA_",
    "NVIDIA_",
    "PYTORCH_",
    "TORCH_",
    "TF_",
    "XLA_",
    "JAX_",
    "NCCL_",
    "LD_",
    "PYTHON",
    "OMP_",
    "MKL_",
    "COMPAT_OVERRIDE_",
)


def cache_dir(environ: Mapping[str, str]) -> str:
    """compat's one cache directory (compat.cache.cache_dir)."""
    return cache_mod.cache_dir(environ)


def _stat(path: str) -> list[Any] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_mtime_ns, st.st_size]


def _small(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def cache_key(exe: str, mode: str, meta: Mapping[str, Any], environ: Mapping[str, str]) -> str:
    """Everything an import's outcome depends on: the interpreter, every installed distribution, the framework's
    files, the relevant environment, the driver, the device nodes and this boot (a reboot starts afresh)."""
    import glob

    try:
        with open(CHILD, "rb") as f:
            child_digest = cache_mod.sha256(f.read()).hexdigest()
    except OSError:
        child_digest = None
    parts = {
        "format": CACHE_FORMAT,
        "child": child_digest,
        "mode": mode,
        "exe": _stat(os.path.realpath(exe)),
        "python": meta.get("python"),
        "dists": meta.get("dists_digest"),
        "stamp": (meta.get("stamps") or {}).get(mode),
        "env": {k: v for k, v in sorted(environ.items()) if k.startswith(_KEY_ENV_PREFIXES)},
        "boot": _small("/proc/sys/kernel/random/boot_id"),
        "driver": _small("/proc/driver/nvidia/version"),
        "dev": sorted(glob.glob("/dev/nvidia*")),
    }
    return str(cache_mod.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32])


def _cache_path(environ: Mapping[str, str], key: str) -> str:
    return os.path.join(cache_dir(environ), f"doctor-import-{key}.bin")


def load_cached(environ: Mapping[str, str], key: str, now: float) -> dict[str, Any] | None:
    doc = cache_mod.load(_cache_path(environ, key), CACHE_FORMAT)  # damaged, a FIFO, too big: None
    if doc is None or not isinstance(doc.get("child"), dict):
        return None
    if doc["child"].get("status") != "ok" or not isinstance(doc["child"].get("result"), dict):
        return None  # only successful imports are stored: anything else is not ours
    at = doc.get("at")
    if not isinstance(at, (int, float)) or not (0 <= now - at <= CACHE_TTL):
        return None
    child = dict(doc["child"])
    child["cached"] = True
    child["checked_seconds_ago"] = round(now - at)
    return child


def store_cached(environ: Mapping[str, str], key: str, child: Mapping[str, Any], now: float) -> None:
    """Keep a successful import; an unwritable cache is ignored."""
    try:  # the cache holds plain values only (marshal): the child's JSON round-trips to exactly that
        plain = json.loads(json.dumps(dict(child), default=str))
    except (ValueError, RecursionError):
        return
    cache_mod.store(
        _cache_path(environ, key), CACHE_FORMAT, {"at": now, "child": plain}, family="doctor-import-"
    )


def child_answer(mode: str, doc: Mapping[str, Any], seconds: float, timeout: float) -> dict[str, Any] | None:
    """The child record run_child would return, for a complete, error-free answer written by another child of
    this interpreter (the doctor's smoke job: `--probe-out`); None for anything else."""
    if doc.get("stage") != "done" or doc.get("error") or doc.get("mode") != mode:
        return None
    return {
        "status": "ok",
        "mode": mode,
        "returncode": 0,
        "signal": None,
        "seconds": round(seconds, 2),
        "describe": "answered by the smoke job's import",
        "output": "",
        "result": dict(doc),
        "bad_json": None,
        "timeout": timeout,
    }


def store_answer(
    mode: str, doc: Mapping[str, Any], seconds: float, timeout: float, environ: Mapping[str, str]
) -> bool:
    """Keep an import's answer written by another child of this interpreter (the doctor's smoke job, which
    imports the framework anyway: `--probe-out`), under the key this interpreter's probe looks up, so the
    probe does not import the framework a second time. Only a complete, error-free answer is kept."""
    import time

    child = child_answer(mode, doc, seconds, timeout)
    if child is None:
        return False
    meta = installed_here()
    if mode not in framework_modes(meta.get("distributions") or {}):
        return False
    now = time.time()
    store_cached(environ, cache_key(sys.executable, mode, meta, environ), child, now)
    return load_cached(environ, cache_key(sys.executable, mode, meta, environ), now) is not None


# ------------------------------------------------------------------ the probe


def probe(
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    timeout: float = 20.0,
    frameworks: bool = True,
    cache: bool = True,
    meta_timeout: float | None = None,
    answers: Mapping[str, Callable[[], dict[str, Any] | None]] | None = None,
) -> dict[str, Any]:
    """Installed distributions (in-process, or via the child for another interpreter) and one child per framework.

    A child that imported its framework successfully is cached (see cache_key); failures are never cached, so a
    broken import is re-tried on every run. `timeout` bounds each import, `meta_timeout` (default: the same) the
    other interpreter's metadata read, which imports nothing. `answers`: mode -> a function that waits for
    another child's answer for that mode (the doctor's smoke job imports it anyway); None from it means "import
    it here after all". A successful answer is cached like the probe's own.
    """
    import time

    env = dict(os.environ if environ is None else environ)
    if python is None:
        meta = installed_here()
        exe = sys.executable
    else:
        child = run_child(python, "meta", timeout if meta_timeout is None else meta_timeout, env)
        doc = child.get("result") or {}
        if child["status"] != "ok":
            return {
                "status": "error",
                "python_executable": python,
                "meta": child,
                "error": f"the interpreter {python} {describe_child(child)}",
            }
        meta = {"status": "ok", **doc}
        meta.setdefault("executable", python)
        exe = python
    dists = dict(meta.get("distributions") or {})
    reqs = dict(meta.get("requires") or {})
    out: dict[str, Any] = {
        "status": "ok",
        "python": meta.get("python"),
        "executable": meta.get("executable"),
        "distributions": dists,
        "requires": reqs,
        "conflicts": pin_conflicts(dists, reqs),
        "static": meta.get("static") or {},
    }
    modes = framework_modes(dists)
    if not frameworks:
        out["children"] = {m: {"status": "skipped", "mode": m} for m in modes}
        return out
    now = time.time()
    keys = {m: cache_key(exe, m, meta, env) for m in modes} if cache else {}
    children: dict[str, Any] = {}
    tasks = {}
    for m in modes:
        hit = load_cached(env, keys[m], now) if cache else None
        if hit is not None:
            children[m] = hit
        elif answers is not None and m in answers:
            tasks[m] = lambda m=m: answers[m]() or run_child(exe, m, timeout, env)
        else:
            tasks[m] = lambda m=m: run_child(exe, m, timeout, env)
    if tasks:
        fresh = run_bounded(tasks, timeout + 5.0)
        for m, child in fresh.items():
            children[m] = child
            if cache and isinstance(child, dict) and child.get("status") == "ok":
                store_cached(env, keys[m], child, now)
    out["children"] = dict(sorted(children.items()))
    return out


# ------------------------------------------------------------------ interpreting the child's answers


def decode_cudnn(v: Any) -> str | None:
    """torch.backends.cudnn.version(): 8907 -> "8.9.7" (8.x: M*1000+m*100+p), 90100 -> "9.1.0" (9.x: M*10000+m*100+p)."""
    if not isinstance(v, int) or v <= 0:
        return None
    if v >= 90000:
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"


def _tf_version_field(v: Any) -> str | None:
    """get_build_info()'s "12.3"; on Windows "64_112" (CUDA 11.2) or "64_8" (cuDNN 8)."""
    if v is None:
        return None
    s = str(v)
    if s.startswith("64_"):
        s = s[3:]
        if "." not in s and len(s) >= 3:
            s = f"{s[:-1]}.{s[-1]}"
    return s or None


def torch_facts(doc: Mapping[str, Any]) -> dict[str, str | None]:
    cuda = doc.get("cuda")
    build = "rocm" if doc.get("hip") else ("cuda" if cuda else "cpu")
    flags = doc.get("arch_flags")
    archs = " ".join(a for a in str(flags).split() if a.startswith(("sm_", "compute_"))) if flags else None
    if not archs and doc.get("arch_list"):
        archs = " ".join(doc["arch_list"])
    return {
        "torch": doc.get("version"),
        "torch_cuda": str(cuda) if cuda else None,
        "torch_cudnn": decode_cudnn(doc.get("cudnn")),
        "torch_archs": archs or None,
        "torch_build": build,
    }


def tf_facts(doc: Mapping[str, Any]) -> dict[str, str | None]:
    bi = doc.get("build_info") or {}
    if bi.get("is_rocm_build"):
        build = "rocm"
    elif bi.get("is_cuda_build"):
        build = "cuda"
    elif bi:
        build = "cpu"
    else:
        build = None
    ccs = bi.get("cuda_compute_capabilities")
    archs = (
        " ".join(str(c) for c in ccs if str(c).startswith(("sm_", "compute_")))
        if isinstance(ccs, list)
        else None
    )
    return {
        "tensorflow": doc.get("version"),
        "tf_cuda": _tf_version_field(bi.get("cuda_version")),
        "tf_cudnn": _tf_version_field(bi.get("cudnn_version")),
        "tf_archs": archs or None,
        "tf_build": build,
    }
