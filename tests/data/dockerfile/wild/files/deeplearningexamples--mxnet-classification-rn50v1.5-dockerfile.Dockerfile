# source: https://github.com/NVIDIA/DeepLearningExamples/blob/729963dd47e7c8bd462ad10bfac7a7b0b604e6dd/MxNet/Classification/RN50v1.5/Dockerfile
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/mxnet:22.10-py3

FROM $FROM_IMAGE_NAME

WORKDIR /workspace/rn50

COPY requirements.txt .
RUN pip install -r requirements.txt

ENV MXNET_CUDNN_AUTOTUNE_DEFAULT=0

COPY . .
