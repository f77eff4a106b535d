"""The child process that touches the NVIDIA driver library (pynvml → libnvidia-ml.so.1) for compat.

Run as a script (`python _nvml_child.py full|light`), never imported by compat: a driver library that
segfaults, aborts or hangs takes down this child only, and the parent turns that into a finding (the way
conda's CUDA virtual package detects the driver in a spawned child). It imports nothing from compat except
the sibling nvml.py, loaded by path so that importing it pulls in no other compat module, and prints one
line: the marker, then the JSON of nvml.acquire() or nvml.acquire_light().
"""

import importlib.util
import json
import os
import sys

MARKER = "@@compat-nvml "


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "full"
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]  # our folder holds modules named like stdlib-ish names (environment, health, ...)
    spec = importlib.util.spec_from_file_location("_compat_nvml_impl", os.path.join(here, "nvml.py"))
    if spec is None or spec.loader is None:
        return 3
    impl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(impl)
    nvml, missing = impl.load_pynvml()
    if missing is not None:
        doc = missing
    elif mode == "light":
        doc = impl.acquire_light(nvml)
    else:
        doc = impl.acquire(nvml)
    sys.stdout.write(MARKER + json.dumps(doc, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
