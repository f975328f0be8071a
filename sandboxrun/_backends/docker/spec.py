"""The hook container's hardening, alone, to be read against docs/sandbox.md (and
checked item by item by tests/test_docker_spec.py).

`container_config` is everything the container is made with: no network, a read-only
root, the workspace read-only at its own path, tmpfs for /tmp and the home, a user that
is never root, every capability dropped, no-new-privileges, the memory (no swap), pids,
CPU, nofile and core limits, no log driver, an init, the paths masked in /proc and /sys,
nothing of the host's environment, the image's helper (Landlock, its own deadline).
Below it, the parts it is made of: the read-only mounts (nested mounts included), the
bound on the host files a hook writes, our /etc/hosts. What the lifecycle decides (the
labels and their deadline, which network, the pool's gate) is passed in.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import TYPE_CHECKING, Any

from docker.types import LogConfig, Mount, Ulimit

from ..._errors import ConfigError
from ..._log import logger
from ..._sandbox import envfile as _envfile
from ..._sandbox.envfile import TARGET as ENV_FILE_TARGET
from ..._sandbox.mounts import home_layout, system_reason, under
from ..._sandbox.state import hook_ids
from ..._settings import Settings, parse_size
from ..._types import ExecRequest
from ..environment import hook_environment as _environment
from ..helper import Helper
from ..helper import command as helper_command

if TYPE_CHECKING:  # imported where used: a cold run without an allowlist needs none
    from .allowlist import HookNet

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


def container_config(
    api: Any,
    settings: Settings,
    request: ExecRequest,
    *,
    name: str,
    labels: dict[str, str],
    helper: Helper | None,
    network_mode: str,
    hosts: str | None,
    net: HookNet | None = None,
    gate: float | None = None,
    frame: bool = False,
) -> dict[str, Any]:
    """The `create_container` arguments for `request`: everything docs/sandbox.md
    promises of a hook's container. `api` makes the engine's host config (its shape
    depends on the API version); `labels` are the lifecycle's (`labels.py`);
    `network_mode` is "none", our bridge's id or the hook's own allowlist network
    (`net`, which also gives the proxy's variables and the resolver); `hosts`: our
    /etc/hosts (then NetworkDisabled), None without one. `gate`: started ahead of
    time, its hook waits for the event at most that long (the pool's; everything else
    is the same). `frame`: its helper ends the run with a final frame (`Run` then
    sends a nonce)."""
    s = settings
    memory = parse_size(s.memory)
    uid, gid = hook_ids(s.user)
    tmpfs = f"rw,nosuid,nodev,size={parse_size(s.tmpfs_size)}"
    mounts = read_only_mounts(request.mounts, s.allowed_roots)
    layout = home_layout(request.mounts, state=bool(request.state))
    if request.state and layout.state_at:  # the hook's persistent home (`_sandbox.state`)
        mounts.append(Mount(target=layout.state_at, source=request.state, type="bind"))
    private = [path for path, _ in request.private_dirs]
    private_tmpfs: dict[str, str] = {}
    for path, source in request.private_dirs:  # CLAUDE_PLUGIN_DATA: ours, or a tmpfs
        if source:
            mounts.append(Mount(target=path, source=source, type="bind"))
        else:
            private_tmpfs[path] = f"{tmpfs},mode=0700,uid={uid},gid={gid}"
    if net:  # no names resolved inside: the proxy resolves them (see `dns` below)
        mounts.append(Mount(target="/etc/resolv.conf", source=RESOLV_CONF, type="bind",
                            read_only=True))  # fmt: skip
    ulimits = [
        Ulimit(name="nofile", soft=s.nofile, hard=s.nofile),
        Ulimit(name="core", soft=0, hard=0),
    ]
    for target, source in request.overlays:  # a changed hook's approved files (`_review`)
        mounts.append(Mount(target=target, source=source, type="bind", read_only=True))
    if request.env_file:  # CLAUDE_ENV_FILE: a host file of ours, read back afterwards
        mounts.append(Mount(target=ENV_FILE_TARGET, source=request.env_file, type="bind"))
        private.append(ENV_FILE_TARGET)
    scratch = {"/tmp": f"{tmpfs},mode=1777"}
    if request.tmp:  # the session's shared /tmp (`_sandbox.sessiontmp`): a host folder of ours
        check_nothing_below_tmp([m["Target"] for m in mounts]
                                 + [*layout.tmpfs, *private_tmpfs])  # fmt: skip
        mounts.append(Mount(target="/tmp", source=request.tmp, type="bind"))
        scratch = {}
    if request.env_file or request.tmp:  # host files the hook writes: bounded each
        ulimits.append(file_size_limit(s))
    if hosts:  # NetworkDisabled (below): the engine writes no /etc/hosts of its own
        mounts.append(Mount(target="/etc/hosts", source=hosts, type="bind", read_only=True))
    host_config = api.create_host_config(
        mounts=mounts,
        network_mode=network_mode,
        read_only=True,
        tmpfs={
            **scratch,
            # The home and its folders (`_sandbox.mounts.home_layout`), owned by the hook's
            # user: runc would give a tmpfs the mode of the folder it covers.
            **{t: f"{tmpfs},mode=0700,uid={uid},gid={gid}" for t in layout.tmpfs},
            **private_tmpfs,
        },
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        init=not (helper and helper.protocol >= 2),  # a protocol-2 helper is the init
        mem_limit=memory,
        memswap_limit=memory,  # equal: no swap on top of the limit
        pids_limit=s.pids,
        nano_cpus=int(s.cpus * 1e9),
        shm_size=16 << 20,
        ulimits=ulimits,
        log_config=LogConfig(type=LogConfig.types.NONE),
        group_add=[str(g) for g in s.groups] or None,  # only groups the user configured
        runtime=s.runtime,
        # Allowlist hooks: Docker's embedded DNS (127.0.0.11) cannot be turned off on a
        # user network, and Docker 20.10 forwards outside names from an internal
        # network to the host's resolver (CVE-2024-29018): a way out. Told to forward
        # to the container's own loopback, it sends no query anywhere. The hook's
        # resolv.conf names that loopback too, so a lookup fails at once instead of
        # waiting on the embedded resolver. The proxy is reached by its address.
        dns=["127.0.0.1"] if net else None,
    )
    host_config["MaskedPaths"] = MASKED_PATHS  # docker-py has no argument for it
    return {
        "image": s.image,
        # The image's ENTRYPOINT must not stand between us and the hook: reset it.
        "entrypoint": [""],
        "command": helper_command(
            helper,
            request.argv,
            request.timeout,
            [*layout.writable, *private],  # the home's folders, the env file, plugin data
            s.runtime,
            landlock_optional=s.landlock == "optional",
            gate=gate,
            frame=frame,
        ),
        "name": name,
        "user": f"{uid}:{gid}",
        "working_dir": request.workdir,
        # The proxy's variables last: nothing the dialect passes replaces them.
        "environment": {
            **_environment(request.env, layout.home),
            **(net.environment() if net else {}),
        },
        "labels": labels,
        "stdin_open": True,  # with detach=False docker-py also sets StdinOnce
        # Not the proxies of ~/.docker/config.json: nothing of the host's goes in.
        "use_config_proxy": False,
        # With "none", NetworkDisabled too: the engine then makes no network sandbox
        # (`start` ~100 ms faster, bench/network_mode.py); the namespace still holds
        # only `lo`, and NetworkMode stays "none" for an engine that ignores it. It
        # writes no /etc/hosts then: ours (above) keeps `localhost` resolving.
        "network_disabled": hosts is not None,
        "tty": False,
        "host_config": host_config,
    }


def check_nothing_below_tmp(targets: list[str]) -> None:
    """A shared /tmp is a host folder: the engine would make the mount point of anything
    below it inside that folder, as root. `_sandbox.sessiontmp` never asks for that; an API
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
    before (`_sandbox.envfile.MAX_BYTES`). Only for runs with an env file or a shared /tmp: the
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
    here as well, whoever asked for it (`_sandbox.mounts` says why).
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
