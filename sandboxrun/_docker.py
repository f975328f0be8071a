"""DockerBackend: one fresh, hardened container per hook invocation.

The life of one run (DESIGN.md §4, reference/sandboxing.md):

    create (labelled) -> attach stdin/stdout/stderr -> start -> stream stdin in and
    half-close -> read output as it comes, bounded -> [deadline: SIGKILL] -> EOF ->
    exit code + OOMKilled -> remove (always, in `finally`)

The deadline is ours, not the engine's: a timer kills the container at expiry, and
a watchdog shuts the socket down if the stream still has not ended shortly after.
Kills run on timer threads, never on the reading thread: the engine drains the
attach stream before a container can exit, so a reader that stopped to kill
would wait behind its own unread output.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from docker.types import LogConfig, Ulimit
from docker.utils.socket import STDOUT, frames_iter
from loguru import logger

from ._engine import connect, engine_errors, retry_engine
from ._errors import RuntimeMissing
from ._helper import Helper, deadline_reached, image_helper, start_error
from ._helper import command as helper_command
from ._settings import Settings, parse_size
from ._types import ExecRequest, ExecResult

HOME = "/home/hook"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LABEL = "sandboxrun.managed"
STREAM_GRACE = 10.0  # seconds after the deadline before we stop waiting for the stream
NOBODY = 65534


class DockerBackend:
    """Runs each `ExecRequest` in its own container, then removes it."""

    def __init__(self, settings: Settings, client: Any = None) -> None:
        self.settings = settings
        self.client = client if client is not None else connect(settings.docker_host)
        self.api = self.client.api
        self.run_id = uuid.uuid4().hex
        self._count = 0
        self._lock = threading.Lock()
        self._active: set[str] = set()  # containers of runs in flight, for abort()
        self._memory = parse_size(settings.memory)
        self._helper: Helper | bool | None = False  # the image's helper; False: unknown

    # -- preflight ---------------------------------------------------------------

    def check(self) -> None:
        """Refuse to start unless the image (and a requested runtime) are there."""
        self._helper = False  # look the image up afresh (it raises if it is missing)
        self._seccomp_helper()
        with engine_errors(self.settings.docker_host, self.settings.image):
            if self.settings.runtime:
                runtimes = retry_engine(self.api.info)().get("Runtimes", {})
                if self.settings.runtime not in runtimes:
                    raise RuntimeMissing(
                        f"runtime {self.settings.runtime!r} is not registered with the engine"
                        f" (have: {', '.join(sorted(runtimes))}); refusing to run without it"
                    )

    # -- one run -----------------------------------------------------------------

    def run(self, request: ExecRequest) -> ExecResult:
        with self._lock:
            self._count += 1
            name = f"sandboxrun-{self.run_id[:12]}-{self._count}"
        created = time.monotonic()  # durationMs counts the sandbox's own cost too
        config = self._config(request, name, self._seccomp_helper())
        with engine_errors(self.settings.docker_host, self.settings.image):
            cid = retry_engine(self.api.create_container)(**config)["Id"]
            with self._lock:
                self._active.add(cid)
            try:
                return _Run(self, cid, request, created).execute()
            finally:
                self._remove(cid)
                with self._lock:
                    self._active.discard(cid)

    def abort(self) -> None:
        """Remove every container of a run still in flight (we are being stopped)."""
        with self._lock:
            doomed = list(self._active)
        for cid in doomed:
            self._remove(cid)

    def _seccomp_helper(self) -> Helper | None:
        """The image's helper (see `_helper.py`), looked up once; images without it run
        hooks directly under docker-init (`doctor` warns)."""
        if self._helper is False:
            with engine_errors(self.settings.docker_host, self.settings.image):
                image = retry_engine(self.api.inspect_image)(self.settings.image)
            labels = (image.get("Config") or {}).get("Labels") or {}
            self._helper = image_helper(labels, self.settings.runtime)
        return self._helper if isinstance(self._helper, Helper) else None

    def _remove(self, cid: str) -> None:
        try:
            retry_engine(self.api.remove_container)(cid, force=True)
        except Exception as exc:  # cleanup never raises; `reap` sweeps what is left
            logger.warning("could not remove container {}: {}", cid[:12], exc)

    def _config(self, request: ExecRequest, name: str, helper: Helper | None) -> dict[str, Any]:
        s = self.settings
        uid, gid, groups = _identity(s.user, request.mounts)
        tmpfs = f"rw,nosuid,nodev,size={parse_size(s.tmpfs_size)}"
        host_config = self.api.create_host_config(
            binds=_read_only_binds(request.mounts),
            network_mode=s.network,  # "none" unless the user's own settings say bridge
            read_only=True,
            tmpfs={"/tmp": f"{tmpfs},mode=1777", HOME: f"{tmpfs},mode=0700,uid={uid},gid={gid}"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges:true"],
            init=not (helper and helper.protocol >= 2),  # a protocol-2 helper is the init
            mem_limit=self._memory,
            memswap_limit=self._memory,  # equal: no swap on top of the limit
            pids_limit=s.pids,
            nano_cpus=int(s.cpus * 1e9),
            shm_size=16 << 20,
            ulimits=[
                Ulimit(name="nofile", soft=s.nofile, hard=s.nofile),
                Ulimit(name="core", soft=0, hard=0),
            ],
            log_config=LogConfig(type=LogConfig.types.NONE),
            group_add=[str(g) for g in groups] or None,
            runtime=s.runtime,
        )
        deadline = int(time.time() + request.timeout + 2 * STREAM_GRACE)
        return {
            "image": s.image,
            # The image's ENTRYPOINT must not stand between us and the hook: reset it.
            "entrypoint": [""],
            "command": helper_command(helper, request.argv, request.timeout, HOME, s.runtime),
            "name": name,
            "user": f"{uid}:{gid}",
            "working_dir": request.workdir,
            "environment": _environment(request.env),
            "labels": {
                LABEL: "1",
                "sandboxrun.run": self.run_id,
                "sandboxrun.pid": str(os.getpid()),
                "sandboxrun.host": socket.gethostname(),
                "sandboxrun.deadline": str(deadline),
                "sandboxrun.hook": request.label[:200],
            },
            "stdin_open": True,  # with detach=False docker-py also sets StdinOnce
            "tty": False,
            "host_config": host_config,
        }


class _Run:
    """The mutable state of one container's run; used once."""

    def __init__(
        self, backend: DockerBackend, cid: str, request: ExecRequest, created: float
    ) -> None:
        self.b, self.cid, self.req, self.created = backend, cid, request, created
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.total = 0
        self.truncated = False
        self.timed_out = False
        self.killed_reason: str | None = None
        self.sock: Any = None

    def execute(self) -> ExecResult:
        api = self.b.api
        attached = retry_engine(api.attach_socket)(
            self.cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        self.sock = getattr(attached, "_sock", attached)
        writer = threading.Thread(target=self._feed, daemon=True)
        try:
            # Not retried: a start that reached the engine may have run the hook.
            api.start(self.cid)
            writer.start()
            timer = threading.Timer(self.req.timeout, self._deadline)
            watchdog = threading.Timer(self.req.timeout + STREAM_GRACE, self._hang_up)
            for t in (timer, watchdog):
                t.daemon = True
                t.start()
            try:
                self._read()
            finally:
                timer.cancel()
                watchdog.cancel()
            duration_ms = int((time.monotonic() - self.created) * 1000)
        finally:
            self._hang_up()
            if writer.is_alive():
                writer.join(timeout=STREAM_GRACE)  # unblocked by the shutdown above
            self.sock.close()
            attached.close()
        exit_code = retry_engine(api.wait)(self.cid, timeout=STREAM_GRACE)["StatusCode"]
        oom = bool(retry_engine(api.inspect_container)(self.cid)["State"].get("OOMKilled"))
        return ExecResult(
            exit_code=exit_code,
            stdout=bytes(self.stdout),
            stderr=bytes(self.stderr),
            duration_ms=duration_ms,
            timed_out=self.timed_out or deadline_reached(exit_code, self.stderr),
            start_error=start_error(exit_code, self.stderr),
            oom_killed=oom,
            output_truncated=self.truncated,
            killed_reason=self.killed_reason,
        )

    def _feed(self) -> None:
        """Stream stdin in, then half-close so the hook sees EOF. A hook that never
        reads makes this fail or block until the container is gone; both are fine."""
        with contextlib.suppress(OSError):
            self.sock.sendall(self.req.stdin)
            self.sock.shutdown(socket.SHUT_WR)

    def _read(self) -> None:
        s = self.b.settings
        for stream, data in frames_iter(self.sock, tty=False):  # type: ignore[no-untyped-call]
            self.total += len(data)
            if self.killed_reason:
                continue  # draining: the container is being killed
            buf = self.stdout if stream == STDOUT else self.stderr
            buf += data
            keep = s.stdout_tail if stream == STDOUT else 64 << 10
            if len(buf) > keep:
                del buf[: len(buf) - keep]
                self.truncated = True
            if self.total > s.output_limit:
                self.truncated = True
                self.killed_reason = (
                    f"killed: output exceeded {s.output_limit} bytes (output_limit)"
                )
                threading.Thread(target=self._kill, daemon=True).start()

    def _deadline(self) -> None:
        self.timed_out = self._kill()

    def _kill(self) -> bool:
        """SIGKILL the container; True if it was still running."""
        try:
            self.b.api.kill(self.cid, signal="SIGKILL")
            return True
        except Exception as exc:  # already exited, or gone
            logger.debug("kill {}: {}", self.cid[:12], exc)
            return False

    def _hang_up(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)


def _identity(user: str | None, mounts: tuple[str, ...]) -> tuple[int, int, list[int]]:
    """(uid, gid, extra groups) to run as: never root.

    The invoking user's own ids when they are not root, so the hook reads exactly
    what the user can read. When we run as root, the owner of the first mount (the
    workspace) if that is not root, else nobody; the mounts' groups are added so
    group-readable files stay readable. Root-only files (mode 600, owned by root)
    are then unreadable by design.
    """
    if user:
        uid_s, _, gid_s = user.partition(":")
        return int(uid_s), int(gid_s or uid_s), []
    owner: tuple[int, int] = (NOBODY, NOBODY)
    groups: list[int] = []
    for path in mounts:
        st = os.stat(path)
        if st.st_gid and st.st_gid not in groups:
            groups.append(st.st_gid)
        if owner == (NOBODY, NOBODY) and st.st_uid:
            owner = (st.st_uid, st.st_gid or NOBODY)
    if os.getuid() != 0:
        owner = (os.getuid(), os.getgid())
    return owner[0], owner[1], [g for g in groups if g != owner[1]]


def _read_only_binds(paths: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Each path read-only at its own place, and every filesystem mounted below it too.

    Docker before API 1.44 makes a `ro` bind read-only only at its top: a filesystem
    mounted inside the workspace (a tmpfs, a USB disk, a bind) would stay writable
    through it. So each nested mount point gets its own read-only bind.
    """
    binds = {p: {"bind": p, "mode": "ro"} for p in paths}
    points = _mount_points()
    for path in paths:
        real = os.path.realpath(path)  # mountinfo speaks of real paths
        for point in points:
            if point.startswith(real.rstrip("/") + "/"):
                binds[point] = {"bind": path + point[len(real) :], "mode": "ro"}
    return binds


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    # Field 5 is the mount point, with spaces and the like escaped as octal (\040).
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), ln.split()[4]) for ln in lines]


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    """Nothing from the host: a fixed base, plus what the dialect asked for."""
    return {"HOME": HOME, "PATH": PATH, "LANG": "C.UTF-8", "TMPDIR": "/tmp", **extra}

