"""The hook container's hardening, read against docs/sandbox.md: its mounts (each
read-only at its own place, nested mounts included), the bound on the host files a hook
writes, /etc/hosts and resolv.conf, and the paths masked in /proc and /sys.
"""

from __future__ import annotations

import os
import re
import tempfile

from docker.types import Mount, Ulimit

from ... import _envfile
from ..._errors import ConfigError
from ..._log import logger
from ..._mounts import system_reason, under
from ..._settings import Settings, parse_size

# What an allowlist hook's /etc/resolv.conf says (shipped with the package).
RESOLV_CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "allowlist-resolv.conf")
# MaskedPaths replaces the engine's default list, so it starts with Docker's own (20.10 to
# 27), then hides what identifies the host and no hook needs: the kernel command line, the
# boot id, loaded modules, disks, the hardware's make and serial numbers.
MASKED_PATHS = [
    "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
    "/sys/firmware", "/sys/devices/virtual/powercap",
    "/proc/cmdline", "/proc/bootconfig", "/proc/config.gz", "/proc/sys/kernel/random/boot_id",
    "/proc/modules", "/proc/partitions", "/proc/diskstats", "/sys/devices/virtual/dmi",
]  # fmt: skip


def check_nothing_below_tmp(targets: list[str]) -> None:
    """A shared /tmp is a host folder: the engine would make the mount point of anything
    below it inside that folder, as root. `_sessiontmp` never asks for that; an API
    caller that does is refused."""
    for target in targets:
        if target == "/tmp" or target.startswith("/tmp/"):
            raise ConfigError(f"{target}: nothing may be mounted in a shared /tmp")


def file_size_limit(s: Settings) -> Ulimit:
    """The bound on a host file a hook writes (its CLAUDE_ENV_FILE, a file in a session's
    shared /tmp), whatever the runtime: RLIMIT_FSIZE, which runc sets and gVisor
    enforces in its own kernel, so no file grows past it (the write fails, the writer
    gets SIGXFSZ). A bind of a host file or folder cannot be given a size of its own,
    and a copy out of a tmpfs would need a helper every image has. No smaller than the
    tmpfs and state sizes, so any file a hook could keep there still fits;
    `Run._watch_env_file` ends a hook whose env file passes its far smaller cap long
    before (`_envfile.MAX_BYTES`). Only for runs with an env file or a shared /tmp: the
    hooks of other runs keep their usual limits."""
    size = max(parse_size(s.tmpfs_size), parse_size(s.state_size), _envfile.MAX_BYTES + 1)
    return Ulimit(name="fsize", soft=size, hard=size)


def read_only_mounts(paths: tuple[str, ...], allowed: tuple[str, ...]) -> list[Mount]:
    """Each path read-only at its own place, and every filesystem mounted below it too.

    Mount objects, not `src:dst:ro` strings: a `:` in a path must not change the mount.
    Docker before API 1.44 makes a `ro` bind read-only only at its top: a filesystem
    mounted inside the workspace (a tmpfs, a USB disk, a bind) would stay writable
    through it. So each nested mount point gets its own read-only bind. A folder that
    would shadow the image's own (`/usr/local/bin`) or expose the system's is refused
    here as well, whoever asked for it (`_mounts` says why).
    """
    targets: dict[str, str] = {}
    points = _mount_points()
    for path in paths:
        real = os.path.realpath(path)  # mountinfo speaks of real paths
        if os.path.isdir(real) and not under(real, allowed):
            why = system_reason(real)
            if why:
                raise ConfigError(f"refusing to mount {path!r} into a hook's container: {why}")
        targets[path] = path
        for point in points:
            if point.startswith(real.rstrip("/") + "/"):
                targets[path + point[len(real) :]] = point
    return [Mount(target=t, source=src, type="bind", read_only=True) for t, src in targets.items()]


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    # Field 5 is the mount point, with spaces and the like escaped as octal (\040).
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), ln.split()[4]) for ln in lines]


HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"


def write_hosts(cache_dir: str) -> str:
    """The hosts file's path ("" if it cannot be written). World-readable: hooks may run
    as another uid. Rewritten atomically when its content is not ours."""
    path = os.path.join(cache_dir, "hosts")
    try:
        with open(path) as f:
            if f.read() == HOSTS:
                return path
    except OSError:
        pass
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".hosts-")
        with os.fdopen(fd, "w") as f:
            f.write(HOSTS)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        return path
    except OSError as exc:
        logger.warning("could not write {}: {} (hooks start ~100 ms slower)", path, exc)
        return ""
