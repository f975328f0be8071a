"""The fake cluster's one node: the kubelet's part, with the local Docker Engine as the
container runtime. Each pod becomes one real container, translated from the pod spec:

- `command`/`args` replace the image's ENTRYPOINT/CMD, with the kubelet's `$(VAR)`
  expansion (`$$` is a `$`, an unknown `$(X)` stays as written); env values expand
  over the variables before them. No init process (`init=False`), the user exactly as
  the security context says (`runAsUser:runAsGroup`, supplementalGroups, fsGroup);
- `readOnlyRootFilesystem`, capabilities (drop/add), `allowPrivilegeEscalation: false`
  as no-new-privileges, seccomp `RuntimeDefault` as the engine's default profile
  (`Unconfined` as unconfined), cpu and memory limits (memory+swap = memory: the kubelet
  runs without swap);
- volumes: an emptyDir of medium Memory is a tmpfs of `sizeLimit` (else the memory
  limit), mode 1777 as the kubelet's tmpfs root, exec allowed; a disk emptyDir a host
  folder, 0777; hostPath a bind (type Directory must exist, else the pod waits in
  ContainerCreating); a persistentVolumeClaim the host folder `claims[claimName]` bound
  read-only (ReadOnlyMany), a pod naming an unknown claim stays unscheduled; `subPath`;
  `readOnly`. `recursiveReadOnly: Enabled` needs engine API 1.44 (ReadOnlyForceRecursive);
  an older engine (20.10 here) gives a plain read-only bind instead of refusing the pod;
- the network: `none`. That is the effect of deploy/kubernetes/'s deny-all-egress
  NetworkPolicy for a hook (a real pod still has an interface, and ingress);
- `stdin`/`stdinOnce`/`tty` as the engine's own StdinOnce: the container's stdin closes
  for good when the first attach ends;
- not held: ephemeral-storage limits, the pids limit (a node setting), the DNS config.

The pod's status follows the kubelet: Pending (scheduled, `ContainerCreating`) →
Running → Succeeded/Failed with `state.terminated` (exitCode; reason `Completed`,
`Error` or `OOMKilled`); an image the engine lacks leaves it Pending with
`ErrImageNeverPull`/`ErrImagePull` (nothing is ever pulled); `activeDeadlineSeconds`,
counted from `startTime`, kills it: Failed, reason `DeadlineExceeded`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from kubernetes.utils.quantity import parse_quantity

from sandboxrun._backends.labels import owner_gone, owner_labels

from .store import Pod, Store, now_rfc3339

LABEL = "sandboxrun.kubefake"  # on every container of every fake cluster
CLUSTER = "sandboxrun.kubefake.cluster"  # the fixture's id
NODE = "kubefake-node"


class NotReady(Exception):
    """The pod cannot start (yet): a waiting `reason` and `message` for its status."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


class Unschedulable(NotReady):
    pass


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """The kubelet's expansion (k8s `third_party/forked/golang/expansion`): `$(NAME)` is
    the variable's value, or stays as written when undefined; `$$` is `$`; a `$` before
    anything else, or an unclosed `$(`, stays."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2 : end]
                    value = lookup(name)
                    out.append(f"$({name})" if value is None else value)
                    i = end + 1
                    continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


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


# -- the pod spec as a container ----------------------------------------------------------


def container_config(pod: Pod, image: Mapping[str, Any], rt: Runtime) -> dict[str, Any]:
    """`docker create`'s arguments for the pod's (first) container."""
    meta, spec = pod["metadata"], pod["spec"]
    c = spec["containers"][0]
    pod_sc, sc = spec.get("securityContext") or {}, c.get("securityContext") or {}
    env = _environment(pod, c, rt)
    lookup = env.get
    command = [expand(a, lookup) for a in c.get("command") or []] or None
    args = [expand(a, lookup) for a in c.get("args") or []] or None
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
    if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")):
        _check_non_root(uid, image["Config"].get("User") or "", meta["name"], c["name"])
    user = None if uid is None else f"{uid}:{gid}" if gid is not None else str(uid)
    groups = [str(g) for g in pod_sc.get("supplementalGroups") or []]
    if "fsGroup" in pod_sc:
        groups.append(str(pod_sc["fsGroup"]))
    limits = (c.get("resources") or {}).get("limits") or {}
    memory = int(parse_quantity(limits["memory"])) if "memory" in limits else None
    caps = sc.get("capabilities") or {}
    security_opt = []
    if sc.get("allowPrivilegeEscalation") is False:
        security_opt.append("no-new-privileges")
    seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
    if seccomp == "Unconfined":
        security_opt.append("seccomp=unconfined")
    tmpfs, mounts = _mounts(pod, c, rt, memory)
    runtime = spec.get("runtimeClassName")
    if runtime and runtime not in rt.runtime_classes:
        raise NotReady("ContainerCreating", "failed to get sandbox runtime: no runtime for"
                       f' "{runtime}" is configured')  # fmt: skip
    host_config = rt.client.api.create_host_config(
        network_mode="none", init=False, read_only=bool(sc.get("readOnlyRootFilesystem")),
        privileged=bool(sc.get("privileged")),
        cap_drop=caps.get("drop") or None, cap_add=caps.get("add") or None,
        security_opt=security_opt or None, group_add=groups or None,
        mem_limit=memory, memswap_limit=memory,
        nano_cpus=int(parse_quantity(limits["cpu"]) * 10**9) if "cpu" in limits else None,
        tmpfs=tmpfs or None, mounts=mounts or None,
        log_config={"Type": "none", "Config": {}},
        runtime=rt.runtime_classes[runtime] if runtime else rt.node_runtime,
    )  # fmt: skip
    return {
        "image": c["image"], "entrypoint": command, "command": args,
        "working_dir": c.get("workingDir") or None, "user": user,
        "environment": [f"{k}={v}" for k, v in env.items()], "hostname": meta["name"][:63],
        "stdin_open": bool(c.get("stdin")), "stdin_once": bool(c.get("stdinOnce")),
        "tty": bool(c.get("tty")), "detach": True, "host_config": host_config,
        "name": f"k8s_{c['name']}_{meta['name']}_{meta['namespace']}_{meta['uid']}_0",
        "labels": {
            LABEL: "1", CLUSTER: rt.cluster_id, **owner_labels(), "io.kubernetes.pod.name": meta["name"],
            "io.kubernetes.pod.namespace": meta["namespace"], "io.kubernetes.pod.uid": meta["uid"],
            "io.kubernetes.container.name": c["name"],
        },
    }  # fmt: skip


def _environment(pod: Pod, c: dict[str, Any], rt: Runtime) -> dict[str, str]:
    """The kubelet's environment: the API server's service variables, then the
    container's `env` in order, each value expanded over what came before it."""
    env: dict[str, str] = {
        "KUBERNETES_SERVICE_HOST": rt.api_host, "KUBERNETES_SERVICE_PORT": str(rt.api_port),
        "KUBERNETES_SERVICE_PORT_HTTPS": str(rt.api_port),
    }  # fmt: skip
    for var in c.get("env") or []:
        if "valueFrom" in var:
            raise NotReady("CreateContainerConfigError", "kubefake: env valueFrom is not supported")
        env[var["name"]] = expand(var.get("value", ""), env.get)
    return env


