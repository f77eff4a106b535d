"""Issue 32, item 2: a corpus of secrets planted in every position a report carries text; after --redact the
secret's bytes appear in no output format (JSON, Markdown, HTML, the fleet's text)."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from typing import Any

import pytest

from compat.fleet.report import NodeInput, build_fleet, render_text
from compat.record.document import ExitInfo, RunRecord
from compat.record.html import render_html
from compat.redact import Redactor
from compat.report_markdown import bundle_markdown, doctor_markdown
from tests.record.helpers import record

HOST = "gpu-node-17.cluster.example.org"
R = Redactor(hosts=[HOST, "gpu-node-17"], users=["alice"])

# (secret, the text it is planted in): the secret must go, wherever the text is.
CORPUS: list[tuple[str, str]] = [
    ("hf_x", "HF_TOKEN=hf_x"),
    ("hunter2", "--password=hunter2"),
    ("hunter3", "--password hunter3"),
    ("hunter4", "password=hunter4"),
    ("hunter5", 'db = {"password": "hunter5"}'),
    ("s3cr3tvalue", "secret=s3cr3tvalue"),
    ("tok-123456", "token=tok-123456"),
    ("apikey-9876", "api_key=apikey-9876"),
    ("WANDB0123456789abcdef", "export WANDB_API_KEY=WANDB0123456789abcdef"),
    ("secretpw", "git clone https://bob:secretpw@github.com/org/repo.git"),
    ("Pa55w0rd", "connecting to postgres://admin:Pa55w0rd@db.internal:5432/app"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "loaded hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 from cache"),
    ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "remote ghp_0123456789abcdefghijABCDEFGHIJ012345"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "token gho_0123456789abcdefghijABCDEFGHIJ012345"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "GH github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ("AKIAIOSFODNN7EXAMPLE", "key id AKIAIOSFODNN7EXAMPLE used"),
    ("ASIAIOSFODNN7EXAMPLE", "session ASIAIOSFODNN7EXAMPLE"),
    (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE2",
        "AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE2",
    ),
    ("sk-proj-abcdefghijklmnopqrstuvwxyz0123", "OpenAI key sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
    ("xoxb-123456789012-abcdefghijklmnop", "slack xoxb-123456789012-abcdefghijklmnop"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJlX2hlcmU",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2lnbmF0dXJlX2hlcmU",
    ),
    ("bearer-0123456789abc", "curl -H 'Authorization: Bearer bearer-0123456789abc' https://api.example.com"),
    ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"),
    ("10.23.45.67", "MASTER_ADDR=10.23.45.67 rank 0"),
    ("2001:db8:85a3::8a2e:370:7334", "peer [2001:db8:85a3::8a2e:370:7334]:29500 closed"),
    ("fe80::1ff:fe23:4567:890a", "link fe80::1ff:fe23:4567:890a%eth0"),
    ("1652222014738", "board serial=1652222014738"),
    ("1324520031734", "    Serial Number                         : 1324520031734"),
    ("5d2c2c6d-1a2b-4c3d-8e9f", "on GPU-5d2c2c6d-1a2b-4c3d-8e9f-0123456789ab"),
    ("gpu-node-17", f"alice@{HOST}:~$ nvidia-smi"),
    ("alice", "/home/alice/venv/bin/python train.py"),
    ("alice.smith@example.com", "contact alice.smith@example.com"),
    ("x9secret", r"payload {\"password\": \"x9secret\"} (JSON escaped in a log line)"),
    (
        "fe80::a00:27ff:fe4e:66a1",
        "NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0> [1]ib0:fe80::a00:27ff:fe4e:66a1%ib0",
    ),
    ("abc123sid", "Set-Cookie: sid=abc123sid; Path=/"),
    ("FQoGZXIvYXdzEJr", "X-Amz-Security-Token: FQoGZXIvYXdzEJr"),
    ("b3BlbnNzaC1rZXktdjEAAAAA", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"),
]


def _doctor(text: str) -> dict[str, Any]:
    """A doctor document with the text as a value, as a key and in a finding."""
    return {
        "schema_version": 1,
        "verdict": "error",
        "host": HOST,
        "facts": {"note": {"raw": text, "source": text, "value": text}},
        "findings": [
            {"id": "x.y", "severity": "error", "title": "t", "message": text, "fixes": [{"text": text}]}
        ],
        "probes": {text: {"error": text}},
    }


def _record(text: str) -> RunRecord:
    rec = record(ExitInfo("exited", code=1), output=["step 1 loss 0.5", *text.split("\n"), "exit"])
    rec.command = ["sh", "-c", text]
    rec.processes = {4242: text}
    rec.notes = [text]
    return rec


def _json_outputs(text: str) -> list[str]:
    return [
        json.dumps(R.document(_doctor(text))),
        json.dumps(R.document(_record(text).to_json())),
    ]


def _markdown(text: str) -> list[str]:
    explain = {"diagnoses": [{"id": "x", "title": text, "evidence": [text]}]}
    run = _record(text).to_json()
    return [
        doctor_markdown(_doctor(text), redact=True),
        bundle_markdown(_doctor(text), run=run, explain=explain, log_name=text, redact=True),
    ]


def _html(text: str) -> list[str]:
    return [render_html(RunRecord.from_json(R.document(_record(text).to_json())))]


def _fleet(text: str) -> list[str]:
    nodes = [
        NodeInput(name=HOST, source=f"{HOST}.json", doc=_doctor(text)),
        NodeInput(name="worker-b", source="ray:1", status="failed", reason=text),
    ]
    doc = R.document(build_fleet(nodes, source="files"))
    return [json.dumps(doc), render_text(doc)]


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "json": _json_outputs,
    "markdown": _markdown,
    "html": _html,
    "fleet": _fleet,
}


@pytest.fixture(autouse=True)
def _fixed_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor_markdown and bundle_markdown build their own Redactor: this machine's names are the test's."""
    monkeypatch.setattr("compat.redact._names", lambda: ([HOST, "gpu-node-17"], ["alice"]))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize(("secret", "text"), CORPUS, ids=[c[0][:24] for c in CORPUS])
