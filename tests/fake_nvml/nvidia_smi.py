"""A fake `nvidia-smi` replaying what a real one printed for a profile (tests/data/nvml_profiles/*.json).

Only `--query-gpu=FIELDS --format=csv[,noheader][,nounits]` is replayed: it is the only form compat runs (never the
banner, never -q). The profile is FAKE_NVIDIA_SMI_PROFILE; its "nvidia_smi" section holds, per GPU, the text the
capture showed for each field ("query_gpu"), the fields this nvidia-smi rejects ("invalid_fields"), or a failure to
print instead ("fail": {"output": ..., "exit": N}). Stdlib only: it runs under any Python.
"""

from __future__ import annotations

import json
import os
import re
import sys

_UNIT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:MiB|W|C|%|MHz)\s*$")


def main(argv: list[str]) -> int:
    with open(os.environ["FAKE_NVIDIA_SMI_PROFILE"], encoding="utf-8") as f:
        smi = json.load(f).get("nvidia_smi") or {}
    fail = smi.get("fail")
    if fail:
        sys.stdout.write(fail["output"])
        return int(fail.get("exit", 9))
    query = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")), None)
    fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), "")
    if query is None or not fmt.startswith("csv"):
        sys.stderr.write("fake nvidia-smi: only --query-gpu=... --format=csv is replayed\n")
        return 2
    fields = query.split(",")
    for name in fields:
        if name in (smi.get("invalid_fields") or []):
            sys.stdout.write(f'Field "{name}" is not a valid field to query.\n\n')
            return 2
    rows = smi.get("query_gpu") or []
    if not rows:
        sys.stdout.write("No devices were found\n")
        return 6
    if "noheader" not in fmt:
        sys.stdout.write(", ".join(fields) + "\n")
    for row in rows:
        cells = []
        for name in fields:
            v = row.get(name)
            v = "[N/A]" if v is None or v == "N/A" else str(v)
            if "nounits" in fmt:
                m = _UNIT.match(v)
                v = m.group(1) if m else v
            cells.append(v)
        sys.stdout.write(", ".join(cells) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
