"""Secrets end to end (issue 32, item 2): a real `compat run` records them, `compat report --redact` and
`compat doctor --redact` (every format) print none of them."""

from __future__ import annotations

import shlex
import sys

from tests.chaos.harness import assert_contract, run

CAP_S = 150  # a run and a report (which probes the machine) on a loaded 2-core runner

SECRETS = {
    "hf_x": "echo HF_TOKEN=hf_x",
    "secretpw": "echo cloning https://bob:secretpw@github.com/org/repo.git",
    "Pa55w0rd": "echo connect postgres://admin:Pa55w0rd@db.internal:5432/app",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "echo aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "2001:db8:85a3::8a2e:370:7334": "echo peer 2001:db8:85a3::8a2e:370:7334 closed",
    "1652222014738": "echo board serial=1652222014738",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345": "echo ghp_0123456789abcdefghijABCDEFGHIJ012345",
}


def _script(compat_args: str, redact_cmds: list[str]) -> list[str]:
    py = shlex.quote(sys.executable)
    lines = [f"{py} -m compat {compat_args} > train.log 2>&1; echo run-exit=$?"]
    lines += [f"echo '=== {c}'; {py} -m compat {c} 2>&1; echo exit=$?" for c in redact_cmds]
    return ["sh", "-c", "\n".join([*lines, "true"])]


def _exits(text: str) -> list[str]:
    """Each redacting command's exit status: 0 or 1 (a doctor with findings), never a crash."""
    return [ln for ln in text.splitlines() if ln.startswith("exit=")]


def test_the_issue_repro_leaks_nothing() -> None:
    # On main: the report keeps hf_x and hunter2 (`compat report train.log --redact`).
    r = run(
        _script(
            "run -- sh -c 'echo HF_TOKEN=hf_x; exit 1' --password=hunter2",
            ["report train.log --redact --no-smoke"],
        ),
        python=False,
        cap_s=CAP_S,
    )
    assert_contract(r, codes=(0,), cap_s=CAP_S)
    assert "run-exit=1" in r.text and "### Last recorded run" in r.text, r.text[-2000:]
    assert _exits(r.text) == ["exit=0"] and "Traceback" not in r.text, r.text[-2000:]
    assert "hf_x" not in r.text and "hunter2" not in r.text, r.text[-3000:]


def test_every_secret_in_the_output_tail_and_the_command_line() -> None:
    body = "; ".join(SECRETS.values()) + "; exit 3"
    r = run(
        _script(
            f"run -- sh -c {shlex.quote(body)} --password hunter2 --token=tok123456",
            [
                "report train.log --redact --no-smoke",
                "doctor --redact --no-smoke --format markdown",
                "doctor --redact --no-smoke --format json",
                "doctor --redact --no-smoke --format text",
            ],
        ),
        python=False,
        cap_s=2 * CAP_S,
    )
    assert_contract(r, codes=(0,), cap_s=2 * CAP_S)
    assert "run-exit=3" in r.text and "Traceback" not in r.text, r.text[-2000:]
    assert len(_exits(r.text)) == 4 and set(_exits(r.text)) <= {"exit=0", "exit=1"}, r.text[-2000:]
    for secret in [*SECRETS, "hunter2", "tok123456"]:
        assert secret not in r.text, (secret, r.text[-3000:])
