FROM ghcr.io/osgeo/gdal:ubuntu-small-3.7.2

ARG USE_GPU

RUN apt-get update && apt-get install ca-certificates -y

# Install python dependencies
RUN apt install python3-pip -y
RUN pip install pillow==10.1.0 transformers==4.33.3 imageio==2.31.1 scipy==1.11.1 geopandas==0.14.0 dtale==3.7.0 rasterio==1.3.9 rasterstats==0.19.0  psycopg2-binary==2.9.9 sqlalchemy==2.0.22 keras-cv==0.6.4 focal-loss==0.0.7 azure-storage-blob==12.18.3

RUN if [ "$USE_GPU" = "true" ]; then \
    pip install tensorflow[and-cuda]==2.14.0; \
  else \
    pip install tensorflow==2.14.0; \
  fi
