"""Issue 31 item 2: a run shows what to do (its fixes, with commands) in the terminal summary, in
`compat explain --last` and in report.html; the report prints no None and keeps its labels inside the charts."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compat.explain import diagnose_lines
from compat.record import store
from compat.record.document import ExitInfo, RunRecord
from compat.record.html import render_html
from compat.record.notebook import explain_last
from compat.record.summary import summary
from compat.record.verdict import verdict_of
from tests.record.helpers import GiB, MiB, record

ILLEGAL = [
    "epoch 0 step 10 loss 2.31",
    "Traceback (most recent call last):",
    '  File "train.py", line 88, in <module>',
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
    "might be incorrect.",
]
COMMANDS = (
    "CUDA_LAUNCH_BLOCKING=1 python train.py",
    "compute-sanitizer --tool memcheck python train.py",
    "assert labels.min() >= 0 and labels.max() < num_classes",
)


def illegal_access_run() -> RunRecord:
    rec = record(ExitInfo("exited", code=1), output=ILLEGAL)
    rec.verdict = verdict_of(rec, diagnose_lines(rec.output_tail)).to_json()
    return rec


def _fix_rows(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return [x for f in doc["verdict"]["findings"] for x in f["fixes"]]


# ------------------------------------------------------------------ the fixes are shown


def test_run_json_holds_the_fixes_the_views_must_show() -> None:
    doc = illegal_access_run().to_json()
    assert doc["verdict"]["findings"][0]["id"] == "record.explain.illegal_memory_access"
    assert {x["command"] for x in _fix_rows(doc)} >= set(COMMANDS)


def test_terminal_summary_lists_the_fixes_with_their_commands() -> None:
    out = summary(illegal_access_run())
    assert "Fix:" in out
    assert "→ Re-run with synchronous kernel launches" in out
    assert "$ CUDA_LAUNCH_BLOCKING=1 python train.py" in out
    assert "$ compute-sanitizer --tool memcheck python train.py" in out
    # Python code is shown as code, not as a shell command
    assert "assert labels.min() >= 0 and labels.max() < num_classes" in out
    assert "$ assert" not in out


def test_summary_renders_fixes_as_compat_explain_does() -> None:
    from compat.explain.render import render

    diags = diagnose_lines(ILLEGAL)
    explained = render(diags, "train.log", len(ILLEGAL))
    block = explained[explained.index("  Fix:\n") :].split("\n\n")[0].rstrip("\n")
    assert block in summary(illegal_access_run())


def test_explain_last_lists_the_fixes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"COMPAT_CACHE_DIR": str(tmp_path)}
    store.save(illegal_access_run().to_json(), "run-1.json", env)
    assert explain_last(environ=env) == 1  # the run failed
    out = capsys.readouterr().out
    assert "an illegal memory access" in out.lower() or "kernel faulted" in out
    assert "$ CUDA_LAUNCH_BLOCKING=1 python train.py" in out
    assert "$ compute-sanitizer --tool memcheck python train.py" in out


def test_report_html_lists_the_fixes_with_their_commands() -> None:
    page = render_html(illegal_access_run())
    assert "Re-run with synchronous kernel launches" in page
    assert "<code>$ CUDA_LAUNCH_BLOCKING=1 python train.py</code>" in page
    assert "<code>assert labels.min() &gt;= 0 and labels.max() &lt; num_classes</code>" in page


def test_the_fixes_name_the_recorded_command() -> None:
    rec = illegal_access_run()
    rec.command = ["torchrun", "--nproc-per-node", "8", "train.py", "--cfg", "a b.yaml"]
    want = "CUDA_LAUNCH_BLOCKING=1 torchrun --nproc-per-node 8 train.py --cfg 'a b.yaml'"
    assert f"$ {want}" in summary(rec)
    assert f"<code>$ {want.replace(chr(39), '&#x27;')}</code>" in render_html(rec)
    # the record keeps explain's words; only the views put the command in
    assert "CUDA_LAUNCH_BLOCKING=1 python train.py" in json.dumps(rec.to_json())


def test_an_old_record_with_an_unknown_fix_kind_still_renders() -> None:
    doc = illegal_access_run().to_json()
    for x in _fix_rows(doc):
        x["kind"] = "teleport"
    rec = RunRecord.from_json(json.loads(json.dumps(doc)))
    assert "CUDA_LAUNCH_BLOCKING=1 python train.py" in summary(rec)
    assert "CUDA_LAUNCH_BLOCKING=1 python train.py" in render_html(rec)


# ------------------------------------------------------------------ fix kinds are truthful


def test_a_python_fix_is_kind_python_in_run_json() -> None:
    doc = illegal_access_run().to_json()
    kinds = {x["command"]: x["kind"] for x in _fix_rows(doc)}
    assert kinds["assert labels.min() >= 0 and labels.max() < num_classes"] == "python"
    assert kinds["CUDA_LAUNCH_BLOCKING=1 python train.py"] == "shell"
    for d in doc["verdict"]["explain"]:
        for x in d["fixes"]:
            if x["command"] and x["command"].startswith("assert "):
                assert x["kind"] == "python"


def test_run_schema_names_the_fix_kinds() -> None:
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "compat" / "record" / "run.schema.json").read_text())
    doc = illegal_access_run().to_json()
    jsonschema.validate(doc, schema)
    doc["verdict"]["findings"][0]["fixes"][0]["kind"] = "bash"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


# ------------------------------------------------------------------ the report: no None, labels inside


VISIBLE_JUNK = re.compile(r"\b(None|null|nan|NaN|undefined)\b")


def visible_text(page: str) -> str:
    body = page.split("<body>", 1)[1]
    return re.sub(r"<[^>]+>", " ", body)


def sparse_record() -> RunRecord:
    """A record where every optional field is missing: a watched process that vanished."""
    rec = record(ExitInfo("vanished", source="proc"), readable=False, cgroup={"reason": None}, kind="watch")
    rec.command = []
    rec.gpu = {"available": False, "reason": None, "gpus": []}
    rec.kernel_log = {
        "readable": False,
        "reason": None,
        "events": [{"kind": "segfault", "pid": 1, "t": 3.0, "text": "python[1]: segfault at 0"}],
    }
    rec.processes = {4242: None}  # type: ignore[dict-item]
    rec.verdict = verdict_of(rec).to_json()
    return rec


@pytest.mark.parametrize(
    "make",
    [
        illegal_access_run,
        sparse_record,
        lambda: _killed(),
    ],
    ids=["illegal-access", "sparse", "killed"],
)
def test_report_shows_no_none_null_nan_or_undefined(make) -> None:  # type: ignore[no-untyped-def]
    page = render_html(make())
    junk = VISIBLE_JUNK.findall(visible_text(page))
    assert not junk, junk


def _killed() -> RunRecord:
    import signal

    rec = record(ExitInfo("signaled", signal=int(signal.SIGKILL)), rss=[i * 30 * MiB for i in range(1, 12)])
    rec.verdict = verdict_of(rec).to_json()
    return rec


def test_exit_row_reads_as_words() -> None:
    page = render_html(_killed())
    assert "signal=None" not in page and "core=None" not in page
    assert "killed by SIGKILL" in visible_text(page)


FONT = {"t": 13.0, "ax": 11.0, "lg": 12.0, "ev": 11.0, "note": 11.0}


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg\b.*?</svg>", page, re.S)]


def text_box(t: ET.Element) -> tuple[float, float, float, float]:
    size = FONT[t.get("class", "ax")]
    width = len(t.text or "") * size * 0.62
    x, y = float(t.get("x", "0")), float(t.get("y", "0"))
    anchor = t.get("text-anchor", "start")
    left = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
    return left, y - size, left + width, y + size * 0.25


def gpu_run(n_gpus: int = 1, wall: float = 3725.0) -> RunRecord:
    import signal

    used = [20 * GiB + i * 600 * MiB for i in range(100)]
    rec = record(
        ExitInfo("signaled", signal=int(signal.SIGSEGV), core_dumped=True),
        gpu_used=used,
        kernel_events=[
            {"kind": "xid", "pid": 4242, "xid": 79, "t": 99.0, "text": "NVRM: Xid 79 " + "x" * 80}
        ],
        output=["step 1"],
    )
    rec.wall_s = wall
    rec.samples = [s.__class__(s.t * wall / 100, *[getattr(s, f) for f in ("rss", "procs", "cgroup", "swap", "shm", "gpus")]) for s in rec.samples]  # fmt: skip
    gpus = []
    for i in range(n_gpus):
        g = dict(rec.gpu["gpus"][0])
        g["index"] = i
        gpus.append(g)
    rec.gpu["gpus"] = gpus
    rec.verdict = verdict_of(rec).to_json()
    return rec


@pytest.mark.parametrize(
    "make",
    [illegal_access_run, sparse_record, _killed, gpu_run, lambda: gpu_run(8)],
    ids=["illegal-access", "sparse", "killed", "gpu-1h", "gpu-8"],
)
def test_every_svg_label_stays_inside_the_viewbox(make) -> None:  # type: ignore[no-untyped-def]
    page = render_html(make())
    charts = svgs(page)
    assert charts
    for svg in charts:
        vb = [float(v) for v in (svg.get("viewBox") or "").split()]
        assert len(vb) == 4, "every chart has a viewBox"
        x0, y0, w, h = vb
        for t in svg.iter("{http://www.w3.org/2000/svg}text"):
            left, top, right, bottom = text_box(t)
            assert left >= x0 and right <= x0 + w, (t.text, left, right, w)
            assert top >= y0 and bottom <= y0 + h, (t.text, top, bottom, h)


def test_the_end_label_is_not_clipped() -> None:
    page = render_html(_killed())
    chart = svgs(page)[0]
    vb = chart.get("viewBox")
    w = float(vb.split()[2]) if vb else float(chart.get("width") or 0)
    ends = [t for t in chart.iter("{http://www.w3.org/2000/svg}text") if (t.text or "").startswith("end")]
    assert ends
    assert all(text_box(t)[2] <= w for t in ends)


# ------------------------------------------------------------------ the run's memory on its own scale


def container_run() -> RunRecord:
    """The run's own RSS (up to 289 MiB) inside a container whose cgroup holds 3 GiB (limit 24 GiB)."""
    rss = [100 * MiB + i * 21 * MiB for i in range(10)]  # 100 → 289 MiB
    rec = record(ExitInfo("exited", code=0), rss=rss)
    rec.samples = [s.__class__(s.t, s.rss, s.procs, 3 * GiB, 0, 0, s.gpus) for s in rec.samples]
    rec.verdict = verdict_of(rec).to_json()
    return rec


