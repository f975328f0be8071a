"""KubernetesBackend: one fresh, hardened Pod per hook invocation, never reused.

The life of one run, mirroring the Docker backend (`docker/backend.py`; what both do
around their runs is `_backends/lifecycle.py`):

    create the pod (labelled; its helper holds the hook at its gate) -> watch it to
    Running -> attach (v5.channel.k8s.io) -> deliver the event, close stdin -> read
    output as it comes, bounded -> [deadline: delete the pod] -> streams end -> exit
    code from the pod's status (OOMKilled, DeadlineExceeded) -> answer -> delete it
    with grace 0 (always; in the background, see below)

A pod's process starts with its container, before anyone can attach: so every pod runs
the image's helper with its gate (`--gate`): the hook waits until its event arrives on
stdin, then runs under the helper's Landlock list and deadline, as on Docker. The
backend cannot read image labels on a cluster, so it assumes the helper that
images/Dockerfile installs (`HELPER`); an image without it fails to start its
container, which is reported as the hook's start error (a sandbox failure: a block
under fail-closed), never as an allow.

The pod's `activeDeadlineSeconds` covers its start, its wait at the gate, the hook's
deadline and a grace: the cluster ends it even when sandboxrun is gone. Its labels let
the next `check()` of any sandboxrun sweep it (`lifecycle.sweep`).

Deletion is off the critical path: the result is returned while a small executor
deletes the pod; `close()` waits for it. A pod waiting for deletion stays in `_active`,
so `abort()` deletes it too.

The warm path (`warm=True`, `pool_size > 0`, `.._backends/pool.py`) starts gated pods
ahead of time; a run claims one atomically (`lifecycle.claim`), attaches and delivers
instead of creating; the reading, limits and reporting are the same `Streams`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ..._errors import EngineError, SandboxrunError
from ..._log import logger
from ..._sandbox.mounts import home_layout
from ..._settings import Settings
from ..._types import ExecRequest, ExecResult
from ..base import cancellable
from ..helper import Helper, start_error
from ..helper import command as helper_command
from ..image_tools import ImageTools
from ..lifecycle import GATE_MARGIN, STREAM_GRACE, Lifecycle, Pooled, never_pooled, timed_out
from ..pool import pool_key
from .attach import Streams, open_attach
from .client import Cluster, create_pod, delete_pod, retry_api
from .lifecycle import Ended, claim, claimed_by_other, ended, sweep, wait_ended, wait_running
from .pod import pod_manifest

# The helper images/Dockerfile installs (labels sandboxrun.seccomp-helper, protocol 2,
# gate): a cluster cannot be asked for an image's labels, so this is assumed.
HELPER = Helper("/usr/local/bin/sandboxrun-seccomp", protocol=2, gate=True)
# Seconds a new pod may take to run (scheduling, pulling the image, starting): past it
# the run fails; the gate waits as long, then the hook would start... never: no event.
START_LIMIT = 120.0
# RuntimeClass names that mean gVisor, which has no Landlock (`helper.command`).
GVISOR = ("gvisor", "runsc")


class KubernetesBackend(Lifecycle):
    """Runs each `ExecRequest` in its own pod of `kube_namespace`, then deletes it.

    `warm=True` (a long-lived owner: `serve`, a platform's process) keeps pools of gated
    pods (settings `pool_size`, `pool_total`, `pool_idle`); `close()` deletes them."""

    claim_tries = 3  # pooled pods tried before going cold (a claim can lose a race)

    def __init__(self, settings: Settings, warm: bool = False, cluster: Any = None) -> None:
        super().__init__(settings, warm)
        self._cluster: Cluster | None = cluster  # loaded on first use: building never fails
        self._seen: dict[str, str] = {}  # a pooled pod's resourceVersion when it ran
        self._checked = False

    @property
    def cluster(self) -> Cluster:
        with self._lock:
            if self._cluster is None:
                self._cluster = Cluster(self.settings)
            return self._cluster

    @property
    def namespace(self) -> str:
        return self.settings.kube_namespace

    # -- preflight ---------------------------------------------------------------

    def check(self) -> None:
        """Refuse to start unless the API answers and lets us list pods in the namespace,
        and the namespace exists; the first success also sweeps stale pods."""
        if self._checked:
            return
        self.ping()
        c = self.cluster
        with c.errors():
            try:  # a namespaced Role may not read namespaces: then the create will tell
                retry_api(c.core.read_namespace)(self.namespace)
            except Exception as exc:
                if getattr(exc, "status", None) != 403:
                    raise
        self._checked = True
        self._in_background(self._sweep)

    def ping(self) -> None:
        """Raise unless the API answers now: `serve`'s readiness (`check` is cheap once
        it passed, so it misses a cluster that went away since)."""
        c = self.cluster
        with c.errors():
            retry_api(c.core.list_namespaced_pod)(self.namespace, limit=1)

    def _sweep(self) -> None:
        c = self.cluster
        try:
            with c.errors():
                sweep(c.core, self.namespace)
        except SandboxrunError as exc:
            logger.warning("stale-pod sweep failed: {}", exc)

    def image_tools(self) -> ImageTools | None:
        """Unknown on a cluster: the image's listing would need a probe pod per image."""
        return None

    # -- one run -----------------------------------------------------------------

    def _manifest(self, request: ExecRequest, name: str, gate: float) -> dict[str, Any]:
        """The pod for `request`, its hook held at the helper's gate up to `gate` s."""
        s = self.settings
        layout = home_layout(request.mounts)
        private = [path for path, _ in request.private_dirs]
        command = helper_command(
            HELPER, request.argv, request.timeout, [*layout.writable, *private],
            "runsc" if s.runtime_class in GVISOR else None,
            landlock_optional=s.landlock == "optional", gate=gate,
        )  # fmt: skip
        return pod_manifest(
            request, s, name=name, volumes=s.kube_volumes, namespace=self.namespace,
            run=self.run_id, now=time.time(), command=command, wait=gate,
        )  # fmt: skip

    def _run_cold(self, request: ExecRequest) -> ExecResult:
        name = self._name()
        created = time.monotonic()
        c = self.cluster
        manifest = self._manifest(request, name, START_LIMIT)
        with c.errors(self.settings.image):
            create_pod(c.core, self.namespace, manifest)
            with self._lock:
                self._active.add(name)
            try:
                with cancellable(request, lambda: self._remove(name)):
                    pod = wait_running(
                        c.core, self.namespace, name, self.settings.image, START_LIMIT
                    )
                    early = ended(pod)
                    if early is not None:  # it ended before its event: nothing was delivered
                        return _not_started(early, created)
                    return self._attach_and_run(name, request, created, warm=False)
            finally:
                self._in_background(self._remove, name)

    def _attach(self, name: str) -> Any:
        """The attach websocket; `_NotAttached` when the pod cannot be reached (it may
        have ended): nothing was delivered, the hook has not run."""
        c = self.cluster
        try:
            return open_attach(c.fresh_core(), self.namespace, name, c.server)
        except SandboxrunError:
            raise
        except Exception as exc:
            raise _NotAttached(str(exc)) from exc

    def _attach_and_run(
        self, name: str, request: ExecRequest, created: float, warm: bool
    ) -> ExecResult:
        c = self.cluster
        try:
            ws = self._attach(name)
        except _NotAttached as exc:
            if warm:
                raise
            # It may have ended meanwhile: then that is the answer.
            found = wait_ended(c.core, self.namespace, name, 1.0)
            if found is not None:
                return _not_started(found, created)
            raise EngineError(
                f"could not attach to pod {name} through {c.server}: {str(exc)[:200]}"
            ) from None
        streams = Streams(ws, request.stdin, request.timeout, self.settings,
                          kill=lambda: self._kill(name))  # fmt: skip
        streams.run()
        duration_ms = int((time.monotonic() - created) * 1000)
        code = streams.exit_code()
        found = wait_ended(c.core, self.namespace, name, STREAM_GRACE)
        if code is None and found is not None:
            code = found.exit_code
        if code is None:
            if not streams.killed:
                raise EngineError(f"pod {name} ended without an exit status we could read")
            code = 137  # we deleted it with grace 0: the kubelet SIGKILLs it
        oom = found is not None and found.reason == "OOMKilled"
        deadline = found is not None and found.deadline_exceeded
        return ExecResult(
            exit_code=code,
            stdout=bytes(streams.stdout),
            stderr=bytes(streams.stderr),
            duration_ms=duration_ms,
            timed_out=timed_out(
                streams.timed_out, streams.deadline_fired, code, oom, streams.stderr
            )
            or deadline,
            start_error=start_error(code, streams.stderr),
            oom_killed=oom,
            output_truncated=streams.truncated,
            killed_reason=streams.killed_reason,
            warm=warm,
        )

    def _kill(self, name: str) -> bool:
        c = self.cluster
        return delete_pod(c.core, self.namespace, name)

    def _remove(self, name: str) -> None:
        try:
            delete_pod(self.cluster.core, self.namespace, name)
        except Exception as exc:  # cleanup never raises; the sweep and the deadline remain
            logger.warning("could not delete pod {}: {}", name, exc)
        with self._lock:
            self._active.discard(name)
            self._seen.pop(name, None)

    # -- the warm path -------------------------------------------------------------

    def _pooled(self, request: ExecRequest) -> Pooled | None:
        """The pool key of `request`, how to make its pods, and the pool; None when it
        goes cold (not warm; what pod.py refuses anyway)."""
        if not self.warm or never_pooled(request):
            return None
        base = dataclasses.replace(request, stdin=b"", cancel=None)  # the pool keeps no event
        gate = self.settings.pool_idle + GATE_MARGIN

        def make() -> dict[str, Any]:
            return self._manifest(base, self._name(), gate)

        # What differs per pod (its name, labels with their deadline) is in metadata.
        key = pool_key({k: v for k, v in make().items() if k != "metadata"})
        return self._pool_of(key, make)

    def _launch(self, manifest: dict[str, Any]) -> str:
        """Create a pooled pod and wait until it runs; it waits at its gate."""
        c = self.cluster
        name = str(manifest["metadata"]["name"])
        with c.errors(self.settings.image):
            create_pod(c.core, self.namespace, manifest)
            try:
                pod = wait_running(c.core, self.namespace, name, self.settings.image,
                                   START_LIMIT)  # fmt: skip
                if ended(pod) is not None:
                    raise EngineError(f"pooled pod {name} ended before its event")
            except BaseException:
                self._remove(name)
                raise
        with self._lock:
            self._seen[name] = str(pod.metadata.resource_version)
        return name

    def _run_warm(self, request: ExecRequest) -> ExecResult | None:
        """Run in a pooled pod; None: none could be claimed in time, go cold."""
        pooled = self._pooled(request)
        if pooled is None:
            return None
        key, make, pool = pooled
        pool.want(key, make)
        c = self.cluster
        for _ in range(self.claim_tries):
            name = pool.take(key, wait=self.claim_wait)
            if name is None:
                return None
            with self._lock:
                seen = self._seen.pop(name, "")
            try:
                with c.errors():
                    if claim(c.core, self.namespace, name, seen, self.run_id):
                        break
                    logger.info("pooled pod {} changed before our claim: next one", name)
                    theirs = claimed_by_other(c.core, self.namespace, name, self.run_id)
            except SandboxrunError:
                pool.retire(name)  # out of the pool, never handed out: deleted
                raise
            if not theirs:  # in doubt (ended, changed): never handed out, deleted
                pool.retire(name)
            pool.want(key, make)
        else:
            return None
        with self._lock:
            self._active.add(name)
        try:
            with cancellable(request, lambda: self._remove(name)), c.errors(self.settings.image):
                return self._attach_and_run(name, request, time.monotonic(), warm=True)
        except _NotAttached as exc:  # nothing delivered: run cold
            logger.info("pooled pod {} unreachable: {}", name, exc)
            return None
        finally:
            pool.retire(name)  # single use: deleted, off the answer's path
            pool.want(key, make)


class _NotAttached(Exception):
    """The attach failed before anything was delivered."""


def _not_started(found: Ended, created: float) -> ExecResult:
    """A pod that ended before its hook got its event: the sandbox's failure, never the
    hook's answer (an image without the helper ends here: its container cannot start)."""
    why = f"{found.reason}: {found.message}".strip(": ") or "no reason given"
    return ExecResult(
        exit_code=found.exit_code if found.exit_code is not None else 128,
        stdout=b"",
        stderr=b"",
        duration_ms=int((time.monotonic() - created) * 1000),
        start_error=f"the hook's pod ended before its event was delivered ({why[:200]})",
        timed_out=found.deadline_exceeded,
    )
