"""What the backend asks the API server about its pods: wait until one runs (a watch,
not polling), read how it ended, claim a pooled one atomically, sweep stale ones.

    created -> [watch] Pending (pulling) -> Running -> (attached, hook runs) -> ended
                   |-> image cannot be pulled: ImageMissing, naming the image
                   |-> the container cannot be configured: ConfigError
                   '-> Failed / Succeeded before we attached: a start error (data)

A claim relabels a pooled pod (`CLAIMED` = the run's id) with a merge patch carrying the
`resourceVersion` we last saw: the API server refuses it (409 Conflict) if the pod
changed since, so of two sandboxruns that saw the same version exactly one wins.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from ..._errors import ConfigError, EngineError, ImageMissing
from ..._log import logger
from ..labels import CLAIMED, MANAGED, is_stale
from .client import delete_pod, retry_api

# Waiting reasons that no amount of waiting mends.
IMAGE_ERRORS = ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName",
                "RegistryUnavailable")  # fmt: skip
CONFIG_ERRORS = ("CreateContainerConfigError", "CreateContainerError")
IMAGE_HINT = "push it to a registry the nodes can pull from, or load it on the nodes"


@dataclass(frozen=True, slots=True)
class Ended:
    """How a pod's container ended, as far as the pod's status tells."""

    exit_code: int | None
    reason: str  # the container's (OOMKilled, Error, StartError...) or the pod's
    message: str
    deadline_exceeded: bool  # the cluster's own deadline (activeDeadlineSeconds) ended it


def wait_running(core: Any, namespace: str, name: str, image: str, limit: float) -> Any:
    """The pod once it runs, or once it ended without running (check `ended`). Raises
    when it cannot run (image, configuration), vanishes, or is not running in `limit`."""
    last = "no status yet"
    with _watch(core, namespace, name, limit) as events:
        for event in events:
            pod = event["object"]
            if event["type"] == "DELETED":
                raise EngineError(f"pod {name} was deleted before its hook ran")
            if event["type"] not in ("ADDED", "MODIFIED"):
                continue
            phase = pod.status.phase if pod.status else None
            if phase in ("Running", "Succeeded", "Failed"):
                return pod
            waiting = _state(pod, "waiting")
            if waiting is not None and waiting.reason:
                last = f"{waiting.reason}: {waiting.message or ''}".strip(": ")
                if waiting.reason in IMAGE_ERRORS:
                    raise ImageMissing(
                        f"the cluster cannot pull image {image!r} ({last[:200]}): {IMAGE_HINT}"
                    )
                if waiting.reason in CONFIG_ERRORS:
                    raise ConfigError(f"pod {name} cannot start its container: {last[:240]}")
            else:
                last = f"phase {phase}" + (f" ({pod.status.reason})" if pod.status.reason else "")
    raise EngineError(f"pod {name} was not running after {limit:g}s ({last[:200]})")


def ended(pod: Any) -> Ended | None:
    """How the pod's container ended; None while it has not."""
    status = pod.status
    done = _state(pod, "terminated")
    deadline = bool(status and status.reason == "DeadlineExceeded")
    if done is None:
        if status is not None and status.phase in ("Succeeded", "Failed"):
            return Ended(None, status.reason or status.phase, status.message or "", deadline)
        return None
    return Ended(done.exit_code, done.reason or "", done.message or "", deadline)


def wait_ended(core: Any, namespace: str, name: str, limit: float) -> Ended | None:
    """How the pod ended, waiting up to `limit` seconds for its status to say so (the
    kubelet reports an exit a moment after the streams end). None: it is gone (we
    deleted it) or still says nothing."""
    try:
        pod = retry_api(core.read_namespaced_pod)(name, namespace)
    except ApiException as exc:
        if exc.status != 404:
            logger.debug("read {}: {}", name, exc)
        return None
    found = ended(pod)
    if found is not None:
        return found
    try:
        with _watch(core, namespace, name, limit, pod.metadata.resource_version) as events:
            for event in events:
                found = ended(event["object"])
                if found is not None or event["type"] == "DELETED":
                    return found
    except ApiException as exc:  # e.g. 410 Gone: the version is too old; say nothing
        logger.debug("watch {}: {}", name, exc)
    return None


def claim(core: Any, namespace: str, name: str, resource_version: str, run: str) -> bool:
    """Take a pooled pod for run `run`; False if it changed since `resource_version`
    (another sandboxrun claimed it, it ended, it is gone)."""
    body = {"metadata": {"labels": {CLAIMED: run}, "resourceVersion": resource_version}}
    try:
        retry_api(core.patch_namespaced_pod)(
            name, namespace, body, _content_type="application/merge-patch+json"
        )
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        if exc.status != 409:
            raise
    # 409: changed. A retried patch whose first try went through sees its own change.
    try:
        pod = retry_api(core.read_namespaced_pod)(name, namespace)
    except ApiException:
        return False
    return bool((pod.metadata.labels or {}).get(CLAIMED) == run)


def claimed_by_other(core: Any, namespace: str, name: str, run: str) -> bool:
    """Whether another run holds the pod now (then it is not ours to delete)."""
    try:
        pod = retry_api(core.read_namespaced_pod)(name, namespace)
    except ApiException:
        return False
    owner = (pod.metadata.labels or {}).get(CLAIMED)
    return bool(owner and owner != run)


def sweep(core: Any, namespace: str) -> list[str]:
    """Delete the stale pods of the namespace (`labels.is_stale`); their names."""
    now = time.time()
    found = retry_api(core.list_namespaced_pod)(namespace, label_selector=f"{MANAGED}=1")
    removed = []
    for pod in found.items:
        if is_stale(pod.metadata.labels or {}, now):
            try:
                if delete_pod(core, namespace, pod.metadata.name):
                    removed.append(pod.metadata.name)
            except Exception as exc:  # a sweep never fails the run that does it
                logger.warning("could not delete pod {}: {}", pod.metadata.name, exc)
    if removed:
        logger.info("swept {} stale pod(s)", len(removed))
    return removed


@contextlib.contextmanager
def _watch(
    core: Any, namespace: str, name: str, limit: float, version: str | None = None
) -> Iterator[Iterator[dict[str, Any]]]:
    """The events of one pod for `limit` seconds (from `version`, else from its state
    now); the watch's connection is closed on leaving, however that happens."""
    w: Any = watch.Watch()  # type: ignore[no-untyped-call]
    events = w.stream(
        core.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}",
        timeout_seconds=max(1, int(limit)), _request_timeout=limit + 10,
        **({"resource_version": version} if version else {}),
    )  # fmt: skip
    try:
        yield events
    finally:
        w.stop()
        events.close()  # runs the generator's own cleanup: closes the response


def _state(pod: Any, which: str) -> Any:
    statuses = (pod.status.container_statuses if pod.status else None) or []
    state = statuses[0].state if statuses else None
    return getattr(state, which, None) if state is not None else None
