"""The fake cluster's one node: the kubelet's part, with the local Docker Engine as the
container runtime. Each pod becomes one real container (`podspec` translates the spec).

The pod's status follows the kubelet: Pending (scheduled, `ContainerCreating`) →
Running → Succeeded/Failed with `state.terminated` (exitCode; reason `Completed`,
`Error` or `OOMKilled`); an image the engine lacks leaves it Pending with
`ErrImageNeverPull`/`ErrImagePull` (nothing is ever pulled); `activeDeadlineSeconds`,
counted from `startTime`, kills it: Failed, reason `DeadlineExceeded`.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions

from sandboxrun._backends.labels import owner_gone

from .podspec import CLUSTER, LABEL, NotReady, Unschedulable, container_config
from .store import Pod, Store, now_rfc3339

NODE = "kubefake-node"


@dataclass
class Runtime:
    store: Store
    client: docker.DockerClient
    cluster_id: str
    scratch: Path  # host folders of disk emptyDirs
    claims: dict[str, str] = field(default_factory=dict)
    runtime_classes: dict[str, str] = field(default_factory=dict)  # name → engine runtime
    node_runtime: str | None = None  # the node's default handler (e.g. runsc), if not runc
    api_host: str = "127.0.0.1"
    api_port: int = 0
    failures: list[str] = field(default_factory=list)  # tracebacks of the fake's own bugs
    _runs: dict[str, PodRun] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        version = tuple(int(p) for p in self.client.api.api_version.split("."))
        self.recursive_ro = version >= (1, 44)
        self.store.on_created = self.started
        self.store.on_terminating = self.terminating
        self.store.on_removed = self.removed

    def started(self, pod: Pod) -> None:
        run = PodRun(self, pod)
        with self._lock:
            self._runs[run.uid] = run
        threading.Thread(target=run.run, name=f"kubelet-{run.name}", daemon=True).start()

    def terminating(self, pod: Pod) -> None:
        run = self._runs.get(pod["metadata"]["uid"])
        if run is not None:
            grace = int(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
            threading.Thread(target=run.stop, args=(grace,), daemon=True).start()

    def removed(self, pod: Pod) -> None:
        with self._lock:
            run = self._runs.pop(pod["metadata"]["uid"], None)
        if run is not None:
            run.remove()

    def container_id(self, uid: str) -> str | None:
        run = self._runs.get(uid)
        return run.cid if run is not None else None

    def containers(self) -> list[Any]:
        """Every container of this cluster, running or not (docker SDK `Container`s)."""
        found = []
        for ident in self._container_ids():
            with contextlib.suppress(docker.errors.NotFound):
                found.append(self.client.containers.get(ident))
        return found

    def _container_ids(self) -> list[str]:
        mine = {"label": f"{CLUSTER}={self.cluster_id}"}
        return [c["Id"] for c in self.client.api.containers(all=True, filters=mine)]

    def sweep(self) -> None:
        """Remove the containers of fake clusters whose test process is gone (a killed
        run never reached its teardown); another live run's stay."""
        for c in self.client.api.containers(all=True, filters={"label": f"{LABEL}=1"}):
            if owner_gone(c.get("Labels") or {}):
                with contextlib.suppress(docker.errors.APIError):
                    self.client.api.remove_container(c["Id"], force=True)

    def close(self) -> None:
        """Remove every container of this cluster (never raises)."""
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        for run in runs:
            run.deleted.set()
        for ident in self._container_ids():
            with contextlib.suppress(docker.errors.APIError):
                self.client.api.remove_container(ident, force=True)


