# source: https://github.com/huggingface/accelerate/blob/a5cb37c17813a9d938ad3dac70b95fc58ebedbc3/benchmarks/fp8/ms_amp/Dockerfile
FROM ghcr.io/azure/msamp

RUN pip install transformers evaluate datasets
RUN git clone https://github.com/huggingface/accelerate

RUN cd accelerate && \
    pip install -e . && \
    cd benchmarks/fp8

CMD ["bash"]


