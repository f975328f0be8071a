"""A pod spec as a Docker container, as the kubelet and its container runtime would run
it (`runtime` creates it). Translated faithfully where the engine can say the same:

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
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubernetes.utils.quantity import parse_quantity

from sandboxrun._backends.labels import owner_labels

from .store import Pod

if TYPE_CHECKING:
    from .runtime import Runtime

LABEL = "sandboxrun.kubefake"  # on every container of every fake cluster
CLUSTER = "sandboxrun.kubefake.cluster"  # the fixture's id


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
