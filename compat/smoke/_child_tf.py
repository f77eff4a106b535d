"""Smoke-training child for TensorFlow (Keras): a tiny CNN trained for a few steps, run by compat in its own process.

Usage: python _child_tf.py --out RESULT.json [--device auto|cuda|cpu] [--steps N] [--batch-size N] [--amp]
[--find-max-batch] ... The JSON result goes to --out (never stdout), progress markers to stderr. Standard
library plus TensorFlow only: no compat import (the interpreter under test may not have compat installed).
Works with Keras 2 (tf.keras, TF <= 2.15) and Keras 3 (TF >= 2.16).
"""

from __future__ import annotations

import contextlib
import gc
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


def build_model(tf: Any, keras: Any, seed: int) -> Any:
    keras.utils.set_random_seed(seed)
    L = keras.layers
    inputs = keras.Input(shape=(IMAGE, IMAGE, 3))
    h = L.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    h = L.MaxPooling2D(2)(h)
    h = L.Conv2D(32, 3, padding="same", use_bias=False)(h)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    h = L.GlobalAveragePooling2D()(h)
    h = L.Dense(N_CLASSES)(h)
    outputs = L.Activation("linear", dtype="float32")(h)  # logits in float32 under mixed precision
    model = keras.Model(inputs, outputs)
    # compile() wraps the optimizer in a LossScaleOptimizer by itself under the mixed_float16 policy.
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def train_step(model: Any, x: Any, y: Any) -> float:
    logs = model.train_on_batch(x, y, return_dict=True)  # metrics are reset per call: this step's loss
    return float(logs["loss"])


def gpu_details(tf: Any, gpu: Any) -> dict[str, Any]:
    try:
        return dict(tf.config.experimental.get_device_details(gpu))
    except Exception:  # older TF, or no details for this device
        return {}


def peak_gpu_bytes(tf: Any) -> Optional[int]:
    try:
        return int(tf.config.experimental.get_memory_info("GPU:0")["peak"])
    except Exception:
        return None


def reset_gpu_peak(tf: Any) -> None:
    with contextlib.suppress(Exception):
        tf.config.experimental.reset_memory_stats("GPU:0")


def compare_with_cpu(tf: Any, model: Any, x: Any, device: str) -> dict[str, Any]:
    """One forward pass on the device and on the CPU, same weights and input, TF32 off, inference mode."""
    sample = x[: min(16, x.shape[0])]
    tf32 = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        with tf.device(device):
            got = tf.cast(model(sample, training=False), tf.float32).numpy()
        with tf.device("/CPU:0"):
            ref = tf.cast(model(sample, training=False), tf.float32).numpy()
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(tf32)
    diff = float(abs(got - ref).max())
    scale = float(abs(ref).max())
    return {
        "max_abs_diff": common.clean_float(diff),
        "ref_max_abs": common.clean_float(scale),
        "match": common.forward_matches(diff, scale),
        "rtol": common.RTOL,
        "atol": common.ATOL,
        "samples": int(sample.shape[0]),
    }


def search_max_batch(tf: Any, keras: Any, device: str, args: Any) -> dict[str, Any]:
    def try_batch(n: int) -> Optional[int]:
        model = None
        try:
            keras.backend.clear_session()
            gc.collect()
            reset_gpu_peak(tf)
            with tf.device(device):
                model = build_model(tf, keras, args.seed)
                # Made on the device: a host copy of a batch this large would cost seconds and host memory.
                x = tf.random.normal((n, IMAGE, IMAGE, 3), seed=args.seed)
                y = tf.random.uniform((n,), maxval=N_CLASSES, dtype=tf.int32, seed=args.seed)
                train_step(model, x, y)
            return peak_gpu_bytes(tf) if device.startswith("/GPU") else common.peak_rss_bytes()  # type: ignore[no-any-return]
        except tf.errors.ResourceExhaustedError as exc:
            raise common.OutOfMemory(str(exc)[:2000]) from None
        finally:
            del model
            gc.collect()

    return common.find_max_batch(try_batch, args.batch_size, cap=args.max_batch_cap)  # type: ignore[no-any-return]