def _check_non_root(uid: int | None, image_user: str, pod: str, container: str) -> None:
    user = str(uid) if uid is not None else image_user.split(":")[0]
    if user in ("", "0", "root"):
        raise NotReady("CreateContainerConfigError", "container has runAsNonRoot and image will"
                       f" run as root (pod: \"{pod}\", container: {container})")  # fmt: skip
    if not user.isdigit():
        raise NotReady("CreateContainerConfigError", f"container has runAsNonRoot and image has"
                       f" non-numeric user ({user}), cannot verify user is non-root"
                       f' (pod: "{pod}", container: {container})')  # fmt: skip


def _mounts(pod: Pod, c: dict[str, Any], rt: Runtime,
            memory: int | None) -> tuple[dict[str, str], list[dict[str, Any]]]:  # fmt: skip
    volumes = {v["name"]: v for v in pod["spec"].get("volumes") or []}
    tmpfs: dict[str, str] = {}
    mounts: list[dict[str, Any]] = []
    for m in c.get("volumeMounts") or []:
        v, target, sub = volumes[m["name"]], m["mountPath"], m.get("subPath", "")
        read_only = bool(m.get("readOnly"))
        if "emptyDir" in v and v["emptyDir"].get("medium") == "Memory":
            if sub:
                raise NotReady(
                    "CreateContainerConfigError", "kubefake: subPath on a memory emptyDir"
                )
            size = v["emptyDir"].get("sizeLimit")
            size_bytes = int(parse_quantity(size)) if size else memory
            options = ["ro" if read_only else "rw", "exec", "nosuid", "nodev", "mode=1777"]
            tmpfs[target] = ",".join(options + ([f"size={size_bytes}"] if size_bytes else []))
            continue
        if "emptyDir" in v:
            source = rt.scratch / pod["metadata"]["uid"] / m["name"]
            source.mkdir(parents=True, exist_ok=True)
            source.chmod(0o777)
        elif "hostPath" in v:
            source = Path(v["hostPath"]["path"])
            kind = v["hostPath"].get("type", "")
            if kind == "DirectoryOrCreate":
                source.mkdir(parents=True, exist_ok=True)
            elif kind == "Directory" and not source.is_dir():
                raise NotReady("ContainerCreating", f'MountVolume.SetUp failed for volume "{m["name"]}"'
                               f" : hostPath type check failed: {source} is not a directory")  # fmt: skip
        elif "persistentVolumeClaim" in v:
            source = Path(rt.claims[v["persistentVolumeClaim"]["claimName"]])
            read_only = True  # ReadOnlyMany
        else:
            raise NotReady(
                "ContainerCreating", f"kubefake: volume type of {m['name']!r} not supported"
            )
        if sub:
            source = source / sub
            if not source.exists():
                if read_only:
                    raise NotReady("CreateContainerConfigError", f"failed to prepare subPath for"
                                   f" volumeMount \"{m['name']}\" of container \"{c['name']}\"")  # fmt: skip
                source.mkdir(parents=True)
                os.chmod(source, 0o777)
        mount: dict[str, Any] = {"Type": "bind", "Source": str(source), "Target": target,
                                 "ReadOnly": read_only}  # fmt: skip
        if read_only and m.get("recursiveReadOnly") == "Enabled" and rt.recursive_ro:
            mount["BindOptions"] = {"ReadOnlyForceRecursive": True}
        mounts.append(mount)
    return tmpfs, mounts


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
