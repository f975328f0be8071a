#!/usr/bin/env bash
# Build the Debian base image without a registry: debootstrap a minimal bookworm
# rootfs from Debian's mirror and `docker import` it. Needs root (debootstrap is
# installed with apt-get if missing).
#
#   images/offline-base.sh [TAG] [--force]     (TAG defaults to sandboxrun/base:bookworm)
#
# Quick when the image exists already, unless --force. Progress goes to stderr.
# SANDBOXRUN_DEBIAN_MIRROR overrides the mirror (default http://deb.debian.org/debian).
set -euo pipefail

tag=sandboxrun/base:bookworm
force=0
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -*) printf 'offline-base: unknown option %s (usage: offline-base.sh [TAG] [--force])\n' "$arg" >&2; exit 2 ;;
        *) tag=$arg ;;
    esac
done
mirror=${SANDBOXRUN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=http://deb.debian.org/debian-security
say() { printf 'offline-base: %s\n' "$*" >&2; }

if [[ "$force" = 0 ]] && docker image inspect "$tag" >/dev/null 2>&1; then
    say "$tag exists; nothing to do (--force rebuilds it)"
    exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
    say "debootstrap needs root: run as root, or build with a registry (sandboxrun images build)"
    exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
fi

rootfs=$(mktemp -d /var/tmp/sandboxrun-rootfs.XXXXXX)
cleanup() {
    # A failed debootstrap can leave /proc or /sys mounted in the rootfs: unmount
    # (deepest first) before deleting, and never let rm cross into another filesystem.
    awk -v r="$rootfs/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m" || true; done
    rm -rf --one-file-system "$rootfs"
}
trap cleanup EXIT

say "debootstrap bookworm from $mirror into $rootfs (well under a minute on a good mirror)"
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >&2

# The archive the image's own apt-get uses during `docker build`.
cat >"$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES

# What debian:bookworm-slim does too: no docs, man pages or apt caches in layers.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
DPKG
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
APT
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
# The engine provides these per container; the builder's would only mislead.
: >"$rootfs/etc/hostname"
: >"$rootfs/etc/resolv.conf"

say "importing as $tag"
tar --numeric-owner -C "$rootfs" -c . |
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' \
        - "$tag" >&2
say "done: $tag"