class PodRun:
    """One pod on the node: start its container, follow it, report its status."""

    def __init__(self, runtime: Runtime, pod: Pod) -> None:
        self.rt, self.pod = runtime, pod
        meta = pod["metadata"]
        self.ns, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        self.spec = pod["spec"]
        [self.container] = self.spec["containers"][:1] or [{}]
        self.cid: str | None = None
        self.deleted = threading.Event()
        self.started_at = 0.0

    # -- lifecycle --------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:
            if self._gone():
                return  # deleted while starting: the engine or the store lost it first
            # A bug of the fake: shown in the pod, kept for the fixture to fail the test.
            self.rt.failures.append(traceback.format_exc())
            message = f"kubefake: {exc!r}"
            self._status(lambda p: p["status"].update(message=message))

    def _gone(self) -> bool:
        with self.rt.store.lock:
            pod = self.rt.store.pods.get((self.ns, self.name))
        return self.deleted.is_set() or pod is None or pod["metadata"]["uid"] != self.uid

    def _run(self) -> None:
        try:
            self._schedule()
        except Unschedulable as exc:
            condition = _condition("PodScheduled", "False", "Unschedulable", exc.message)
            self._status(lambda p: p["status"].update(conditions=[condition]))
            return
        self.started_at = time.time()
        self._status(self._kubelet_saw)
        while True:
            try:
                self._create()
                break
            except NotReady as exc:
                self._status(lambda p, e=exc: _set_container(p, self.container, {"waiting": {
                    "reason": e.reason, "message": e.message}}))  # fmt: skip
                if self._sleep(1.0):
                    return
        if self.deleted.is_set():
            self.remove()
            return
        self._start()

    def _schedule(self) -> None:
        for v in self.spec.get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim is not None and claim not in self.rt.claims:
                raise Unschedulable("Unschedulable", f'persistentvolumeclaim "{claim}" not found')
        self.rt.store.update(self.ns, self.name, lambda p: _bind(p, self.uid))

    def _kubelet_saw(self, pod: Pod) -> None:
        pod["status"].update(
            phase="Pending", hostIP="127.0.0.1", hostIPs=[{"ip": "127.0.0.1"}],
            startTime=now_rfc3339(self.started_at),
            conditions=[_condition("PodScheduled", "True"), _condition("Initialized", "True"),
                        _condition("Ready", "False", "ContainersNotReady"),
                        _condition("ContainersReady", "False", "ContainersNotReady")],
        )  # fmt: skip
        _set_container(pod, self.container, {"waiting": {"reason": "ContainerCreating"}})

    def deadline(self) -> float | None:
        """When `activeDeadlineSeconds` ends the pod, counted from its startTime; read
        from the stored pod each time, as an update may shorten it (a claimed warm pod)."""
        with self.rt.store.lock:
            pod = self.rt.store.pods.get((self.ns, self.name))
            seconds = pod["spec"].get("activeDeadlineSeconds") if pod else None
        return None if seconds is None else self.started_at + int(seconds)

    def _sleep(self, seconds: float) -> bool:
        """Wait; True when the pod is gone or its deadline passed (then it is Failed)."""
        deadline = self.deadline()
        if deadline is not None and time.time() + seconds >= deadline:
            self.deleted.wait(max(0.0, deadline - time.time()))
            if not self.deleted.is_set():
                self._status(_deadline_exceeded)
            return True
        return self.deleted.wait(seconds)

    def _create(self) -> None:
        image = self.container["image"]
        try:
            info = self.rt.client.api.inspect_image(image)
        except docker.errors.ImageNotFound:
            if self.container.get("imagePullPolicy") == "Never":
                raise NotReady("ErrImageNeverPull", f'Container image "{image}" is not'
                               " present with pull policy of Never") from None  # fmt: skip
            raise NotReady("ErrImagePull", f'failed to pull and unpack image "{image}":'
                           " kubefake pulls no images (not present on the node)") from None  # fmt: skip
        config = container_config(self.pod, info, self.rt)
        if self.deleted.is_set():
            return
        api = self.rt.client.api
        name, stdin_once = config.pop("name"), config.pop("stdin_once")
        body = api.create_container_config(**config)
        body["StdinOnce"] = stdin_once  # the SDK sets it only for a non-detached create
        self.cid = api.create_container_from_config(body, name=name)["Id"]

    def _start(self) -> None:
        assert self.cid is not None
        api = self.rt.client.api
        try:
            api.start(self.cid)
        except docker.errors.APIError as exc:
            message = str(exc.explanation or exc)
            self._status(lambda p: _finish(p, self.container, {
                "exitCode": 128, "reason": "StartError", "message": message,
                "containerID": f"docker://{self.cid}"}))  # fmt: skip
            return
        state = api.inspect_container(self.cid)["State"]
        self._status(lambda p: _running(p, self.container, self.cid, state["StartedAt"]))
        while not self.deleted.is_set():
            deadline = self.deadline()
            left = None if deadline is None else deadline - time.time()
            if left is not None and left <= 0:
                with contextlib.suppress(docker.errors.APIError):
                    api.kill(self.cid)
                with contextlib.suppress(
                    docker.errors.APIError, requests.exceptions.RequestException
                ):
                    api.wait(self.cid, timeout=30)
                self._status(_both(_deadline_exceeded, self._terminated()))
                return
            try:
                api.wait(self.cid, timeout=min(left or 1.0, 1.0))  # 1 s: a deadline may move
                break
            except requests.exceptions.RequestException:
                continue  # not yet: look at the deadline again
            except docker.errors.NotFound:
                return  # removed: the pod is gone
        if not self.deleted.is_set():
            self._status(self._terminated())

    def _terminated(self) -> Callable[[Pod], None]:
        """The container's end, read from the engine (outside the store's lock)."""
        try:
            s = self.rt.client.api.inspect_container(self.cid)["State"]
        except docker.errors.NotFound:
            return lambda pod: None
        code = int(s["ExitCode"])
        reason = "OOMKilled" if s.get("OOMKilled") else "Completed" if code == 0 else "Error"
        terminated = {
            "exitCode": code, "reason": reason, "startedAt": _rfc(s["StartedAt"]),
            "finishedAt": _rfc(s["FinishedAt"]), "containerID": f"docker://{self.cid}",
        }  # fmt: skip
        return lambda pod: _finish(pod, self.container, terminated)

    def stop(self, grace: int) -> None:
        """A graceful delete: SIGTERM, SIGKILL after `grace`, then the final delete."""
        if self.cid is not None:
            with contextlib.suppress(docker.errors.APIError):
                self.rt.client.api.stop(self.cid, timeout=grace)
            self.remove()
        self.rt.store.remove(self.ns, self.name, self.uid)

    def remove(self) -> None:
        self.deleted.set()
        if self.cid is not None:
            with contextlib.suppress(docker.errors.APIError):
                self.rt.client.api.remove_container(self.cid, force=True)

    def _status(self, change: Callable[[Pod], Any]) -> None:
        self.rt.store.set_status(self.ns, self.name, self.uid, change)


