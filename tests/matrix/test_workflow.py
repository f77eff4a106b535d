"""The scheduled refresh workflow parses and does what docs/matrix-sources.md says it does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "refresh-matrix.yml"


def _load() -> dict[Any, Any]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_triggers_weekly_and_by_hand() -> None:
    on = _load()[True]  # YAML 1.1 reads the bare key `on` as true
    assert set(on) == {"schedule", "workflow_dispatch"}
    (cron,) = (item["cron"] for item in on["schedule"])
    _minute, _hour, dom, month, dow = cron.split()
    assert (dom, month) == ("*", "*") and dow.isdigit()  # one day a week


def test_refreshes_validates_and_opens_a_pull_request() -> None:
    doc = _load()
    assert doc["permissions"] == {"contents": "write", "pull-requests": "write"}
    (job,) = doc["jobs"].values()
    assert job["timeout-minutes"] <= 60
    steps = job["steps"]
    runs = [s.get("run", "") for s in steps]
    i_refresh = next(i for i, r in enumerate(runs) if "tools/refresh_matrix.py" in r)
    i_validate = next(i for i, r in enumerate(runs) if "compat matrix validate" in r)
    i_pr = next(
        i
        for i, s in enumerate(steps)
        if str(s.get("uses", "")).startswith("peter-evans/create-pull-request@")
    )
    assert i_refresh < i_validate < i_pr
    assert "--write" in runs[i_refresh] and "--diff refresh.diff" in runs[i_refresh]
    body = next(r for r in runs if "pr-body.md" in r)
    assert "refresh.diff" in body and "validate.log" in body and "validate_rc" in body
    pr = steps[i_pr]["with"]
    assert pr["body-path"] == "pr-body.md" and "matrix/*.yaml" in pr["add-paths"]
    assert (ROOT / "tools" / "refresh_matrix.py").is_file()