def test_secret_is_gone_from_every_output(secret: str, text: str, fmt: str) -> None:
    for out in FORMATS[fmt](text):
        assert secret not in out, out


@pytest.mark.parametrize(("secret", "text"), CORPUS, ids=[c[0][:24] for c in CORPUS])
def test_redaction_is_idempotent(secret: str, text: str) -> None:
    once = R.text(text)
    assert secret not in once
    assert R.text(once) == once


@pytest.mark.parametrize(
    "argv",
    [
        ["train.py", "--password", "hunter2"],
        ["train.py", "--hf-token", "hunter2"],
        ["curl", "-H", "Authorization:", "Bearer", "hunter2"],
        ["env", "AWS_SECRET_ACCESS_KEY", "hunter2"],
    ],
)
def test_a_flag_and_its_value_in_separate_arguments(argv: list[str]) -> None:
    out = R.document({"command": argv})["command"]
    assert "hunter2" not in out and len(out) == len(argv)


def test_fleet_node_names_go_wherever_they_appear() -> None:
    nodes = [
        NodeInput(name="trn-a7", source="trn-a7.json", doc=_doctor("ok")),
        NodeInput(name="trn-b9", source="ray:2", status="unreachable", reason="trn-b9 did not answer"),
    ]
    doc = Redactor(hosts=[], users=[]).document(build_fleet(nodes, source="files"))
    for out in (json.dumps(doc), render_text(doc)):
        assert "trn-a7" not in out and "trn-b9" not in out


KEPT = [
    "driver 535.183.01 CUDA 12.4.1 cuDNN 9.1.0.70 torch 2.5.1+cu124",
    "nvidia-cudnn-cu12>=9.3.0.75; tokenizers==0.15.2; author=bob",
    "at 0x00007f3a2b4c5d6e in libcuda.so.1 (PCI 00000000:3B:00.0)",
    "c10::Error at::cuda::getCurrentCUDAStream 12:34:56 ::1 127.0.0.1",
    "NVIDIA A100-SXM4-80GB, 81920 MiB, error: invalid token: unexpected EOF",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_a_maintainer_needs_stays(text: str) -> None:
    assert R.text(text) == text


def test_a_hostile_megabyte_line_is_one_pass() -> None:
    """Every pattern is linear: a 1 MB line of each pattern's prefix repeated finishes in one pass (a quadratic
    pattern would take hours on it: the suite's timeout fails it)."""
    units = (
        "password=",
        "a://",
        "eyJa.",
        "::",
        "1.",
        "a@",
        '"token":"',
        "aws ",
        "-----BEGIN PRIVATE KEY-----",
    )
    line = "".join(u * (1_000_000 // len(units) // len(u)) for u in units)
    assert len(line) > 990_000
    out = R.text(line)
    assert R.text(out) == out and out.endswith("<private-key>")
    assert R.text("password=" * 100_000 + "x").endswith("<redacted>")


def test_exit_signal_record_still_renders() -> None:
    rec = record(ExitInfo("signaled", signal=int(signal.SIGKILL)), output=["HF_TOKEN=hf_x"])
    assert "hf_x" not in render_html(RunRecord.from_json(R.document(rec.to_json())))


def test_a_document_nested_deeper_than_any_report_is_cut_not_crashed() -> None:
    doc: Any = "HF_TOKEN=hf_x"
    for i in range(900):  # json.loads reads this deep; the walk must not raise RecursionError
        doc = [doc] if i % 2 else {"k": doc}
    out = json.dumps(R.document(json.loads(json.dumps(doc))))
    assert "hf_x" not in out and "<redacted>" in out
