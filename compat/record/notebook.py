"""`%load_ext compat`: say why the previous kernel died, then start a detached watcher for this kernel.

The watcher is a separate process (python -m compat.record.watch --detach) that outlives a killed kernel and
writes its record into the cache directory; this kernel adds its own two reports beside it: faulthandler
output on a fatal signal and an exit marker at a clean exit. `compat explain --last` reads the same records."""

from __future__ import annotations

import atexit
import faulthandler
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import IO, Any

from compat.record import store

_STATE: dict[str, Any] = {}


def kernel_key() -> str:
    """The kernel's id (from its connection file, which a restarted kernel keeps), else 'pid<ppid>'."""
    conn = ""
    try:
        from ipykernel.connect import get_connection_file  # type: ignore[import-not-found,unused-ignore]

        conn = get_connection_file()
    except Exception:
        conn = ""
    name = os.path.basename(conn)
    m = re.match(r"kernel-(.+)\.json$", name)
    key = m.group(1) if m else (name.rsplit(".", 1)[0] if name else f"pid{os.getppid()}")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key)[:80]


def previous_death(
    key: str, pid: int, environ: Mapping[str, str] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The newest record of an earlier kernel with this key that ended badly and was not shown yet."""
    d = store.records_dir(environ)
    try:
        names = sorted(
            (e for e in os.scandir(d) if e.name.startswith(f"notebook-{key}-") and e.name.endswith(".json")),
            key=lambda e: e.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return None
    for e in names:
        if os.path.exists(e.path + ".shown"):
            continue
        doc = store.load(e.path)
        if not doc or doc.get("pid") == pid or not doc.get("verdict"):
            continue
        return e.path, doc
    return None


def death_message(doc: Mapping[str, Any]) -> str:
    v = doc.get("verdict") or {}
    lines = [
        f"compat: the previous kernel (pid {doc.get('pid')}) {_verb(v)}: {v.get('title', 'unknown cause')}"
    ]
    for d in (v.get("deciding") or [])[:4]:
        lines.append(f"  - {d}")
    for f in (v.get("findings") or [])[1:3]:
        lines.append(f"  {f.get('severity')}: {f.get('title')}")
    return "\n".join(lines)


def _verb(v: Mapping[str, Any]) -> str:
    return "ended" if v.get("outcome") == "ok" else "died"


def load(
    ipython: Any = None, *, out: IO[str] | None = None, environ: Mapping[str, str] | None = None
) -> None:
    out = out or sys.stdout
    pid = os.getpid()
    key = kernel_key()
    prev = previous_death(key, pid, environ)
    if prev is not None:
        path, doc = prev
        if (doc.get("verdict") or {}).get("outcome") != "ok":
            from compat._text import sanitize

            out.write(sanitize(death_message(doc)) + "\n")  # a notebook's stdout is not compat's filtered one
        try:
            with open(path + ".shown", "w"):
                pass
        except OSError:
            pass
    if _STATE.get("pid") == pid:
        return  # already watching this kernel
    base = os.path.join(store.records_dir(environ), f"notebook-{key}-{pid}")
    try:
        os.makedirs(os.path.dirname(base), exist_ok=True)
        fault = open(base + ".fault", "w")  # noqa: SIM115 - must stay open for faulthandler
        faulthandler.enable(file=fault, all_threads=True)
        _STATE["fault"] = fault
    except OSError as exc:
        out.write(f"compat: could not set up the fault report: {exc}\n")

    def mark_exit() -> None:
        try:
            with open(base + ".exit", "w") as fh:
                fh.write("0")
        except OSError:
            pass

    atexit.register(mark_exit)
    argv = [
        sys.executable,
        "-m",
        "compat.record.watch",
        "--pid",
        str(pid),
        "--notebook",
        base,
        "--kernel-id",
        key,
        "--detach",
    ]
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [_compat_root(), env.get("PYTHONPATH", "")] if p)
    try:
        # The first child forks the watcher and exits at once; wait for it so no zombie is left.
        subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=30,
            check=False,
            close_fds=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        out.write(f"compat: the watcher did not start: {exc}\n")
        return
    _STATE["pid"] = pid
    _STATE["started"] = time.time()
    out.write(
        f"compat: watching this kernel (pid {pid}); if it dies, the next `%load_ext compat` "
        "(or `compat explain --last`) says why.\n"
    )


def _compat_root() -> str:
    """The directory that holds the compat package this kernel imported (so the watcher runs the same code)."""
    # This module is compat/record/notebook.py of that package: three levels up is the directory that holds it.
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def explain_last(
    json_out: bool = False, environ: Mapping[str, str] | None = None, *, fmt: str | None = None
) -> int:
    """`compat explain --last`: the verdict of the newest record (a run, a watch or a notebook kernel)."""
    from compat.errors import InputError
    from compat.output.emit import emit
    from compat.record.verdict_document import RunVerdictDocument
    from compat.schema_version import SCHEMA_VERSION

    found = store.latest(environ)
    if found is None:
        raise InputError(
            f"no recorded run in {store.records_dir(environ)} (record one with compat run, compat watch "
            "or %load_ext compat)"
        )
    path, doc = found
    v = doc.get("verdict") or {}
    fmt = fmt or ("json" if json_out else "text")
    text = ""
    if fmt != "json":
        from compat.record.document import RunRecord
        from compat.record.summary import summary

        try:
            body = summary(RunRecord.from_json(doc))
        except (KeyError, TypeError, ValueError):
            body = death_message(doc) + "\n"
        text = f"{path} ({doc.get('started_at')})\n{body}"
    out = RunVerdictDocument(
        {
            "schema_version": SCHEMA_VERSION,
            "record": path,
            "kind": doc.get("kind"),
            "pid": doc.get("pid"),
            "started_at": doc.get("started_at"),
            "verdict": v,
        },
        text_out=text,
    )
    return emit(out, fmt)
