# `sandboxrun serve` as a service: the image compose.yaml runs next to the engine.
#
# The build context is made by scripts/compose-prepare: this file, serve-entrypoint.py and
# `wheels/` with sandboxrun and its dependencies, built and downloaded on the host with the
# host's own pip (the build container may reach no index, or only through a proxy whose CA
# only the host trusts). Nothing is fetched here but Debian's python3.
#
# BASE as in the hook image's Dockerfile: `debian:bookworm-slim` from a registry, or the
# offline base made by images/offline-base.sh (`scripts/compose-prepare --offline`).
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS python
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends python3; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*

# The virtualenv is made in a throwaway stage: neither pip's wheels nor ours stay in a layer.
FROM python AS install
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends python3-venv
COPY wheels/ /wheels/
RUN python3 -m venv /opt/sandboxrun \
 && /opt/sandboxrun/bin/pip install --quiet --no-index --find-links /wheels \
        --disable-pip-version-check sandboxrun \
 && /opt/sandboxrun/bin/sandboxrun --help >/dev/null

FROM python
LABEL org.opencontainers.image.title=sandboxrun-serve \
      org.opencontainers.image.description="sandboxrun serve: sandboxed AI-agent hooks as a service"
COPY --from=install /opt/sandboxrun /opt/sandboxrun
COPY serve-entrypoint.py /usr/local/bin/sandboxrun-serve-entrypoint
ENV PATH=/opt/sandboxrun/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1
# Root in the container, because it speaks to the engine's socket, which is root on the
# host anyway (see docs/compose.md: whoever controls this service controls the engine). Hooks
# never run as root: as root, sandboxrun runs them as nobody unless `user` says otherwise.
ENTRYPOINT ["python3", "/usr/local/bin/sandboxrun-serve-entrypoint"]
