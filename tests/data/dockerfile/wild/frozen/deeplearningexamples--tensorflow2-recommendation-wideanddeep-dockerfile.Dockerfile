# source: https://github.com/NVIDIA/DeepLearningExamples/blob/729963dd47e7c8bd462ad10bfac7a7b0b604e6dd/TensorFlow2/Recommendation/WideAndDeep/Dockerfile
# Copyright (c) 2021-2022, NVIDIA CORPORATION. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

ARG FROM_IMAGE_NAME=nvcr.io/nvidia/merlin/merlin-tensorflow-training:22.03

FROM ${FROM_IMAGE_NAME}

ENV HOROVOD_CYCLE_TIME=0.1
ENV HOROVOD_FUSION_THRESHOLD=67108864
ENV HOROVOD_NUM_STREAMS=2

ADD requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt

WORKDIR  /wd

COPY . .

RUN cd /nvtabular && git checkout v0.7.1
