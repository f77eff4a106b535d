"""report.html: self-contained, every run string escaped; checked in a real headless browser (Debian chromium)."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from compat.record.document import ExitInfo
from compat.record.html import render_html
from compat.record.verdict import verdict_of
from tests.record.helpers import GiB, MiB, record

EVIL = [
    "<script>document.title='PWNED-script'</script>",
    "<img src=x onerror=\"document.title='PWNED-img'\">",
    "</pre><script>document.title='PWNED-pre'</script>",
    "<svg onload=\"document.title='PWNED-svg'\"></svg>",
    '<iframe src="https://example.com/"></iframe>',
]


def evil_record():  # type: ignore[no-untyped-def]
    used = [20 * GiB + i * 600 * MiB for i in range(100)]
    th: list[tuple[str, ...]] = [("sw_thermal",) if 40 <= i < 80 else () for i in range(100)]
    rss = [2 * GiB + i * 80 * MiB for i in range(100)]
    ev = [
        {
            "kind": "xid",
            "pid": 4242,
            "xid": 79,
            "t": 62.0,
            "text": "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=<script>document.title='PWNED-k'</script>",
        }
    ]
    rec = record(
        ExitInfo("signaled", signal=int(signal.SIGKILL)),
        rss=rss,
        gpu_used=used,
        throttle=th,
        kernel_events=ev,
        output=["epoch 1 step 10 loss 0.53", *EVIL],
    )
    rec.processes = {4242: "python<script>document.title='PWNED-p'</script>", 4243: "pt_data_worker"}
    rec.gpu["gpus"][0]["name"] = "\"><script>document.title='PWNED-gpu'</script>"
    rec.command = ["python", "train.py", "--tag", "<b onmouseover=alert(1)>x</b>"]
    rec.notes = ["<script>document.title='PWNED-note'</script>"]
    rec.verdict = verdict_of(rec).to_json()
    return rec


def test_every_run_string_is_escaped_and_nothing_is_loaded() -> None:
    page = render_html(evil_record())
    assert "<script" not in page.lower()
    assert 'onerror="' not in page and "<iframe" not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&#x27;PWNED-script&#x27;&lt;/script&gt;" in page
    # nothing from the network: no src/href to anywhere (the SVG namespace is an identifier, not a load)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count("<svg") == 4  # host memory, GPU memory, temperature, power


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-extensions",
            f"--user-data-dir={profile}",  # the test's own folder: nothing left in /tmp
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_report_in_a_real_browser_runs_no_script(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(evil_record()), encoding="utf-8")
    r = _chromium(tmp_path / "profile", "--dump-dom", page.as_uri())
    dom = r.stdout
    assert "<title>compat run report</title>" in dom, r.stderr[-2000:]
    assert "PWNED" not in re.search(r"<title>(.*?)</title>", dom, re.S).group(1)  # type: ignore[union-attr]
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;document.title='PWNED-script'&lt;/script&gt;" in dom  # shown as text
    assert dom.count("<svg") == 4 and "<polyline" in dom
    shot = tmp_path / "report.png"
    _chromium(
        tmp_path / "profile",
        "--screenshot=" + str(shot),
        "--window-size=1000,2600",
        "--hide-scrollbars",
        page.as_uri(),
    )
    assert shot.exists() and shot.stat().st_size > 10_000


# Issue 31: what a reader sees, measured by the browser. The report runs no script (its CSP forbids it), so the
# test measures a copy without the CSP, with a script of its own that writes what it found into the page.
MEASURE = """<script>
const bad = [];
for (const svg of document.querySelectorAll("svg")) {
  const [x0, y0, w, h] = svg.getAttribute("viewBox").split(" ").map(Number);
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBBox();
    if (b.x < x0 - 0.5 || b.y < y0 - 0.5 || b.x + b.width > x0 + w + 0.5 || b.y + b.height > y0 + h + 0.5)
      bad.push(t.textContent + " @ " + [b.x, b.y, b.width, b.height].map(Math.round).join(","));
  }
}
const junk = document.body.innerText.match(/\\b(None|null|nan|NaN|undefined)\\b/g) || [];
const out = document.createElement("pre");
out.id = "measured";
out.textContent = "MEASURED " + JSON.stringify({svgs: document.querySelectorAll("svg").length, bad, junk});
document.body.appendChild(out);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_report_in_a_real_browser_shows_no_none_and_keeps_labels_inside(tmp_path: Path) -> None:
    import json

    from tests.record.test_run_fixes import _killed, container_run, gpu_run, illegal_access_run

    for name, rec in (
        ("illegal", illegal_access_run()),
        ("container", container_run()),
        ("killed", _killed()),
        ("gpus", gpu_run(8)),
        ("evil", evil_record()),
    ):
        page = render_html(rec)
        if name == "illegal":  # as shipped: the CSP stays, nothing runs; the visible text has no None
            shipped = tmp_path / f"{name}.html"
            shipped.write_text(page, encoding="utf-8")
            dom = _chromium(tmp_path / "profile", "--dump-dom", shipped.as_uri()).stdout
            assert "<svg" in dom and "$ CUDA_LAUNCH_BLOCKING=1 python train.py" in dom, name
            text = re.sub(r"<[^>]+>", " ", dom.split("<body>", 1)[1])
            assert not re.findall(r"\b(None|null|nan|NaN|undefined)\b", text), name
        # measured: every <text> box (as the browser lays it out) inside its chart's viewBox
        probe = tmp_path / f"{name}-measure.html"
        probe.write_text(
            re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page).replace(
                "</body>", MEASURE + "</body>"
            ),
            encoding="utf-8",
        )
        r = _chromium(tmp_path / "profile", "--dump-dom", probe.as_uri())
        m = re.search(r"MEASURED (\{.*?\})</pre>", r.stdout)
        assert m, (name, r.stderr[-2000:])
        got = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        assert got["svgs"] >= 1 and got["bad"] == [] and got["junk"] == [], (name, got)
