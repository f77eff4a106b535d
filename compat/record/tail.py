"""The last lines of a run's output, bounded by lines and by size: what is kept is what the record can hold."""

from __future__ import annotations

import collections

TAIL_CHARS = 4 << 20
"""At most this many characters of output are kept (the newest whole lines). At most 6 bytes of JSON each (an
escaped control character), so a full tail stays well within what compat.record.store reads back (32 MiB), and
`compat run --tail 100000` on 4,000-character lines holds ~4 MiB, not 400 (issue 32, item 13)."""


class Tail(collections.deque[str]):
    """A deque of the last `lines` lines whose total length stays within `max_chars`: the oldest lines go first;
    the newest line is always kept (each line is already cut to compat.record.run.LINE_CAP)."""

    def __init__(self, lines: int, max_chars: int = TAIL_CHARS) -> None:
        super().__init__(maxlen=max(1, lines))
        self.max_chars = max_chars
        self.chars = 0

    def append(self, line: str) -> None:
        if len(line) > self.max_chars:
            line = line[-self.max_chars :]
        if self.maxlen is not None and len(self) == self.maxlen:
            self.chars -= len(self[0])  # deque drops it on its own
        super().append(line)
        self.chars += len(line)
        while self.chars > self.max_chars and len(self) > 1:
            self.chars -= len(self.popleft())
