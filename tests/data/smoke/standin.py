"""A stand-in for the smoke-training child: misbehaves in one chosen way so the harness can be tested.

python standin.py MODE --out RESULT.json --selfpid FILE [--text FILE] [--pidfile FILE]
(--selfpid: where it writes its own pid, the id of its process group; --pidfile: its grandchild's)
Standard library only, like the real children.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

MARKER = "@@compat-smoke"


def stage(name: str) -> None:
    sys.stderr.write(f"{MARKER} stage {name} 0.001\n")
    sys.stderr.flush()


def write(path: str, doc: object) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def result(status: str, **extra: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "schema_version": 1,
        "status": status,
        "framework": "torch",
        "framework_version": "9.9.9+standin",
        "device": "cpu",
        "device_name": "stand-in CPU",
        "steps": 3,
        "losses": [2.0, 1.5, 1.0],
        "loss_first": 2.0,
        "loss_last": 1.0,
        "samples_per_second": 100.0,
        "peak_memory_bytes": 1000,
        "peak_memory_kind": "host_peak_rss",
        "cudnn_used": False,
        "stage": "done",
        "timings": {"import": 0.01},
    }
    doc.update(extra)
    return doc


def spawn_grandchild(pidfile: str, ignore_term: bool) -> None:
    code = (
        "import os, signal, sys, time\n"
        + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "")
        + "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
        + "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
        + "time.sleep(600)\n"
    )
    subprocess.Popen(
        [sys.executable, "-c", code, pidfile],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 10
    while not os.path.exists(pidfile) and time.time() < deadline:
        time.sleep(0.01)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode")
    p.add_argument("--out", required=True)
    p.add_argument("--text")
    p.add_argument("--pidfile")
    p.add_argument("--selfpid", required=True)
    a = p.parse_args()
    with open(a.selfpid, "w", encoding="utf-8") as f:
        f.write(str(os.getpid()))
    text = ""
    if a.text:
        with open(a.text, encoding="utf-8") as f:
            text = f.read()
    stage("import")
    if a.mode == "pass":
        print("junk on stdout \x00\xff that must not matter")
        write(a.out, result("passed"))
        stage("done")
        sys.exit(0)
    if a.mode == "not_decreasing":
        write(a.out, result("passed", losses=[1.0, 1.2, 1.5], loss_first=1.0, loss_last=1.5))
        sys.exit(0)
    stage("first_step")
    write(a.out, result("running", stage="first_step", losses=[], loss_first=None, loss_last=None, steps=0))
    if a.mode == "segv":
        sys.stderr.write(text)
        sys.stderr.flush()
        ctypes.string_at(0)  # a real segmentation fault
    elif a.mode == "abort":
        os.abort()
    elif a.mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif a.mode in ("hang", "hang_ignore_term"):
        if a.mode == "hang_ignore_term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(600)
    elif a.mode in ("grandchild", "grandchild_ignore_term"):
        spawn_grandchild(a.pidfile, a.mode == "grandchild_ignore_term")
        write(a.out, result("passed"))
        sys.exit(0)
    elif a.mode == "grandchild_hang":
        spawn_grandchild(a.pidfile, False)
        time.sleep(600)
    elif a.mode == "error_exit":  # an uncaught error: the text on stderr, exit 1, no verdict written
        os.remove(a.out)
        sys.stderr.write(text)
        sys.exit(1)
    elif a.mode == "error_result":  # what the real child does with an exception: a failed verdict carrying it
        write(
            a.out,
            result(
                "failed",
                stage="first_step",
                losses=[],
                loss_first=None,
                loss_last=None,
                steps=0,
                error={"type": "builtins.RuntimeError", "text": text, "traceback": text},
                message=text.strip().splitlines()[-1],
            ),
        )
        sys.exit(1)
    elif a.mode == "junk":
        sys.stdout.buffer.write(os.urandom(4096))
        sys.stderr.buffer.write(b"\xff\xfe garbage \x00\x01\n" + os.urandom(512))
        with open(a.out, "wb") as f:
            f.write(b"{not json at all \xff")
        sys.exit(0)
    elif a.mode == "json_list":
        write(a.out, [1, 2, 3])
        sys.exit(0)
    elif a.mode == "exit3":
        os.remove(a.out)
        sys.exit(3)
    raise SystemExit(f"unknown mode {a.mode}")


if __name__ == "__main__":
    main()
