FROM nvcr.io/nvidia/pytorch:22.12-py3
RUN apt update
RUN pip uninstall -y torch

RUN git clone https://github.com/comaniac/vllm.git /vllm; \
    cd /vllm; git checkout -b comaniac-patch-1; origin/comaniac-patch-1; \
    pip install -e .
ENV PYTHONPATH "/vllm:${PYTHONPATH}"