def _polyline_heights(svg: ET.Element) -> list[float]:
    """The vertical extent of each data line, as a fraction of the plot frame's height."""
    frame = next(r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "frame")
    fh = float(frame.get("height", "1"))
    out = []
    for p in svg.iter("{http://www.w3.org/2000/svg}polyline"):
        ys = [float(xy.split(",")[1]) for xy in (p.get("points") or "").split()]
        out.append((max(ys) - min(ys)) / fh)
    return out


def test_the_runs_own_memory_is_not_flattened_by_the_container() -> None:
    page = render_html(container_run())
    host = svgs(page)[0]
    heights = _polyline_heights(host)
    assert heights[0] >= 0.5, heights  # the run's own RSS line spans at least half the chart
    texts = " ".join(t.text or "" for t in host.iter("{http://www.w3.org/2000/svg}text"))
    assert "3.0 GiB" in texts  # the container's memory, as context with its value in text
    assert "24.0 GiB" in texts  # and its limit
    for p in host.iter("{http://www.w3.org/2000/svg}polyline"):
        ys = [float(xy.split(",")[1]) for xy in (p.get("points") or "").split()]
        assert min(ys) >= 0  # a line off the scale is clipped to the frame, not drawn outside it


def test_close_limits_stay_on_the_scale() -> None:
    """An OOM in a 512 MiB cgroup: the limit is the story, so it is drawn as a line on the same scale."""
    rss = [i * 50 * MiB for i in range(1, 11)]
    cg = {"version": 2, "path": "/job", "limit": 512 * MiB, "oom_kill_delta": 1}
    rec = record(ExitInfo("exited", code=0), rss=rss, cgroup=cg)
    page = render_html(rec)
    host = svgs(page)[0]
    assert any(ln.get("class") == "limit" for ln in host.iter("{http://www.w3.org/2000/svg}line"))
