# source: https://github.com/huggingface/accelerate/blob/a5cb37c17813a9d938ad3dac70b95fc58ebedbc3/benchmarks/fp8/torchao/Dockerfile
FROM nvcr.io/nvidia/pytorch:24.07-py3

RUN pip install transformers evaluate datasets
RUN git clone https://github.com/huggingface/accelerate.git

RUN cd accelerate && \
    pip install -e . && \
    cd benchmarks/fp8

RUN /bin/bash


