# The run controller image (`gkeml controller install --image ...` runs it): the SDK installed
# from this repository with `pip install .`, started as `gkeml controller run`.
# Build: docker build -t ghcr.io/gkeml/controller:$(python -c 'import gkeml_sdk; print(gkeml_sdk.__version__)') .
FROM python:3.11-slim

WORKDIR /src
COPY pyproject.toml README.md ./
COPY gkeml_sdk ./gkeml_sdk
COPY gkeml_magics ./gkeml_magics
RUN pip install --no-cache-dir . && rm -rf /src

# Not root; the Deployment also sets runAsNonRoot and a read-only root filesystem.
RUN useradd --uid 10001 --no-create-home gkeml
USER 10001
WORKDIR /tmp

ENTRYPOINT ["gkeml", "controller", "run"]
