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

from compat._text import sanitize
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


KERNEL = ".kernel"
"""The marker a kernel leaves at `%load_ext compat` (its pid) and removes at a clean exit: while it is there and
the kernel is gone, the kernel died and its watcher is writing (or has written) the record. The next kernel of
the same key waits for that record, says it, and removes the marker: each death is told once, to the next
kernel, whatever the timing (issue 32, item 15)."""
WAIT_S = 8.0
"""How long the next kernel waits for the previous kernel's record: the watcher writes it about a second after
the death (its final readings, the explanation)."""


def previous_death(
    key: str, pid: int, environ: Mapping[str, str] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The newest record of an earlier kernel with this key that ended badly and was not shown yet."""
    d = store.records_dir(environ)
    try:
        names = sorted(
            (e for e in os.scandir(d) if e.name.startswith(f"notebook-{key}-") and e.name.endswith(".json")),
            key=_mtime,
            reverse=True,
        )
    except OSError:
        return None
    for e in names:
        if os.path.lexists(e.path + ".shown"):
            continue
        doc = store.load(e.path)
        if not doc or doc.get("pid") == pid or not doc.get("verdict"):
            continue
        return e.path, doc
    return None


def _mtime(e: os.DirEntry[str]) -> float:
    try:
        return e.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def _pending(key: str, pid: int, environ: Mapping[str, str] | None) -> list[str]:
    """The bases (records/notebook-KEY-PID) of earlier kernels of this key that are gone without a clean exit."""
    from compat.record.host import pid_alive

    d = store.records_dir(environ)
    prefix = f"notebook-{key}-"
    out = []
    try:
        entries = list(os.scandir(d))
    except OSError:
        return []
    for e in entries:
        if not (e.name.startswith(prefix) and e.name.endswith(KERNEL)):
            continue
        other = e.name[len(prefix) : -len(KERNEL)]
        if not other.isdigit() or int(other) == pid:
            continue
        if pid_alive(int(other))[0]:
            continue  # still running: not a death (yet)
        out.append(e.path[: -len(KERNEL)])
    return out


def _wait_record(base: str, deadline: float) -> dict[str, Any] | None:
    """The record the watcher writes for `base`, waiting until `deadline` (monotonic) for it to appear."""
    from compat.cache import read_own
    from compat.record.host import pid_alive

    watcher: int | None = None
    while True:
        doc = store.load(base + ".json")
        if doc is not None and doc.get("verdict"):
            return doc
        if watcher is None:
            raw = read_own(base + ".watcher", 32)  # the watcher's pid; a FIFO there must not hang the kernel
            watcher = int(raw) if raw and raw.strip().isdigit() else None
        elif not pid_alive(watcher)[0]:
            doc = store.load(base + ".json")  # it may have written the record just before it ended
            return doc if doc is not None and doc.get("verdict") else None
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def _touch(path: str, text: str = "") -> None:
    from compat.cache import write_private

    try:
        write_private(path, text.encode())
    except OSError:
        pass


def _report_previous(
    key: str, pid: int, out: IO[str], environ: Mapping[str, str] | None, wait_s: float
) -> None:
    """Say how the earlier kernels of this key ended (each once), then mark them told."""
    deadline = time.monotonic() + wait_s
    told = False
    for base in sorted(_pending(key, pid, environ)):
        if os.path.lexists(base + ".json.shown"):
            told = True
        else:
            doc = _wait_record(base, deadline)
            if doc is not None:
                if (doc.get("verdict") or {}).get("outcome") != "ok":
                    out.write(sanitize(death_message(doc)) + "\n")
            else:
                other = base.rsplit("-", 1)[-1]
                out.write(
                    f"compat: the previous kernel (pid {other}) ended without a clean exit; its record is not "
                    "written yet (`compat explain --last` will say why)\n"
                )
            told = True
            _touch(base + ".json.shown")  # before the record exists, if it is late: never told again
        try:
            os.unlink(base + KERNEL)
        except OSError:
            pass
    if told:
        return
    prev = previous_death(key, pid, environ)  # a record of a kernel older than the marker protocol
    if prev is not None:
        path, doc = prev
        if (doc.get("verdict") or {}).get("outcome") != "ok":
            out.write(sanitize(death_message(doc)) + "\n")
        _touch(path + ".shown")


def death_message(doc: Mapping[str, Any]) -> str:
    v = doc.get("verdict") or {}
    lines = [
        f"compat: the previous kernel (pid {doc.get('pid')}) {_verb(v)}: {v.get('title', 'unknown cause')}"
    ]
    for d in (v.get("deciding") or [])[:4]:
        lines.append(f"  - {d}")
    for f in (v.get("findings") or [])[1:3]:
        lines.append(f"  {f.get('severity')}: {f.get('title')}")
    try:  # what to do, as `compat run`'s summary and `compat explain --last` show it (issue 31)
        from compat.explain.render import fix_lines
        from compat.record.summary import verdict_fixes

        lines += fix_lines(verdict_fixes(v), "  ")
    except Exception:  # a record of another shape: the verdict's lines are the message
        pass
    return "\n".join(lines)


def _verb(v: Mapping[str, Any]) -> str:
    return "ended" if v.get("outcome") == "ok" else "died"


def load(
    ipython: Any = None,
    *,
    out: IO[str] | None = None,
    environ: Mapping[str, str] | None = None,
    pid: int | None = None,
    wait_s: float = WAIT_S,
) -> None:
    """`%load_ext compat`. Never raises into the user's cell: what fails is one line on `out`."""
    out = out or sys.stdout
    pid = os.getpid() if pid is None else pid
    try:
        key = kernel_key()
    except Exception:
        key = f"pid{os.getppid()}"
    try:
        _report_previous(key, pid, out, environ, wait_s)
    except Exception as exc:  # a damaged record or cache must not stop the watcher from starting
        out.write(f"compat: could not read the previous kernel's record: {type(exc).__name__}\n")
    try:
        _start(key, pid, out, environ)
    except Exception as exc:
        out.write(f"compat: the watcher did not start: {type(exc).__name__}: {exc}\n"[:300])


def _open_fault(path: str) -> IO[str]:
    """The faulthandler file: a new 0600 regular file (whatever was at `path`, a FIFO included, is replaced)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.fdopen(os.open(path, flags, 0o600), "w")


def _start(key: str, pid: int, out: IO[str], environ: Mapping[str, str] | None) -> None:
    if _STATE.get("pid") == pid:
        return  # already watching this kernel
    from compat.cache import cache_dir, private_dir

    d = store.records_dir(environ)
    if not (private_dir(cache_dir(os.environ if environ is None else environ)) and private_dir(d)):
        out.write(f"compat: not watching this kernel: {d} is not a private directory of this user\n")
        return
    base = os.path.join(d, f"notebook-{key}-{pid}")
    try:
        fault = _open_fault(base + ".fault")  # must stay open for faulthandler
        faulthandler.enable(file=fault, all_threads=True)
        _STATE["fault"] = fault
    except OSError as exc:
        out.write(f"compat: could not set up the fault report: {exc}\n")
    _touch(base + KERNEL, str(pid))

    def mark_exit() -> None:
        _touch(base + ".exit", "0")
        try:
            os.unlink(base + KERNEL)  # a clean exit: nothing for the next kernel to wait for
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

    skipped: list[tuple[str, str]] = []
    found = store.latest(environ, skipped=skipped)
    if found is None:
        damaged = (
            f"; skipped {len(skipped)} damaged record(s), the newest {skipped[0][0]}: {skipped[0][1]}"
            if skipped
            else ""
        )
        raise InputError(
            f"no recorded run in {store.records_dir(environ)} (record one with compat run, compat watch "
            f"or %load_ext compat){damaged}"
        )
    for path, why in skipped:  # one warning each, then the record before them
        store.warn_skipped(path, why)
    path, doc = found
    v = doc.get("verdict") or {}
    fmt = fmt or ("json" if json_out else "text")
    text = ""
    if fmt != "json":
        from compat.record.document import RunRecord
        from compat.record.summary import summary

        try:
            body = summary(RunRecord.from_json(doc))
        except Exception:  # a record of an older or damaged shape: the verdict's own lines
            body = sanitize(death_message(doc)) + "\n"
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
