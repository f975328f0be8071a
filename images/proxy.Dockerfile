# The egress proxy of `network = "allowlist"`: Debian's tinyproxy, nothing else.
#
# A hook on an allowlist sits on an internal Docker network whose only way out is
# this proxy; sandboxrun starts one per distinct allowlist and writes its config
# (FilterDefaultDeny, the allowed domains) at start. BASE as in the hook image's
# Dockerfile, so `images build --offline` builds it from the debootstrap base.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
LABEL org.opencontainers.image.title=sandboxrun-proxy \
      org.opencontainers.image.description="Egress allowlist proxy for sandboxrun hooks"
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends tinyproxy; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*
USER tinyproxy
