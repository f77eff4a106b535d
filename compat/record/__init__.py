"""The run recorder: `compat run`, `compat watch` and the notebook extension (timeline + evidence at death).

Layout: host.py and kmsg.py read the host (pure parsers beside tiny acquire steps); gpu.py drives the
NVML sampler child (gpu_sampler.py; pynvml never loads in compat's own process); recorder.py samples into a
timeline.py Timeline; verdict.py turns the record into a RunVerdict with its deciding evidence; document.py is
the run.json document; summary.py and html.py render it; run.py, watch.py and notebook.py are the three ways
in. Nothing heavy is imported here.
"""
