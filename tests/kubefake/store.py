"""The fake cluster's state: pods by namespace and name, one global resourceVersion, and
the event history that watches replay and follow. Thread-safe: the HTTP handlers (one
event loop) and the runtime's threads (the kubelet's part) both change pods.

What it keeps as the API server does, because the backend relies on it:
- `resourceVersion` is one counter for the whole store (etcd's revision), bumped by
  every change and written into the changed object;
- an update whose object carries a `resourceVersion` other than the stored one fails
  with 409 Conflict (optimistic concurrency: a claim by relabelling is atomic);
- a watch from a `resourceVersion` replays the events after it, then follows; from
  none (or "0") it starts with a synthetic ADDED for every matching object. An object
  that stops (starts) matching a watch's selector is sent to it as DELETED (ADDED),
  as the watch cache does.
"""

from __future__ import annotations

import asyncio
import copy
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError, conflict, gone, not_found

Pod = dict[str, Any]
Key = tuple[str, str]  # (namespace, name)
HISTORY = 10_000  # events kept for watches that resume from a resourceVersion


def now_rfc3339(at: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if at is None else at, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


@dataclass
class Watcher:
    """One open watch: the events for it go through `queue` on `loop`."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[dict[str, Any] | None]
    matches: Callable[[Pod], bool]
    namespace: str | None


@dataclass
class Store:
    namespaces: set[str] = field(default_factory=set)
    pods: dict[Key, Pod] = field(default_factory=dict)
    revision: int = 1
    history: list[tuple[int, str, Pod]] = field(default_factory=list)
    watchers: list[Watcher] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    # Called (outside the lock) after a pod is created / marked for deletion / removed:
    # the runtime's hooks, as the kubelet sees the pods bound to its node.
    on_created: Callable[[Pod], None] = lambda pod: None
    on_terminating: Callable[[Pod], None] = lambda pod: None
    on_removed: Callable[[Pod], None] = lambda pod: None

    # -- reads ------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> Pod:
        with self.lock:
            pod = self.pods.get((namespace, name))
            if pod is None:
                raise not_found("pods", name)
            return copy.deepcopy(pod)

    def list(self, namespace: str | None, matches: Callable[[Pod], bool]) -> tuple[list[Pod], int]:
        with self.lock:
            items = [
                copy.deepcopy(p)
                for (ns, _), p in sorted(self.pods.items())
                if (namespace is None or ns == namespace) and matches(p)
            ]
            return items, self.revision

    # -- writes -----------------------------------------------------------------------

    def create(self, namespace: str, pod: Pod) -> Pod:
        meta = pod.setdefault("metadata", {})
        with self.lock:
            if namespace not in self.namespaces:
                raise not_found("namespaces", namespace)
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            name = meta.get("name", "")
            if (namespace, name) in self.pods:
                raise ApiError(409, "AlreadyExists", f'pods "{name}" already exists',
                               {"name": name, "kind": "pods"})  # fmt: skip
            meta.update(namespace=namespace, uid=str(uuid.uuid4()), generation=1,
                        creationTimestamp=now_rfc3339())  # fmt: skip
            for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):
                meta.pop(k, None)
            self.pods[(namespace, name)] = pod
            stored = self._commit("ADDED", pod)
        self.on_created(copy.deepcopy(stored))
        return stored

    def update(self, namespace: str, name: str, change: Callable[[Pod], Pod]) -> Pod:
        """Replace the pod by `change(copy)`; a `resourceVersion` in the result other
        than the stored one is a 409 (the precondition of patch and update alike)."""
        with self.lock:
            old = self.pods.get((namespace, name))
            if old is None:
                raise not_found("pods", name)
            new = change(copy.deepcopy(old))
            wanted = new.get("metadata", {}).get("resourceVersion")
            if wanted and wanted != old["metadata"]["resourceVersion"]:
                raise conflict(name)
            if new == old:  # a no-op keeps the resourceVersion, as the server does
                return copy.deepcopy(old)
            self.pods[(namespace, name)] = new
            return self._commit("MODIFIED", new, old)

    def set_status(
        self, namespace: str, name: str, uid: str, change: Callable[[Pod], None]
    ) -> None:
        """The kubelet's status update: `change` edits the pod in place; nothing when the
        pod is gone (or is another pod of the same name)."""
        with self.lock:
            pod = self.pods.get((namespace, name))
            if pod is None or pod["metadata"]["uid"] != uid:
                return
            new = copy.deepcopy(pod)
            change(new)
            if new != pod:
                self.pods[(namespace, name)] = new
                self._commit("MODIFIED", new, pod)

    def delete(self, namespace: str, name: str, grace: int | None,
               preconditions: dict[str, Any]) -> Pod:  # fmt: skip
        """DELETE: at once with grace 0 (or for a pod never started or already ended, as
        the pod strategy decides), else marked with a deletionTimestamp for the kubelet
        to stop it within `grace` seconds and then `remove` it."""
        with self.lock:
            pod = self.pods.get((namespace, name))
            if pod is None:
                raise not_found("pods", name)
            meta = pod["metadata"]
            for field_, ours in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if preconditions.get(field_) and preconditions[field_] != meta[field_]:
                    raise ApiError(
                        409, "Conflict",
                        f"Precondition failed: {ours} in precondition: {preconditions[field_]},"
                        f" {ours} in object meta: {meta[field_]}",
                        {"name": name, "kind": "pods"},
                    )  # fmt: skip
            if grace is None:
                grace = int(pod["spec"].get("terminationGracePeriodSeconds", 30))
            started = pod["spec"].get("nodeName") and pod["status"].get("phase") not in (
                "Succeeded", "Failed")  # fmt: skip
            if grace <= 0 or not started:
                return self._remove(pod, grace=0)
            current = meta.get("deletionGracePeriodSeconds")
            if current is not None and current <= grace:
                return copy.deepcopy(pod)  # already terminating, no sooner
            new = copy.deepcopy(pod)
            new["metadata"].update(deletionTimestamp=now_rfc3339(time.time() + grace),
                                   deletionGracePeriodSeconds=grace)  # fmt: skip
            self.pods[(namespace, name)] = new
            stored = self._commit("MODIFIED", new, pod)
        self.on_terminating(copy.deepcopy(stored))
        return stored

    def remove(self, namespace: str, name: str, uid: str) -> None:
        """The kubelet's final delete, once the containers stopped."""
        with self.lock:
            pod = self.pods.get((namespace, name))
            if pod is None or pod["metadata"]["uid"] != uid:
                return
            self._remove(pod, grace=0)

    def _remove(self, pod: Pod, grace: int) -> Pod:
        meta = pod["metadata"]
        del self.pods[(meta["namespace"], meta["name"])]
        gone_pod = copy.deepcopy(pod)
        gone_pod["metadata"].setdefault("deletionTimestamp", now_rfc3339())
        gone_pod["metadata"]["deletionGracePeriodSeconds"] = grace
        stored = self._commit("DELETED", gone_pod, pod)
        threading.Thread(target=self.on_removed, args=(copy.deepcopy(stored),), daemon=True).start()
        return stored

    def _commit(self, kind: str, pod: Pod, old: Pod | None = None) -> Pod:
        """Stamp the next resourceVersion, record the event and fan it out (under the lock,
        so every watcher sees the events in resourceVersion order)."""
        self.revision += 1
        pod["metadata"]["resourceVersion"] = str(self.revision)
        event = copy.deepcopy(pod)
        self.history.append((self.revision, kind, event))
        del self.history[:-HISTORY]
        for w in self.watchers:
            self._send(w, kind, event, old)
        return copy.deepcopy(pod)

    # -- watches ----------------------------------------------------------------------

    def watch(self, w: Watcher, since: str | None) -> None:
        """Register `w`, first queueing what it must see before the live events."""
        with self.lock:
            if since in (None, "", "0"):
                for (ns, _), pod in sorted(self.pods.items()):
                    if (w.namespace is None or ns == w.namespace) and w.matches(pod):
                        self._put(w, {"type": "ADDED", "object": copy.deepcopy(pod)})
            else:
                rv = _revision(since)
                oldest = self.history[0][0] if self.history else self.revision + 1
                if rv > self.revision:
                    raise ApiError(504, "Timeout", f"Too large resource version: {rv},"
                                   f" current: {self.revision}", {"retryAfterSeconds": 1})  # fmt: skip
                if rv < oldest - 1:
                    raise gone(rv, oldest)
                previous: dict[Key, Pod] = {}
                for revision, kind, pod in self.history:
                    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
                    if revision > rv:
                        self._send(w, kind, pod, previous.get(key))
                    previous[key] = pod
            self.watchers.append(w)

    def unwatch(self, w: Watcher) -> None:
        with self.lock:
            if w in self.watchers:
                self.watchers.remove(w)

    def close_watches(self) -> None:
        with self.lock:
            for w in self.watchers:
                self._put(w, None)
            self.watchers.clear()

    def _send(self, w: Watcher, kind: str, pod: Pod, old: Pod | None) -> None:
        if w.namespace is not None and pod["metadata"]["namespace"] != w.namespace:
            return
        now, before = w.matches(pod), old is not None and w.matches(old)
        if kind == "MODIFIED" and now != before:
            kind = "ADDED" if now else "DELETED"
        elif not now and not (kind == "DELETED" and before):
            return
        self._put(w, {"type": kind, "object": copy.deepcopy(pod)})

    @staticmethod
    def _put(w: Watcher, event: dict[str, Any] | None) -> None:
        w.loop.call_soon_threadsafe(w.queue.put_nowait, event)


def _revision(text: str) -> int:
    if not text.isdigit():
        raise invalid_rv(text)
    return int(text)


def invalid_rv(text: str) -> ApiError:
    return ApiError(400, "BadRequest", f'invalid resource version "{text}"')


# -- selectors ------------------------------------------------------------------------

_REQUIREMENT = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[^\s,!=()]+)"
    r"|(?P<key>[^\s,!=()<>]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s,!=()]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|$)"
)