# -- status shapes ------------------------------------------------------------------------


def _bind(pod: Pod, uid: str) -> Pod:
    if pod["metadata"]["uid"] == uid:
        pod["spec"]["nodeName"] = NODE
    return pod


def _condition(kind: str, status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    c: dict[str, Any] = {"type": kind, "status": status, "lastProbeTime": None,
                         "lastTransitionTime": now_rfc3339()}  # fmt: skip
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _set_container(pod: Pod, c: dict[str, Any], state: dict[str, Any], **extra: Any) -> None:
    status = {"name": c["name"], "image": c["image"], "imageID": "", "ready": False,
              "started": False, "restartCount": 0, "lastState": {}, "state": state, **extra}  # fmt: skip
    pod["status"]["containerStatuses"] = [status]


def _running(pod: Pod, c: dict[str, Any], cid: str | None, started: str) -> None:
    _set_container(pod, c, {"running": {"startedAt": _rfc(started)}}, ready=True, started=True,
                   containerID=f"docker://{cid}")  # fmt: skip
    pod["status"]["phase"] = "Running"
    pod["status"]["conditions"] = [
        _condition(t, "True") for t in ("PodScheduled", "Initialized", "Ready", "ContainersReady")
    ]


def _finish(pod: Pod, c: dict[str, Any], terminated: dict[str, Any]) -> None:
    _set_container(pod, c, {"terminated": terminated},
                   containerID=terminated.get("containerID", ""))  # fmt: skip
    status = pod["status"]
    if status.get("reason") != "DeadlineExceeded":
        status["phase"] = "Succeeded" if terminated["exitCode"] == 0 else "Failed"
    status["conditions"] = [
        _condition("PodScheduled", "True"), _condition("Initialized", "True"),
        _condition("Ready", "False", "PodCompleted"), _condition("ContainersReady", "False", "PodCompleted"),
    ]  # fmt: skip


def _both(first: Callable[[Pod], None], then: Callable[[Pod], None]) -> Callable[[Pod], None]:
    """One status update of two changes (a watch never sees the half)."""
    return lambda pod: (first(pod), then(pod))[-1]


def _deadline_exceeded(pod: Pod) -> None:
    pod["status"].update(phase="Failed", reason="DeadlineExceeded",
                         message="Pod was active on the node longer than the specified deadline")  # fmt: skip


def _rfc(docker_time: str) -> str:
    return docker_time.split(".")[0].rstrip("Z") + "Z"
