# source: https://github.com/open-mmlab/mmocr/blob/2a7a79e4d326113f243b126cc46754e6992284bc/.circleci/docker/Dockerfile
ARG PYTORCH="1.8.1"
ARG CUDA="10.2"
ARG CUDNN="7"

FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel

RUN apt-get update && apt-get install -y ninja-build libglib2.0-0 libsm6 libxrender-dev libxext6 libgl1-mesa-glx
