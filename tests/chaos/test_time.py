"""Bounded time end to end (issue 19, item 10): a Python whose `import torch` hangs cost 141 s on main (the
framework probe's 20 s, then a 120 s smoke timeout on the same hang). What a probe found broken is not retried."""

from __future__ import annotations

import json
from pathlib import Path

from tests.chaos.harness import assert_contract, run

# Answers the framework probe's "meta" question (torch 2.5.1 is installed), hangs on the import itself, and
# answers the smoke job's detection as well (so only the probe's verdict can stop the smoke job).
HANGING_IMPORT = r"""#!/bin/sh
if [ "$2" = "meta" ]; then
  printf '{"stage": "done", "python": "3.11.7", "executable": "%s", "distributions": {"torch": "2.5.1"}, "requires": {}, "static": {}}' "$0" > "$3"
  exit 0
fi
if [ "$1" = "-c" ]; then echo '@@compat-detect {"torch": "2.5.1", "tensorflow": null}'; exit 0; fi
sleep 300
"""


def test_a_hanging_import_is_not_retried_by_smoke(tmp_path: Path) -> None:
    py = tmp_path / "python"
    py.write_text(HANGING_IMPORT)
    py.chmod(0o755)
    r = run(["doctor", "--timeout", "1", "--python", str(py), "--json"], cap_s=40)
    assert_contract(r, codes=(1,), cap_s=40)
    doc = json.loads(r.out)
    skipped = {s["id"]: s["reason"] for s in doc["skipped"]}
    assert "import torch" in skipped.get("smoke", ""), skipped
    assert r.seconds < 20  # the probe's 4 s (4 x --timeout) and start-up, not 4 s + 120 s
