"""`compat fleet` on Ray: one doctor task pinned to every alive node, bounded by one timeout.

Ray is an optional extra (`pip install 'compat[ray]'`), imported only inside collect(). Each task is pinned with
NodeAffinitySchedulingStrategy(node_id, soft=False) and asks for no CPU (a busy node still answers) and, with
--smoke, for all of the node's GPUs (the smoke job uses them; nothing else is scheduled there meanwhile). The
driver waits once for all of them (ray.wait with the timeout); tasks still out are cancelled with
ray.cancel(force=True) and their nodes reported as unreachable.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from compat.errors import InputError
from compat.fleet.report import NodeInput
from compat.schema_version import SCHEMA_VERSION

DEFAULT_TIMEOUT = 180.0
CONNECT_TIMEOUT = 30.0
"""Seconds to wait for ray.init at most (less when --timeout is shorter)."""
INSTALL_HINT = "pip install 'compat[ray]'"


def import_ray() -> Any:
    # Ray's C++ core logs connection retries as warnings on stderr; compat's one-line error says it instead.
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")
    try:
        import ray
    except ImportError as exc:
        raise InputError(
            f"compat fleet needs Ray, which is not installed ({exc.msg}): {INSTALL_HINT}"
        ) from None
    return ray


def doctor_timeout(timeout: float) -> float:
    """The doctor's own deadline on the node: short of the driver's, so a hung doctor is reported by its node
    (a "failed" node with the reason) rather than as an unreachable one."""
    return max(1.0, timeout - min(10.0, max(1.0, 0.15 * timeout)))


def alive_nodes(nodes: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """ray.nodes() -> the alive ones, one entry per node id, in a stable order."""
    seen: dict[str, Mapping[str, Any]] = {}
    for n in nodes:
        nid = n.get("NodeID")
        if n.get("Alive") and isinstance(nid, str) and nid not in seen:
            seen[nid] = n
    return sorted(seen.values(), key=lambda n: (str(n.get("NodeManagerHostname")), str(n.get("NodeID"))))


def node_names(nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """node id -> a unique display name: the host name, with the node id's first 8 digits where hosts repeat."""
    hosts = Counter(str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress") or "node") for n in nodes)
    out = {}
    for n in nodes:
        host = str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress") or "node")
        nid = str(n["NodeID"])
        out[nid] = host if hosts[host] == 1 else f"{host}:{nid[:8]}"
    return out


def node_gpus(node: Mapping[str, Any]) -> int:
    res: Mapping[str, Any] = node["Resources"] if isinstance(node.get("Resources"), Mapping) else {}
    gpus = res.get("GPU", 0)
    return int(gpus) if isinstance(gpus, (int, float)) and math.isfinite(gpus) and gpus > 0 else 0


def task_options(node: Mapping[str, Any], smoke: bool, strategy_cls: Any) -> dict[str, Any]:
    """The .options() of the task pinned to `node`."""
    return {
        "scheduling_strategy": strategy_cls(node_id=str(node["NodeID"]), soft=False),
        "num_cpus": 0,
        "num_gpus": node_gpus(node) if smoke else 0,
        "max_retries": 0,
    }


def answer_to_input(name: str, node: Mapping[str, Any], answer: Any, timeout: float) -> NodeInput:
    """What a task returned -> the node's entry."""
    nid = str(node.get("NodeID"))
    meta: dict[str, Any] = {"node_id": nid, "address": node.get("NodeManagerAddress")}
    source = f"ray:{nid}"
    if not isinstance(answer, Mapping):
        return NodeInput(
            name, source, "failed", reason=f"the task returned {type(answer).__name__}", meta=meta
        )
    meta["doctor_seconds"] = answer.get("seconds")
    if answer.get("node_id") and answer.get("node_id") != nid:
        return NodeInput(
            name,
            source,
            "failed",
            meta=meta,
            reason=f"the task ran on node {answer.get('node_id')} instead of {nid}",
        )
    if answer.get("start_error"):
        return NodeInput(
            name,
            source,
            "failed",
            meta=meta,
            reason=f"could not start the doctor with {answer.get('python')}: {answer['start_error']}",
        )
    if answer.get("timed_out"):
        return NodeInput(
            name,
            source,
            "failed",
            meta=meta,
            reason=f"compat doctor did not finish within {doctor_timeout(timeout):g} s on this node",
        )
    stdout = str(answer.get("stdout") or "")
    stderr = str(answer.get("stderr") or "").strip()
    meta["doctor_exit_code"] = answer.get("exit_code")
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    if (
        isinstance(doc, dict)
        and doc.get("schema_version") == SCHEMA_VERSION
        and isinstance(doc.get("facts"), dict)
    ):
        return NodeInput(name, source, "reported", doc=doc, meta=meta)
    last = stderr.splitlines()[-1] if stderr else ""
    if "No module named compat" in stderr:
        why = f"compat is not installed for {answer.get('python')} on this node (pip install compat)"
    elif last:
        why = f"compat doctor exited {answer.get('exit_code')}: {last[:300]}"
    else:
        why = f"compat doctor exited {answer.get('exit_code')} without a JSON report"
    return NodeInput(name, source, "failed", reason=why, meta=meta)


def _connect(ray: Any, address: str, wait: float) -> bool:
    """Connect unless already connected; True when this call connected (and so must disconnect).

    ray.init retries an address that accepts connections but never answers as a Ray cluster for minutes (GCS
    retries), so it runs in a daemon thread and compat gives up after `wait` seconds; the process can still exit.
    """
    if ray.is_initialized():
        return False
    box: dict[str, BaseException] = {}

    def init() -> None:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc

    t = threading.Thread(target=init, name="compat-ray-connect", daemon=True)
    t.start()
    t.join(wait)
    if t.is_alive():
        raise InputError(f"cannot connect to the Ray cluster at {address!r}: no answer within {wait:g} s")
    exc = box.get("error")
    if isinstance(exc, (ConnectionError, RuntimeError, ValueError, TimeoutError)):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot connect to the Ray cluster at {address!r}: {first}") from None
    if exc is not None:
        raise exc
    return True


def collect(address: Optional[str], *, smoke: bool, timeout: float) -> tuple[list[NodeInput], dict[str, Any]]:
    """Run the doctor on every alive node of the cluster: (node inputs, extra keys for the fleet report)."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from compat.fleet import _task

    addr = address or os.environ.get("RAY_ADDRESS") or "auto"
    connected = _connect(ray, addr, min(timeout, CONNECT_TIMEOUT))
    try:
        nodes = alive_nodes(ray.nodes())
        if not nodes:
            raise InputError(f"the Ray cluster at {addr!r} has no alive node")
        # Ship the task by value: a node needs compat's command line, not this module importable in Ray.
        with contextlib.suppress(AttributeError, ValueError):
            ray.cloudpickle.register_pickle_by_value(_task)
        remote = ray.remote(_task.doctor_on_node)
        names = node_names(nodes)
        refs = []
        for n in nodes:
            opts = task_options(n, smoke, NodeAffinitySchedulingStrategy)
            refs.append(remote.options(**opts).remote(str(n["NodeID"]), smoke, doctor_timeout(timeout)))
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout)
        done = set(ready)
        inputs: list[NodeInput] = []
        for n, ref in zip(nodes, refs, strict=False):
            nid = str(n["NodeID"])
            name = names[nid]
            meta = {"node_id": nid, "address": n.get("NodeManagerAddress")}
            if ref not in done:
                with contextlib.suppress(Exception):  # the node may be gone already: unreachable either way
                    ray.cancel(ref, force=True)
                why = f"no answer within {timeout:g} s (task cancelled)"
                if smoke and node_gpus(n):
                    why += f"; the task asked for the node's {node_gpus(n)} GPU(s), which may be busy"
                inputs.append(NodeInput(name, f"ray:{nid}", "unreachable", reason=why, meta=meta))
                continue
            try:
                answer = ray.get(ref, timeout=max(1.0, timeout))
            except Exception as exc:  # a lost worker or node, a task error: reported per node, never raised
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:300]
                status = (
                    "unreachable"
                    if type(exc).__name__
                    in (
                        "NodeDiedError",
                        "WorkerCrashedError",
                        "ObjectLostError",
                        "OwnerDiedError",
                        "GetTimeoutError",
                        "TaskUnschedulableError",
                    )
                    else "failed"
                )
                inputs.append(
                    NodeInput(name, f"ray:{nid}", status, reason=f"{type(exc).__name__}: {first}", meta=meta)
                )
                continue
            inputs.append(answer_to_input(name, n, answer, timeout))
        extra = {"ray": {"address": addr, "nodes_alive": len(nodes), "timeout": timeout, "smoke": smoke}}
        return inputs, extra
    finally:
        if connected:
            ray.shutdown()


__all__ = [
    "DEFAULT_TIMEOUT",
    "alive_nodes",
    "answer_to_input",
    "collect",
    "doctor_timeout",
    "import_ray",
    "node_names",
    "task_options",
]
