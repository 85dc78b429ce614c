# cfgcheck as a container image:
#   docker build -t cfgcheck .
#   docker run --rm -v "$PWD:/src" -w /src cfgcheck lint .
# The base is pinned by digest (a tag can be moved to other content); refresh the digest with the
# tag when upgrading Python (Renovate and Dependabot update both).
FROM python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# git: the repository root, `lint --base` and `review` read the checkout with it
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md LICENSE /tmp/cfgcheck/
COPY src /tmp/cfgcheck/src
COPY rules /tmp/cfgcheck/rules
COPY templates /tmp/cfgcheck/templates
RUN pip install /tmp/cfgcheck && rm -rf /tmp/cfgcheck

RUN useradd --create-home --uid 10001 cfgcheck
USER cfgcheck
# The mounted checkout belongs to the host's user, not this one: without this git refuses it
# ("dubious ownership") and cfgcheck could not find the repository root or the --base commit.
RUN git config --global --add safe.directory '*'
WORKDIR /src

ENTRYPOINT ["cfgcheck"]
CMD ["lint", "."]