def label_matcher(selector: str) -> Callable[[Pod], bool]:
    """A `labelSelector` (labels.Parse's syntax: `k=v`, `k==v`, `k!=v`, `k`, `!k`,
    `k in (a,b)`, `k notin (a,b)`, comma-separated, all must hold)."""
    tests: list[Callable[[dict[str, str]], bool]] = []
    pos, text = 0, selector.strip()
    while pos < len(text):
        m = _REQUIREMENT.match(text, pos)
        if m is None or m.end() == pos:
            raise ApiError(400, "BadRequest", f"unable to parse requirement: {text[pos:]!r}")
        pos = m.end()
        tests.append(_requirement(m))
    return lambda pod: all(t(pod["metadata"].get("labels") or {}) for t in tests)


def _requirement(m: re.Match[str]) -> Callable[[dict[str, str]], bool]:
    if m["not"]:
        key = m["nkey"]
        return lambda labels: key not in labels
    key, op = m["key"], m["op"] or m["setop"]
    if op in ("=", "=="):
        value = m["value"]
        return lambda labels: labels.get(key) == value
    if op == "!=":
        value = m["value"]
        return lambda labels: labels.get(key) != value
    if op in ("in", "notin"):
        values = {v.strip() for v in m["values"].split(",")}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    return lambda labels: key in labels


