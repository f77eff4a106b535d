# source: https://github.com/NVIDIA/DeepLearningExamples/blob/729963dd47e7c8bd462ad10bfac7a7b0b604e6dd/TensorFlow/Segmentation/VNet/Dockerfile
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/tensorflow:20.06-tf1-py3
FROM ${FROM_IMAGE_NAME}

ADD . /workspace/vnet
WORKDIR /workspace/vnet

RUN pip install --disable-pip-version-check -r requirements.txt

ENV TF_XLA_FLAGS="--tf_xla_enable_lazy_compilation=false"


