"""The fake API server's HTTP face (aiohttp): the core `v1` pods API of any namespace as
the official client calls it, plus `/version`, `/api` and a namespace GET.

- Authentication: a bearer token from `tokens`; none or another is 401 `Unauthorized`,
  as the real server answers a token it cannot authenticate.
- Authorization: a user has either every right (`rules=None`, a cluster admin) or the
  rules of the shipped Role (`deploy/kubernetes/rbac.yaml`, loaded from the file) in
  the namespaces it is bound in; anything else is 403 `Forbidden` with the real
  message. So the backend meets here the limits the deployed Role sets on a cluster
  (e.g. it may not read its Namespace object).
- Create, update and patch go through the server's validation and defaults
  (`validation`): 422 `Invalid` where it refuses, status never written by a client.
- List and watch take `labelSelector`, `fieldSelector`, `resourceVersion` and
  `timeoutSeconds`; a watch is JSON lines over a chunked response.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from . import patch as patches
from .errors import ApiError, forbidden, invalid, unauthorized
from .store import Pod, Store, Watcher, field_matcher, label_matcher
from .validation import updated, validate_new

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "rbac.yaml"
WATCH_LIMIT = 1800  # seconds: the server ends a watch without timeoutSeconds after this
VERSION = {
    "major": "1", "minor": "37", "gitVersion": "v1.37.0-kubefake", "gitCommit": "kubefake",
    "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25",
    "compiler": "gc", "platform": "linux/amd64",
}  # fmt: skip
USER = web.RequestKey("user", object)  # the authenticated `User` of a request


@dataclass(frozen=True)
class User:
    """Who a token is: a name for messages and the Role rules it holds (None: all)."""

    name: str
    rules: tuple[dict[str, Any], ...] | None = None
    namespaces: frozenset[str] = frozenset()


def role_rules(path: Path = RBAC) -> tuple[dict[str, Any], ...]:
    """The rules of the Role in the shipped RBAC manifest."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    [role] = [d for d in docs if d["kind"] == "Role"]
    return tuple(role["rules"])


