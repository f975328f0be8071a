"""DockerBackend: one fresh, hardened container per hook invocation.

The life of one run (DESIGN.md §4, reference/sandboxing.md):

    create (labelled) -> attach stdin/stdout/stderr -> start -> stream stdin in and
    half-close -> read output as it comes, bounded -> [deadline: SIGKILL] -> EOF ->
    exit code + OOMKilled -> answer -> remove (always; in the background, see below)

This module is the lifecycle: the preflight (`check`: the image, its helper, the
runtime; the first success sweeps stale containers, `reaper.py`), the container's
creation with its labels and deadline (the reaper's cue), its networks, and its
removal. The rest is in four places, each read on its own:

- `../lifecycle.py`: what the Docker and Kubernetes backends share (run: warm then
  cold, the background remover, `abort`, `close`, `prewarm`, the pool's making);
- `spec.py`: the container's hardening alone (`container_config`), the list that
  docs/sandbox.md promises, checked item by item by tests/test_docker_spec.py;
- `stream.py`: the stream of one run (`Run`): stdin in, output within its caps, the
  deadline's kill, the answer;
- `warm.py`: the warm path, how a run uses the pool (`../pool.py`).

Cleanup is off the critical path: the result is returned while a small executor of
the backend removes the container (and runs the first check's stale-container sweep).
A container waiting for removal stays in `_active`, so `abort()` (SIGTERM) removes it
too; `close()` waits for all of it (the CLI calls it after printing its answer), and so
does the interpreter at exit (the executor's threads are joined); after a SIGKILL, the
labels let `reap` find it, as for a run cut short.

The deadline is ours, not the engine's: a timer kills the container at expiry, and
a watchdog shuts the socket down if the stream still has not ended shortly after
(`stream.py`). With an image whose helper writes a final frame (`helper.FrameReader`),
a run (warm or cold) answers when the frame has come on both streams: the exit status
and the kill reason (deadline, output cap, OOM) come from the helper, before the
container's exit and teardown (~50-70 ms on runc), and without asking the engine
(`wait`, `inspect`). Without a frame (an older image, or a helper killed from outside)
the run ends as a cold one does.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from docker.errors import NotFound

from ... import _settings
from ..._errors import RuntimeMissing, SandboxrunError
from ..._log import logger
from ..._settings import Settings
from ..._types import ExecRequest, ExecResult
from ..base import cancellable
from ..helper import Helper, image_helper
from ..image_tools import ImageTools, image_tools
from ..labels import DEADLINE, MANAGED, container_labels, owner_labels
from ..lifecycle import DEADLINE_SLACK
from .engine import connect, engine_errors, retry_engine
from .network import ensure_network
from .spec import container_config, write_hosts
from .stream import Run, close_stream
from .warm import WarmPath

if TYPE_CHECKING:  # imported where used: a cold run without an allowlist needs none
    from .allowlist import HookNet
from .reaper import reap


@dataclasses.dataclass(frozen=True, slots=True)
class EngineFacts:
    version: str
    runtimes: tuple[str, ...]
    default_runtime: str


class DockerBackend(WarmPath):
    """Runs each `ExecRequest` in its own container, then removes it.

    `warm=True` (for a long-lived owner: a platform's process, `serve`) keeps pools of
    containers started ahead of time (settings `pool_size`, `pool_total`, `pool_idle`);
    `close()` (or `with`) removes them. The first run of a kind is cold and starts its
    pool; `prewarm` starts one ahead of the first run."""

    def __init__(
        self,
        settings: Settings,
        client: Any = None,
        cache_dir: str | None = None,
        warm: bool = False,
    ) -> None:
        super().__init__(settings, warm)
        # Where the image's listing is kept between runs (`_image_tools`).
        self.cache_dir = cache_dir or os.path.join(_settings.account_home(), ".cache", "sandboxrun")
        self._client = client  # connected on first use: building a backend never fails
        self._hosts: str | None = None  # the /etc/hosts of hooks without network; "": none
        self._helper: Helper | bool | None = False  # the image's helper; False: unknown
        self._checked = False
        self._network_id: str | None = None
        self._proxy_id: str | None = None  # network allowlist: the running proxy
        self._image_id = ""
        self._tools: dict[str, ImageTools | None] = {}  # by image id
        self._tools_lock = threading.Lock()  # one probe, however many hooks ask at once
        self._attached: dict[str, Any] = {}  # idle pooled containers' streams, by id

    @property
    def client(self) -> Any:
        """The docker SDK client (connects at first use; `EngineUnavailable` if none)."""
        with self._lock:
            if self._client is None:
                self._client = connect(self.settings.docker_host)
            return self._client

    @property
    def api(self) -> Any:
        return self.client.api

    # -- preflight ---------------------------------------------------------------

    def check(self) -> None:
        """Refuse to start unless the image (and a requested runtime) are there; the
        first success also sweeps what killed runs left behind. Cheap once it passed."""
        if self._checked:
            return
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
        self._checked = True
        # The sweep decides nothing about this run: it goes beside it, not before it.
        self._in_background(self._sweep)

    def describe(self) -> EngineFacts:
        """What `doctor` shows of the engine: its version and the runtimes it has."""
        with engine_errors(self.settings.docker_host, self.settings.image):
            version = retry_engine(self.api.version)()
            info = retry_engine(self.api.info)()
        return EngineFacts(
            version=str(version.get("Version") or "?"),
            runtimes=tuple(sorted(info.get("Runtimes") or {})),
            default_runtime=str(info.get("DefaultRuntime") or "?"),
        )

    def ping(self) -> None:
        """Raise `EngineUnavailable` unless the engine answers now: `serve`'s readiness
        (`check` is cheap once it passed, so it misses an engine that went away since)."""
        with engine_errors(self.settings.docker_host, self.settings.image):
            self.api.ping()

    def helper(self) -> Helper | None:
        """The image's init helper (`_backends/helper.py`), or None: hooks run under docker-init."""
        return self._seccomp_helper()

    def _sweep(self) -> None:
        try:
            reap(self.client)
        except SandboxrunError as exc:
            logger.warning("stale-container sweep failed: {}", exc)

    # -- one run -----------------------------------------------------------------

    def _run_cold(self, request: ExecRequest) -> ExecResult:
        name = self._name()
        created = time.monotonic()  # durationMs counts the sandbox's own cost too
        since = int(time.time()) - 1  # the proxy's log from here on is this hook's
        helper = self._seccomp_helper()
        refused: tuple[str, ...] = ()
        with engine_errors(self.settings.docker_host, self.settings.proxy_image):
            net = self._hook_net(request.timeout) if self.settings.network == "allowlist" else None
        with engine_errors(self.settings.docker_host, self.settings.image):
            try:
                # Framed as a warm run is: the answer comes with the helper's final frame,
                # before the container's exit and the engine's wait and inspect.
                framed = bool(helper and helper.frame)
                config = self._config(request, name, helper, net, frame=framed)
                cid = retry_engine(self.api.create_container)(**config)["Id"]
                with self._lock:
                    self._active.add(cid)
                try:
                    # Removed, not killed, on cancel: a container not yet started never starts.
                    with cancellable(request, lambda: self._remove(cid)):
                        result = Run(self, cid, request, created, framed=framed).execute()
                finally:
                    if net:  # its network can only go once the container has gone
                        self._remove_now(cid)
                    else:
                        self._in_background(self._remove_now, cid)
            finally:
                if net:
                    from .allowlist import detach, refused_hosts

                    refused = refused_hosts(self.api, net, since)
                    detach(self.api, net.network_id, net.proxy_id)
        return dataclasses.replace(result, refused_hosts=refused) if net else result

    @property
    def image_id(self) -> str:
        """The hook image's id once `check` inspected it ("" before): the audit names it."""
        return self._image_id

    def image_tools(self) -> ImageTools | None:
        """What the image holds: from memory, the disk cache, else one probe container
        (per image id, so a rebuilt image is probed afresh). None: the probe failed."""
        self.check()
        with self._tools_lock:
            image_id = self._image_id
            if image_id not in self._tools:
                # Cold: a probe's one-off request would only start a pool nobody uses.
                found = image_tools(self._run_cold, self.settings.image, image_id, self.cache_dir)
                self._tools[image_id] = found
            return self._tools[image_id]

    def _seccomp_helper(self) -> Helper | None:
        """The image's helper (see `_backends/helper.py`), looked up once; images without it run
        hooks directly under docker-init (`doctor` warns)."""
        if self._helper is False:
            with engine_errors(self.settings.docker_host, self.settings.image):
                image = retry_engine(self.api.inspect_image)(self.settings.image)
            self._image_id = str(image.get("Id") or "")
            labels = (image.get("Config") or {}).get("Labels") or {}
            self._helper = image_helper(labels, self.settings.runtime)
        return self._helper if isinstance(self._helper, Helper) else None

    def _network(self) -> str:
        """Our own bridge network's id, made on first use (see network.py)."""
        with self._lock:
            if self._network_id is None:
                with engine_errors(self.settings.docker_host):
                    self._network_id = ensure_network(self.api)
            return self._network_id

    def _hook_net(self, timeout: float) -> HookNet:
        """A network of its own for one allowlist hook, the proxy on it (see allowlist.py).
        The proxy is looked up once per backend; its network is made per hook."""
        from .allowlist import attach, ensure_proxy

        s = self.settings
        with self._lock:
            if self._proxy_id is None:
                egress = s.egress_network or self._network()
                self._proxy_id = ensure_proxy(
                    self.api, image=s.proxy_image, domains=s.allow_domains, egress=egress,
                    labels={MANAGED: "1"},  # no owner, no deadline: only `reap --all` ends it
                )  # fmt: skip
            proxy = self._proxy_id
        deadline = int(time.time() + timeout + DEADLINE_SLACK + 60)  # the sweep's cue
        return attach(self.api, proxy, {**owner_labels(), DEADLINE: str(deadline)})

    def _remove_now(self, cid: str) -> None:
        self._remove(cid)
        with self._lock:
            self._active.discard(cid)

    def _hosts_file(self) -> str | None:
        """A read-only /etc/hosts naming only localhost, kept in the cache folder. None if
        it cannot be written: the run then goes without NetworkDisabled, as before."""
        with self._lock:
            if self._hosts is None:
                self._hosts = write_hosts(self.cache_dir)
            return self._hosts or None

    def _remove(self, cid: str) -> None:
        with self._lock:
            attached = self._attached.pop(cid, None)  # an idle pooled container's stream
        if attached is not None:
            close_stream(attached)
        try:
            # v: an image's VOLUMEs make anonymous volumes; they go with the container.
            retry_engine(self.api.remove_container)(cid, force=True, v=True)
        except NotFound:  # removed already (a cancelled run's, at its cancel)
            pass
        except Exception as exc:  # cleanup never raises; `reap` sweeps what is left
            logger.warning("could not remove container {}: {}", cid[:12], exc)

    def _config(
        self,
        request: ExecRequest,
        name: str,
        helper: Helper | None,
        net: HookNet | None = None,
        gate: float | None = None,
        frame: bool = False,
    ) -> dict[str, Any]:
        """The container for `request` (`spec.container_config`), with this backend's
        labels and deadline (the reaper's cue), network and hosts file."""
        s = self.settings
        deadline = int(time.time() + (gate or 0) + request.timeout + DEADLINE_SLACK)
        return container_config(
            self.api, s, request, name=name, helper=helper, net=net, gate=gate, frame=frame,
            labels=container_labels(deadline, run=self.run_id, hook=request.label),
            # "none" unless the user's own settings say bridge (our own bridge) or
            # allowlist (an internal network of its own whose only way out is the proxy).
            network_mode=net.network_id
            if net
            else (self._network() if s.network == "bridge" else "none"),
            hosts=self._hosts_file() if net is None and s.network == "none" else None,
        )  # fmt: skip