_POD_FIELDS: dict[str, Callable[[Pod], str]] = {
    "metadata.name": lambda p: p["metadata"]["name"],
    "metadata.namespace": lambda p: p["metadata"]["namespace"],
    "spec.nodeName": lambda p: p["spec"].get("nodeName", ""),
    "spec.restartPolicy": lambda p: p["spec"].get("restartPolicy", ""),
    "status.phase": lambda p: p.get("status", {}).get("phase", ""),
}


def field_matcher(selector: str) -> Callable[[Pod], bool]:
    """A `fieldSelector` over the fields the API server indexes for pods."""
    tests: list[Callable[[Pod], bool]] = []
    for part in filter(None, (s.strip() for s in selector.split(","))):
        m = re.fullmatch(r"([^!=]+)(==|!=|=)(.*)", part)
        if m is None:
            raise ApiError(400, "BadRequest", f"invalid selector: '{selector}'")
        name, op, value = m.groups()
        get = _POD_FIELDS.get(name)
        if get is None:
            raise ApiError(400, "BadRequest",
                           f'"{name}" is not a known field selector: only "{", ".join(_POD_FIELDS)}"')  # fmt: skip
        tests.append(
            (lambda p, g=get, v=value: g(p) != v)
            if op == "!="
            else (lambda p, g=get, v=value: g(p) == v)
        )
    return lambda pod: all(t(pod) for t in tests)
