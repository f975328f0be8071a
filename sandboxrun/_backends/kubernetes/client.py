"""The one place that loads the cluster's address and credentials and translates the
`kubernetes` client's errors into sandboxrun's exception tree (`_errors.py`).

Where the cluster is comes from the settings only (`kubeconfig`, `kube_context`), never
from the `KUBECONFIG` variable: a repository can set the environment of the processes
that run sandboxrun, and another API server could forge any answer (see `_settings`).

`retry_api` retries calls that are safe to repeat (reads, deletes, patches with a
precondition) on transient errors: 429, 5xx, a dropped connection. A create is never
retried blindly: one that reached the server may have made the pod, so `create_pod`
looks it up by its name (unique per run) before trying again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential
from websocket import WebSocketException

from ... import _settings, _userconfig
from ..._errors import ConfigError, EngineError, EngineUnavailable, ImageMissing
from ..._settings import Settings

T = TypeVar("T")
RBAC_HINT = "grant it in the namespace's Role (deploy/kubernetes/)"
# What urllib3 and the websocket raise when the API server cannot be reached or drops us.
_UNREACHABLE = (urllib3.exceptions.HTTPError, OSError, WebSocketException)


class Cluster:
    """An API client for the settings' cluster, and what error messages name of it."""

    def __init__(self, settings: Settings) -> None:
        self.namespace = settings.kube_namespace
        configuration = client.Configuration()
        where = settings.kubeconfig or os.path.join(_settings.account_home(), ".kube", "config")
        if where == "in-cluster" and _userconfig.environment_untrusted():
            # The service account's address comes from KUBERNETES_SERVICE_HOST/PORT,
            # which a repository can set for the command an agent starts: it would
            # get the account's token, and could answer for the hooks.
            raise ConfigError(
                'kubeconfig = "in-cluster" is for `sandboxrun serve` and programs'
                " using the Python API; a command takes the API server's address from"
                " a kubeconfig file (set kubeconfig in your config file)"
            )
        try:
            if where == "in-cluster":
                config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            else:
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=where,  # always a path: None would read KUBECONFIG
                    context=settings.kube_context,
                    client_configuration=configuration,
                    persist_config=False,
                )
        except (ConfigException, OSError, ValueError, TypeError) as exc:
            raise ConfigError(
                f"cannot load the Kubernetes configuration {where!r}: {_one_line(exc)[:200]}"
                " (set kubeconfig and kube_context in your config file)"
            ) from None
        # One retry layer only (tenacity, below): urllib3's own would resend a POST.
        configuration.retries = False
        self.configuration = configuration
        self.server = str(configuration.host)
        self.api_client = client.ApiClient(configuration)
        self.core = client.CoreV1Api(self.api_client)

    def fresh_core(self) -> Any:
        """A CoreV1Api on an ApiClient of its own: `kubernetes.stream.stream` swaps its
        client's `call_api` while it connects, which must not touch concurrent calls."""
        return client.CoreV1Api(client.ApiClient(self.configuration))

    @contextlib.contextmanager
    def errors(self, image: str | None = None) -> Iterator[None]:
        """Translate the client's exceptions into `EngineError`s with one-line hints."""
        try:
            yield
        except ApiException as exc:
            raise self.translate(exc, image) from None
        except _UNREACHABLE as exc:
            raise EngineUnavailable(
                f"no Kubernetes API answers at {self.server}: {_one_line(exc)[:160]}"
                " (check kubeconfig / kube_context in your config file)"
            ) from None

    def translate(self, exc: ApiException, image: str | None = None) -> EngineError:
        message = _message(exc)
        if exc.status == 0:  # the websocket's handshake failed (kubernetes.stream)
            return EngineUnavailable(
                f"could not attach through the Kubernetes API at {self.server}: {message[:200]}"
            )
        if exc.status == 403:
            found = re.search(r'cannot (\w+) resource "([^"]+)"', message)
            verb = f"{found[1]} {found[2]}" if found else "the request"
            return EngineError(
                f"the cluster at {self.server} forbids {verb} in namespace"
                f" {self.namespace!r}: {RBAC_HINT} ({message[:200]})"
            )
        if exc.status == 401:
            return EngineUnavailable(
                f"the Kubernetes API at {self.server} refused our credentials: {message[:160]}"
            )
        if exc.status == 404 and re.search(r'namespaces? "[^"]*" not found', message):
            return EngineError(
                f"namespace {self.namespace!r} does not exist on {self.server}:"
                " apply deploy/kubernetes/ or set kube_namespace"
            )
        if image and exc.status == 422 and "image" in message.lower():
            return ImageMissing(f"the cluster refuses image {image!r}: {message[:200]}")
        return EngineError(f"Kubernetes API error {exc.status} at {self.server}: {message[:240]}")


def status(exc: BaseException) -> int | None:
    return exc.status if isinstance(exc, ApiException) else None


def transient(exc: BaseException) -> bool:
    """Worth trying again: the server was busy or failing, or the connection dropped."""
    if isinstance(exc, ApiException):
        return exc.status == 429 or (exc.status or 0) >= 500
    return isinstance(
        exc,
        urllib3.exceptions.ProtocolError | urllib3.exceptions.NewConnectionError
        | ConnectionResetError,
    )  # fmt: skip


def retry_api(fn: Callable[..., T]) -> Callable[..., T]:
    """Retry a call that is safe to repeat a few times on transient errors."""
    wrapped: Callable[..., T] = retry(
        retry=retry_if_exception(transient),
        stop=stop_after_attempt(4),
        wait=wait_exponential(multiplier=0.1, max=2.0),
        reraise=True,
    )(fn)
    return wrapped


def create_pod(core: Any, namespace: str, manifest: dict[str, Any]) -> Any:
    """Create the pod; after a transient failure, look it up by name first (the create
    may have reached the server) and create it again only if it is not there."""
    name = manifest["metadata"]["name"]

    def once() -> Any:
        try:
            return core.create_namespaced_pod(namespace, manifest)
        except Exception as exc:
            if not transient(exc):
                raise
            try:
                return core.read_namespaced_pod(name, namespace)
            except ApiException as lookup:
                if lookup.status == 404:
                    raise exc from None  # not made: tenacity tries the create again
                raise

    return retry_api(once)()


def delete_pod(core: Any, namespace: str, name: str) -> bool:
    """Delete at once (grace 0); True if it was there."""
    try:
        retry_api(core.delete_namespaced_pod)(
            name, namespace, grace_period_seconds=0, propagation_policy="Background"
        )
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def _message(exc: ApiException) -> str:
    try:
        body = json.loads(exc.body or "")
        return _one_line(body.get("message") or exc.reason or exc)
    except (ValueError, AttributeError):
        return _one_line(exc.reason or exc.body or exc)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
