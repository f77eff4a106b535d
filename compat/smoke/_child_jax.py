"""Smoke-training child for JAX: a tiny CNN trained for a few jitted steps, run by compat in its own process.

Usage: python _child_jax.py --out RESULT.json [--device auto|cuda|cpu] [--steps N] [--batch-size N] [--amp] ...
The JSON result goes to --out (never stdout), progress markers to stderr. Standard library plus JAX and numpy
only: no compat import (the interpreter under test may not have compat installed), no flax/optax.

The step is `jax.jit(value_and_grad(loss))` over a network of two `jax.lax.conv_general_dilated` layers and a
dense head, with a hand-written SGD-with-momentum update; the loss must fall. On a GPU request it asserts that
JAX really chose the GPU: when its CUDA plugin fails to start, JAX falls back to the CPU with only a warning
("An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to
cpu."), so a run that trained "fine" on the CPU would otherwise pass.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
import time
from typing import Any, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_common() -> Any:
    spec = importlib.util.spec_from_file_location(
        "_compat_smoke_common", os.path.join(_HERE, "_child_common.py")
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


common = _load_common()
common.drop_own_folder(__file__)

N_CLASSES = 10
IMAGE = 32


def make_data(np: Any, batch: int, seed: int) -> tuple[Any, Any]:
    """A learnable synthetic task: each class is a fixed random image, each sample that image plus noise (NHWC)."""
    rng = np.random.default_rng(seed)
    protos = rng.standard_normal((N_CLASSES, IMAGE, IMAGE, 3)).astype("float32")
    y = rng.integers(0, N_CLASSES, size=(batch,)).astype("int32")
    x = (protos[y] + 0.5 * rng.standard_normal((batch, IMAGE, IMAGE, 3))).astype("float32")
    return x, y


def init_params(jax: Any, seed: int) -> dict[str, Any]:
    jnp = jax.numpy
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)

    def he(key: Any, shape: tuple[int, ...], fan_in: int) -> Any:
        return jax.random.normal(key, shape, dtype=jnp.float32) * (2.0 / fan_in) ** 0.5

    return {
        "c1": he(k1, (3, 3, 3, 16), 3 * 9),  # HWIO
        "c2": he(k2, (3, 3, 16, 32), 16 * 9),
        "w": he(k3, (32, N_CLASSES), 32),
        "b": jnp.zeros((N_CLASSES,), jnp.float32),
    }


def forward(jax: Any, params: dict[str, Any], x: Any, dtype: Any) -> Any:
    lax = jax.lax
    jnp = jax.numpy
    dn = ("NHWC", "HWIO", "NHWC")
    h = lax.conv_general_dilated(
        x.astype(dtype), params["c1"].astype(dtype), (1, 1), "SAME", dimension_numbers=dn
    )
    h = jax.nn.relu(h)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, params["c2"].astype(dtype), (1, 1), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h)
    h = jnp.mean(h, axis=(1, 2)).astype(jnp.float32)  # logits in float32 under mixed precision
    return h @ params["w"] + params["b"]


def make_step(jax: Any, dtype: Any, lr: float = 0.05, momentum: float = 0.9) -> Any:
    jnp = jax.numpy

    def loss_fn(params: dict[str, Any], x: Any, y: Any) -> Any:
        logits = forward(jax, params, x, dtype)
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit  # type: ignore[untyped-decorator,unused-ignore]
    def step(params: dict[str, Any], velocity: dict[str, Any], x: Any, y: Any) -> tuple[Any, Any, Any]:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
        params = jax.tree_util.tree_map(lambda p, v: p - lr * v, params, velocity)
        return params, velocity, loss

    return step


def peak_gpu_bytes(device: Any) -> Optional[int]:
    try:
        stats = device.memory_stats() or {}
        peak = stats.get("peak_bytes_in_use")
        return int(peak) if peak is not None else None
    except Exception:
        return None


def train(c: Any) -> None:
    args = c.args
    r = c.result
    c.stage("import")
    with c.timer("import"):
        if args.device == "cpu":
            os.environ["JAX_PLATFORMS"] = "cpu"
        jax = importlib.import_module("jax")
        np = importlib.import_module("numpy")
    r["framework_version"] = str(jax.__version__)
    with contextlib.suppress(Exception):
        jaxlib = importlib.import_module("jaxlib")
        r["jaxlib_version"] = str(getattr(jaxlib, "__version__", "") or "") or None

    c.stage("device")
    with c.timer("device"):
        backend = str(jax.default_backend())
        r["backend"] = backend
        if args.device == "cuda" and backend != "gpu":
            raise RuntimeError(
                f"--device cuda: JAX {jax.__version__} chose the {backend} backend, not the GPU: its CUDA plugin "
                "is missing or failed to initialise (JAX falls back to the CPU with only a warning)"
            )
        if args.device == "auto" and backend == "gpu":
            pass
        devices = jax.devices()
        dev = devices[0]
        on_gpu = dev.platform == "gpu"
        r["device"] = "cuda" if on_gpu else "cpu"
        r["device_name"] = str(getattr(dev, "device_kind", "") or "") or (
            None if on_gpu else common.host_cpu_name()
        )
        if on_gpu:
            cc = getattr(dev, "compute_capability", None)
            r["compute_capability"] = str(cc) if cc else None
        r["cudnn_used"] = bool(on_gpu)

    c.stage("setup")
    with c.timer("setup"):
        jnp = jax.numpy
        dtype = jnp.float32
        if args.amp:
            r["amp"] = "bf16"
            dtype = jnp.bfloat16
        params = jax.device_put(init_params(jax, args.seed), dev)
        velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
        xs, ys = make_data(np, args.batch_size, args.seed)
        x = jax.device_put(xs, dev)
        y = jax.device_put(ys, dev)
        step = make_step(jax, dtype)

    losses = []
    c.stage("first_step")
    with c.timer("first_step"):  # includes tracing and XLA compilation
        params, velocity, loss = step(params, velocity, x, y)
        losses.append(float(loss))
    c.set_losses(losses)

    c.stage("steady_steps")
    t = time.perf_counter()
    for _ in range(args.steps - 1):
        params, velocity, loss = step(params, velocity, x, y)
        losses.append(float(loss))  # float() blocks until the step is done
    steady = time.perf_counter() - t
    c.timings["steady_steps"] = steady
    c.set_losses(losses)
    if args.steps > 1 and steady > 0:
        r["samples_per_second"] = (args.steps - 1) * args.batch_size / steady
    if on_gpu:
        r["peak_memory_bytes"] = peak_gpu_bytes(dev)
        r["peak_memory_kind"] = "gpu_peak"
    else:
        r["peak_memory_bytes"] = common.peak_rss_bytes()
        r["peak_memory_kind"] = "host_peak_rss"
    ok, why = common.losses_decreased(losses)
    if not ok:
        c.fail(why)

    if args.compare == "always" or (args.compare == "auto" and on_gpu):
        c.stage("compare")
        with c.timer("compare"):
            sample = xs[:16]
            cpu = jax.devices("cpu")[0]
            got = np.asarray(forward(jax, params, jax.device_put(sample, dev), jnp.float32))
            ref = np.asarray(
                forward(jax, jax.device_put(params, cpu), jax.device_put(sample, cpu), jnp.float32)
            )
            diff = float(abs(got - ref).max())
            scale = float(abs(ref).max())
            r["compare"] = {
                "max_abs_diff": common.clean_float(diff),
                "ref_max_abs": common.clean_float(scale),
                "match": common.forward_matches(diff, scale),
                "rtol": common.RTOL,
                "atol": common.ATOL,
                "samples": int(sample.shape[0]),
            }


if __name__ == "__main__":
    common.Child("jax", sys.argv[1:]).run(train)