@dataclass
class ApiServer:
    """What the handlers share: the store, the tokens, and the attach handler the
    runtime serves (set by the fixture)."""

    store: Store
    tokens: dict[str, User]
    attach: Callable[[web.Request, Pod], Awaitable[web.StreamResponse]] | None = None
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path+query)
    failures: list[str] = field(default_factory=list)  # tracebacks of the fake's own bugs

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._errors, self._authenticate])
        r = app.router
        r.add_get("/version", self._version)
        r.add_get("/version/", self._version)
        r.add_get("/api", self._api)
        for probe in ("/healthz", "/readyz", "/livez"):
            r.add_get(probe, self._ok)
        r.add_get("/api/v1/namespaces/{ns}", self._namespace)
        r.add_get("/api/v1/pods", self._list)
        r.add_get("/api/v1/namespaces/{ns}/pods", self._list)
        r.add_post("/api/v1/namespaces/{ns}/pods", self._create)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}", self._get)
        r.add_put("/api/v1/namespaces/{ns}/pods/{name}", self._replace)
        r.add_patch("/api/v1/namespaces/{ns}/pods/{name}", self._patch)
        r.add_delete("/api/v1/namespaces/{ns}/pods/{name}", self._delete)
        r.add_route("*", "/api/v1/namespaces/{ns}/pods/{name}/attach", self._attach)
        app.on_shutdown.append(self._shutdown)
        return app

    # -- middlewares ------------------------------------------------------------------

    @web.middleware
    async def _errors(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path_qs))
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except ApiError as exc:
            return web.json_response(exc.status(), status=exc.code)
        except web.HTTPException as exc:  # no such route: the server's own 404 / 405
            reason = "NotFound" if exc.status == 404 else exc.reason.replace(" ", "")
            message = ("the server could not find the requested resource" if exc.status == 404
                       else exc.reason)  # fmt: skip
            error = ApiError(exc.status, reason, message, {})
            return web.json_response(error.status(), status=exc.status)
        except Exception as exc:  # a bug of the fake: answered as the server would, kept
            self.failures.append(traceback.format_exc())
            error = ApiError(500, "InternalError", f"kubefake: {exc!r}")
            return web.json_response(error.status(), status=500)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        user = self.tokens.get(token) if scheme.lower() == "bearer" else None
        if user is None:
            raise unauthorized()
        request[USER] = user
        response: web.StreamResponse = await handler(request)
        return response

    def _authorize(self, request: web.Request, verb: str, resource: str, ns: str | None,
                   name: str = "") -> None:  # fmt: skip
        user = request[USER]
        assert isinstance(user, User)
        if user.rules is None:
            return
        if ns is not None and ns in user.namespaces:
            for rule in user.rules:
                if (
                    "" in rule.get("apiGroups", ())
                    and {resource, "*"} & set(rule.get("resources", ()))
                    and {verb, "*"} & set(rule.get("verbs", ()))
                    and (not rule.get("resourceNames") or name in rule["resourceNames"])
                ):
                    return
        raise forbidden(user.name, verb, resource, ns, name)

    # -- discovery and namespaces -----------------------------------------------------

    async def _ok(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response(VERSION)

    async def _api(self, request: web.Request) -> web.Response:
        host = request.host
        return web.json_response({"kind": "APIVersions", "versions": ["v1"],
                                  "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                                  "serverAddress": host}]})  # fmt: skip

    async def _namespace(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        self._authorize(request, "get", "namespaces", ns, ns)
        if ns not in self.store.namespaces:
            raise ApiError(404, "NotFound", f'namespaces "{ns}" not found',
                           {"name": ns, "kind": "namespaces"})  # fmt: skip
        return web.json_response({
            "kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
        })  # fmt: skip

    # -- pods -------------------------------------------------------------------------

    async def _list(self, request: web.Request) -> web.StreamResponse:
        ns = request.match_info.get("ns")
        q = request.query
        labels = label_matcher(q.get("labelSelector", ""))
        fields = field_matcher(q.get("fieldSelector", ""))
        matches: Callable[[Pod], bool] = lambda p: labels(p) and fields(p)  # noqa: E731
        if q.get("watch") in ("true", "1"):
            self._authorize(request, "watch", "pods", ns)
            return await self._watch(request, ns, matches)
        self._authorize(request, "list", "pods", ns)
        items, revision = self.store.list(ns, matches)
        for item in items:  # a list's items carry no kind, as the server writes them
            item.pop("kind", None)
            item.pop("apiVersion", None)
        return web.json_response({"kind": "PodList", "apiVersion": "v1",
                                  "metadata": {"resourceVersion": str(revision)}, "items": items})  # fmt: skip

    async def _watch(self, request: web.Request, ns: str | None,
                     matches: Callable[[Pod], bool]) -> web.StreamResponse:  # fmt: skip
        timeout = float(request.query.get("timeoutSeconds") or WATCH_LIMIT)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        watcher = Watcher(asyncio.get_running_loop(), queue, matches, ns)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            self.store.watch(watcher, request.query.get("resourceVersion"))
        except ApiError as exc:  # e.g. 410 Expired: sent as an ERROR event, as the server does
            await response.write(_line({"type": "ERROR", "object": exc.status()}))
            return response
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        try:
            while (left := end - loop.time()) > 0:
                try:
                    event = await asyncio.wait_for(queue.get(), left)
                except TimeoutError:
                    break
                if event is None:
                    break
                await response.write(_line(event))
            await response.write_eof()
        except ConnectionError:
            pass  # the client stopped watching
        finally:
            self.store.unwatch(watcher)
        return response

    async def _get(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        self._authorize(request, "get", "pods", ns, name)
        return web.json_response(self.store.get(ns, name))

    async def _create(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        self._authorize(request, "create", "pods", ns)
        pod = await _body(request)
        if pod.get("metadata", {}).get("namespace", ns) != ns:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not"
                           " match the namespace sent on the request")  # fmt: skip
        validate_new(pod)
        if request.query.get("dryRun") == "All":
            return web.json_response(pod, status=201)
        return web.json_response(self.store.create(ns, pod), status=201)

    async def _replace(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        self._authorize(request, "update", "pods", ns, name)
        body = await _body(request)
        if not body.get("metadata", {}).get("resourceVersion"):
            raise invalid(name, [("metadata.resourceVersion", "FieldValueInvalid",
                                  "Invalid value: 0x0: must be specified for an update")])  # fmt: skip
        return web.json_response(self.store.update(ns, name, lambda old: updated(old, body)))

    async def _patch(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        self._authorize(request, "patch", "pods", ns, name)
        body = await _body(request, dict | list)
        kind = request.headers.get("Content-Type", "")

        def change(old: Pod) -> Pod:
            return updated(old, patches.apply(kind, old, body))

        return web.json_response(self.store.update(ns, name, change))

    async def _delete(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        self._authorize(request, "delete", "pods", ns, name)
        options = await _body(request) if request.can_read_body else {}
        grace = options.get("gracePeriodSeconds", request.query.get("gracePeriodSeconds"))
        preconditions = options.get("preconditions") or {}
        pod = self.store.delete(ns, name, None if grace is None else int(grace), preconditions)
        return web.json_response(pod)

    async def _attach(self, request: web.Request) -> web.StreamResponse:
        ns, name = request.match_info["ns"], request.match_info["name"]
        verb = {"GET": "get", "POST": "create"}.get(request.method)
        if verb is None:
            raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method"
                           f" on the requested resource ({request.method})")  # fmt: skip
        self._authorize(request, verb, "pods/attach", ns, name)
        pod = self.store.get(ns, name)
        assert self.attach is not None, "the fixture sets the attach handler"
        return await self.attach(request, pod)

    async def _shutdown(self, app: web.Application) -> None:
        self.store.close_watches()


def _line(event: dict[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


async def _body(request: web.Request, kinds: Any = dict) -> Any:
    try:
        body = json.loads(await request.read() or b"{}")
    except json.JSONDecodeError as exc:
        raise ApiError(400, "BadRequest", f"error decoding request body: {exc}") from None
    if not isinstance(body, kinds):
        raise ApiError(400, "BadRequest", "the body of the request is not a JSON object")
    return body
