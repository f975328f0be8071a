"""The hook pod: one Pod per invocation, hardened, as a plain dict in the API's JSON shape.

A pure function of the request, the settings and where the workspace comes from: no
client import (the `kubernetes` package is an optional extra), no API call, so it is
tested field by field and against the API's strict schemas offline.

It keeps the Docker backend's sandbox (`docker/spec.py`) where Kubernetes can
say the same thing: the same environment (nothing of the host's), the same user
rules (never root), a read-only root, no capabilities, no privilege escalation, seccomp
`RuntimeDefault`, the same CPU and memory limits (requests equal to limits: the pod is
Guaranteed, never the first evicted), a memory-backed /tmp and $HOME of `tmpfs_size`.
What a pod spec cannot say, and where it is held instead:

- the process limit (`pids`): the kubelet's `podPidsLimit`, per node;
- `nofile` and no core dumps: the container runtime's defaults;
- the network: no interface can be left out of a pod; the deny-all-egress NetworkPolicy
  of `deploy/kubernetes/` (selected by `MANAGED`) cuts it, and DNS points at loopback so
  a lookup fails at once. The API server's address still shows in the environment
  (`KUBERNETES_SERVICE_*`, set by the kubelet whatever `enableServiceLinks` says); no
  token is mounted and the policy keeps the hook from reaching it;
- the container log: the runtime writes a pod's stdout to the node's disk even while we
  are attached, so the pod's ephemeral storage is bounded (`EPHEMERAL`).

The container's command is the hook's own unless the caller gives `command`: the
backend gives the image's init helper's command line (Landlock, its own deadline, the
gate that holds the hook until its event arrives), and `wait`, the seconds the pod may
spend before that gate opens (starting, or idle in a pool), which the cluster's own
deadline then allows for too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from ..._errors import ConfigError
from ..._sandbox.mounts import home_layout, under
from ..._sandbox.state import NOBODY, hook_ids
from ..._settings import Settings, WorkspaceVolume, parse_size
from ..._types import ExecRequest
from ..environment import hook_environment
from ..labels import HOOK, container_labels
from ..lifecycle import DEADLINE_SLACK

# Seconds past the hook's own deadline before the cluster kills the pod itself
# (`activeDeadlineSeconds`): the backstop when sandboxrun is gone. The same slack as
# the label deadline's, on both backends (20 s: twice the stream grace).
GRACE = int(DEADLINE_SLACK)
CONTAINER = "hook"
# What the container log may take on the node's disk: what the hook may print before
# it is killed (`output_limit`, stdout and stderr alike), plus room for the runtime.
EPHEMERAL_SLACK = 16 << 20
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def pod_manifest(
    request: ExecRequest,
    settings: Settings,
    *,
    name: str,
    volumes: Sequence[WorkspaceVolume] = (),
    namespace: str | None = None,
    run: str = "",
    now: float,
    command: Sequence[str] | None = None,
    wait: float = 0.0,
) -> dict[str, Any]:
    """The Pod that runs `request` once. Every host path the request mounts must lie
    in one of `volumes` (a hook must see what the agent gave it, or not run: a
    `ConfigError` names the path); what this backend cannot give yet is refused too."""
    s = settings
    _refuse_unsupported(request, volumes)
    uid, gid = hook_ids(s.user) if s.user else (NOBODY, NOBODY)
    layout = home_layout(request.mounts)
    tmpfs = parse_size(s.tmpfs_size)
    memory = parse_size(s.memory)
    life = math.ceil(request.timeout + wait)  # the hook's deadline, counted from the pod's start
    scratch = {"/tmp": "tmp"}
    scratch |= {path: f"home-{i}" for i, path in enumerate(layout.tmpfs)}
    scratch |= {path: f"private-{i}" for i, (path, _) in enumerate(request.private_dirs)}
    mounts: list[dict[str, Any]] = [{"name": v, "mountPath": p} for p, v in scratch.items()]
    pod_volumes: list[dict[str, Any]] = [
        {"name": vol, "emptyDir": {"medium": "Memory", "sizeLimit": str(tmpfs)}}
        for vol in scratch.values()
    ]
    for i, ws in enumerate(volumes):
        mount: dict[str, Any] = {"name": f"workspace-{i}", "mountPath": ws.path, "readOnly": True,
                 "recursiveReadOnly": "Enabled"}  # fmt: skip
        if ws.sub_path:
            mount["subPath"] = ws.sub_path
        mounts.append(mount)
        pod_volumes.append({"name": f"workspace-{i}", **_source(ws)})
    resources = {
        "cpu": f"{math.ceil(s.cpus * 1000)}m",
        "memory": str(memory),
        "ephemeral-storage": str(s.output_limit + EPHEMERAL_SLACK),
    }
    labels = container_labels(int(now) + life + GRACE, run=run)
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {k: v if _LABEL_VALUE.fullmatch(v) else "" for k, v in labels.items()},
        # Annotations, not labels: a hook's name is a path or a command.
        "annotations": {HOOK: request.label[:200]} if request.label else {},
    }
    if namespace:
        metadata["namespace"] = namespace
    no_escalation = {
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": life + GRACE,
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "hostNetwork": False,
        "hostPID": False,
        "hostIPC": False,
        "shareProcessNamespace": False,
        # No resolver: with egress denied a lookup would wait for its timeout.
        "dnsPolicy": "None",
        "dnsConfig": {"nameservers": ["127.0.0.1"]},
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": uid,
            "runAsGroup": gid,
            "seccompProfile": {"type": "RuntimeDefault"},
            **({"supplementalGroups": list(s.groups)} if s.groups else {}),
        },
        "containers": [
            {
                "name": CONTAINER,
                "image": s.image,
                "imagePullPolicy": "IfNotPresent",
                # `command`, not `args`: the image's ENTRYPOINT must not stand between.
                "command": [_literal(a) for a in (request.argv if command is None else command)],
                "workingDir": request.workdir,
                "env": [
                    {"name": k, "value": _literal(v)}
                    for k, v in hook_environment(request.env, layout.home).items()
                ],
                "stdin": True,
                "stdinOnce": True,
                "tty": False,
                "securityContext": no_escalation,
                "resources": {"requests": resources, "limits": dict(resources)},
                "volumeMounts": mounts,
            }
        ],
        "volumes": pod_volumes,
    }
    if s.runtime_class:
        spec["runtimeClassName"] = s.runtime_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _literal(text: str) -> str:
    """`text` as the kubelet will pass it: it expands `$(NAME)` in a container's command
    and environment values, and `$$` is its escape for `$`."""
    return text.replace("$", "$$")


def _source(ws: WorkspaceVolume) -> dict[str, Any]:
    if ws.kind == "pvc":
        return {"persistentVolumeClaim": {"claimName": ws.source, "readOnly": True}}
    # Directory: an existing folder only; the kubelet never creates one for us.
    return {"hostPath": {"path": ws.source, "type": "Directory"}}


def _refuse_unsupported(request: ExecRequest, volumes: Sequence[WorkspaceVolume]) -> None:
    if (
        request.state or request.tmp or request.env_file
        or any(src for _, src in request.private_dirs)
    ):  # fmt: skip
        what = request.label or " ".join(request.argv[:1])
        raise ConfigError(
            "a hook's persistent state, a session's shared /tmp, CLAUDE_ENV_FILE and plugin"
            f" data folders are not supported on the Kubernetes backend yet ({what})"
        )
    if request.overlays:  # the pod cannot be given files of ours over the workspace's
        raise ConfigError(
            "not run: awaiting review (changed since approved; the Kubernetes backend cannot"
            f" run a hook's approved version in place of its changed files: {request.label})"
        )
    roots = tuple(ws.path for ws in volumes)
    for path in request.mounts:
        if not under(path, roots):
            raise ConfigError(
                f"{path!r}: no workspace volume of the Kubernetes backend holds it"
                f" (volumes at: {', '.join(roots) or 'none'})"
            )
