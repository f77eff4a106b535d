# source: https://github.com/huggingface/trl/blob/fd04760f594e9262cbf9abaccfef2bad05569775/docker/trl/Dockerfile
FROM pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime
RUN pip install --upgrade pip uv
RUN uv pip install --system trl[liger,peft,vlm] hf_transfer kernels trackio