def train(c: Any) -> None:
    args = c.args
    c.stage("import")
    with c.timer("import"):
        tf = importlib.import_module("tensorflow")
        keras = tf.keras
        np = importlib.import_module("numpy")
    r = c.result
    r["framework_version"] = str(tf.__version__)
    r["keras_version"] = str(getattr(keras, "__version__", "") or "") or None

    c.stage("device")
    with c.timer("device"):
        build = {}
        with contextlib.suppress(Exception):
            build = dict(tf.sysconfig.get_build_info())
        r["cuda_build"] = build.get("cuda_version")
        gpus = tf.config.list_physical_devices("GPU")
        if args.device == "cpu":
            if gpus:
                tf.config.set_visible_devices([], "GPU")
            gpus = []
        elif args.device == "cuda" and not gpus:
            if not tf.test.is_built_with_cuda():
                raise RuntimeError(
                    f"--device cuda: this TensorFlow ({tf.__version__}) is not built with CUDA"
                )
            raise RuntimeError(
                f"--device cuda: TensorFlow {tf.__version__} (built for CUDA {build.get('cuda_version')},"
                f" cuDNN {build.get('cudnn_version')}) sees no GPU: no CUDA-capable device is visible"
            )
        if gpus:
            for g in gpus:  # so the peak memory is what the job used, not the whole pre-allocated pool
                with contextlib.suppress(RuntimeError, ValueError):
                    tf.config.experimental.set_memory_growth(g, True)
            details = gpu_details(tf, gpus[0])
            device = "/GPU:0"
            r["device"] = "cuda"
            r["device_name"] = details.get("device_name") or gpus[0].name
            cc = details.get("compute_capability")
            r["compute_capability"] = "{}.{}".format(*cc) if cc else None
            r["cudnn_version"] = build.get("cudnn_version")
            r["cudnn_used"] = bool(tf.test.is_built_with_cuda() and build.get("cudnn_version"))
        else:
            device = "/CPU:0"
            r["device"] = "cpu"
            r["device_name"] = common.host_cpu_name()
            r["cudnn_used"] = False

    c.stage("setup")
    with c.timer("setup"):
        if args.amp:
            cc = r.get("compute_capability")
            bf16 = device == "/CPU:0" or (cc is not None and float(cc) >= 8.0)
            r["amp"] = "bf16" if bf16 else "fp16"
            keras.mixed_precision.set_global_policy("mixed_bfloat16" if bf16 else "mixed_float16")
        reset_gpu_peak(tf)
        with tf.device(device):
            model = build_model(tf, keras, args.seed)
        x, y = make_data(np, args.batch_size, args.seed)

    losses = []
    c.stage("first_step")
    with c.timer("first_step"), tf.device(device):  # includes tracing the tf.function
        losses.append(train_step(model, x, y))
    c.set_losses(losses)

    c.stage("steady_steps")
    t = time.perf_counter()
    with tf.device(device):
        for _ in range(args.steps - 1):
            losses.append(train_step(model, x, y))
    steady = time.perf_counter() - t
    c.timings["steady_steps"] = steady
    c.set_losses(losses)
    if args.steps > 1 and steady > 0:
        r["samples_per_second"] = (args.steps - 1) * args.batch_size / steady
    if device == "/GPU:0":
        r["peak_memory_bytes"] = peak_gpu_bytes(tf)
        r["peak_memory_kind"] = "gpu_peak"
    else:
        r["peak_memory_bytes"] = common.peak_rss_bytes()
        r["peak_memory_kind"] = "host_peak_rss"
    ok, why = common.losses_decreased(losses)
    if not ok:
        c.fail(why)

    if args.compare == "always" or (args.compare == "auto" and device == "/GPU:0"):
        c.stage("compare")
        with c.timer("compare"):
            r["compare"] = compare_with_cpu(tf, model, x, device)
        if not r["compare"]["match"] and r["status"] == "running":
            c.fail(
                f"the {r['device']} forward pass differs from the CPU one by {r['compare']['max_abs_diff']:.3g} "
                f"(outputs up to {r['compare']['ref_max_abs']:.3g}): silent corruption"
            )

    if args.find_max_batch and (device == "/GPU:0" or args.max_batch_cap > 0):
        del model
        c.stage("find_max_batch")
        with c.timer("find_max_batch"):
            r["max_batch"] = search_max_batch(tf, keras, device, args)


if __name__ == "__main__":
    common.Child("tensorflow", sys.argv[1:]).run(train)
