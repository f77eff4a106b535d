"""The output relay of `compat run`, a standalone script (stdlib only, run as `python -I -S relay.py IN OUT FEED
...`): copies the command's stdout and stderr to compat's own and to compat, so the command's writes never depend
on compat staying alive (compat SIGKILLed: the copy to compat stops, the output still reaches the terminal).

Arguments: triples of file descriptors, each `IN:OUT:FEED` (read IN, write OUT and FEED). It ignores TERM, HUP and
INT (a Ctrl-C reaches the command, which decides) and ends when every IN has reached its end, or when killed.
It first writes one byte (READY) to the first FEED: compat starts the command only once the relay runs."""

from __future__ import annotations

import os
import select
import signal
import sys

CHUNK = 65536
READY = b"R"


def _write(fd: int, data: bytes) -> bool:
    """Write all of `data`; False once `fd` is gone (a closed pipe, a dead compat, a full disk)."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except OSError:
            return False
        view = view[n:]
    return True


def relay(triples: list[tuple[int, int, int]]) -> None:
    live = {src: [out, feed] for src, out, feed in triples}  # -1: that destination has gone
    poller = select.poll()
    for src in live:
        poller.register(src, select.POLLIN | select.POLLHUP | select.POLLERR)
    while live:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        for src, _ in events:
            dests = live.get(src)
            if dests is None:
                continue
            try:
                data = os.read(src, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:
                poller.unregister(src)
                del live[src]
                for fd in (src, dests[1]):
                    if fd >= 0:
                        try:
                            os.close(fd)  # compat sees the end of this stream
                        except OSError:
                            pass
                continue
            for i, fd in enumerate(dests):
                if fd >= 0 and not _write(fd, data):
                    dests[i] = -1  # keep draining: the command must never block or get a broken pipe


def main(argv: list[str]) -> int:
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a gone destination is an EPIPE, handled above
    try:
        triples = [tuple(int(x) for x in a.split(":")) for a in argv]
        ready = [(t[0], t[1], t[2]) for t in triples]
    except (ValueError, IndexError):
        return 2
    if ready and not _write(ready[0][2], READY):  # compat waits for this before it starts the command
        return 1
    relay(ready)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
