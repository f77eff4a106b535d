"""`compat fleet` against a real local Ray cluster of four nodes on this machine (ray.cluster_utils.Cluster).

Every node gets the same stack through COMPAT_OVERRIDE_* in its environment (the raylet's env_vars, which its
workers inherit) except one, whose driver is 470.82.01, and one whose task hangs (COMPAT_FLEET_TEST_HANG=1, a
test-only hook of compat.fleet._task). The fleet must find exactly that drift, report the hung node as unreachable
within the timeout, and run exactly one doctor per node, on that node.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0  # the doctors take about 8 s here (cold cache, 3 at once on 2 cores); they get 25.5 s
# The same stack everywhere, so the only difference between nodes is the one the test makes.
STACK = {
    "COMPAT_OVERRIDE_DRIVER": "535.104.05",
    "COMPAT_OVERRIDE_GPU": "NVIDIA A100-SXM4-80GB",
    "COMPAT_OVERRIDE_CUDA": "12.4",
    "COMPAT_OVERRIDE_CUDNN": "9.1.0",
    "COMPAT_OVERRIDE_TORCH": "2.4.1",
    "COMPAT_OVERRIDE_TENSORFLOW": "",
    "PYTHONPATH": str(ROOT),
}

# find_spec, not an import: Ray is imported by the fixture only, so collecting this file changes no other test.
# CI installs compat[ray]: a missing Ray must fail there, not skip.
if importlib.util.find_spec("ray") is None and not os.environ.get("CI"):
    pytest.skip("Ray is an optional extra: pip install 'compat[ray]'", allow_module_level=True)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


class Fleet:
    def __init__(self, address: str, nodes: dict[str, str]) -> None:
        self.address = address
        self.nodes = nodes
        """node id -> role: head, plain, old-driver, hang."""
        self.code: int = -1
        self.doc: dict[str, Any] = {}
        self.seconds = 0.0
        self.stderr = ""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    from ray.cluster_utils import Cluster

    cache = tmp_path_factory.mktemp("compat-cache")
    common: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
    base = {**STACK, "COMPAT_CACHE_DIR": str(cache)}
    cluster = Cluster(shutdown_at_exit=True)
    try:
        roles = {}
        head = cluster.add_node(**common, include_dashboard=False, env_vars=base)
        roles[head.node_id] = "head"
        roles[cluster.add_node(**common, env_vars=base).node_id] = "plain"
        roles[
            cluster.add_node(**common, env_vars={**base, "COMPAT_OVERRIDE_DRIVER": "470.82.01"}).node_id
        ] = "old-driver"
        roles[cluster.add_node(**common, env_vars={**base, "COMPAT_FLEET_TEST_HANG": "1"}).node_id] = "hang"
        cluster.wait_for_nodes()
        f = Fleet(cluster.address, roles)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "RAY_ADDRESS"))}
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "compat",
                "fleet",
                "--address",
                cluster.address,
                "--json",
                "--timeout",
                str(TIMEOUT),
            ],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            timeout=TIMEOUT + 120,
        )
        f.seconds = time.monotonic() - t0
        f.code, f.stderr = proc.returncode, proc.stderr
        assert proc.stdout.strip(), f"no JSON on stdout; stderr: {proc.stderr[-2000:]}"
        f.doc = json.loads(proc.stdout)
        yield f
    finally:
        cluster.shutdown()


def _by_role(f: Fleet) -> dict[str, dict[str, Any]]:
    return {f.nodes[n["node_id"]]: n for n in f.doc["nodes"]}


def test_one_doctor_per_node_on_that_node(fleet: Fleet) -> None:
    ids = [n["node_id"] for n in fleet.doc["nodes"]]
    assert sorted(ids) == sorted(fleet.nodes) and len(set(ids)) == len(ids) == 4
    for n in fleet.doc["nodes"]:
        assert n["source"] == f"ray:{n['node_id']}"
    reported = [n for n in fleet.doc["nodes"] if n["status"] == "reported"]
    assert {fleet.nodes[n["node_id"]] for n in reported} == {"head", "plain", "old-driver"}, fleet.doc[
        "nodes"
    ]
    # Each doctor saw its own node's environment: the override of the node it was pinned to.
    assert {fleet.nodes[n["node_id"]]: n["fingerprint"]["driver"] for n in reported} == {
        "head": "535.104.05",
        "plain": "535.104.05",
        "old-driver": "470.82.01",
    }


def test_exactly_the_planted_drift(fleet: Fleet) -> None:
    (d,) = fleet.doc["drift"]
    old = _by_role(fleet)["old-driver"]["name"]
    assert d["fact"] == "driver" and d["majority"] == "535.104.05" and d["nodes"] == [old]
    assert [g["size"] for g in fleet.doc["groups"]] == [2, 1]
    assert fleet.doc["groups"][0]["fingerprint"]["gpu"] == "1x NVIDIA A100-SXM4-80GB"


def test_the_hung_node_is_unreachable_within_the_timeout(fleet: Fleet) -> None:
    hung = _by_role(fleet)["hang"]
    assert hung["status"] == "unreachable" and f"no answer within {TIMEOUT:g} s" in hung["reason"]
    assert fleet.doc["unreachable"] == [{"node": hung["name"], "reason": hung["reason"]}]
    # Never waited on forever: the timeout, plus connecting and shutting down.
    assert TIMEOUT <= fleet.seconds < TIMEOUT + 60


def test_verdict_and_exit_code(fleet: Fleet) -> None:
    assert fleet.doc["schema_version"] == 1 and fleet.doc["source"] == "ray"
    assert fleet.doc["verdict"] == "error" and fleet.code == 1, fleet.stderr[-2000:]
    assert fleet.doc["ray"]["nodes_alive"] == 4
