"""The `kube_cluster` fixture: a fake Kubernetes cluster on loopback for one test.

`KubeCluster` (what the fixture yields):

- `host` ("http://127.0.0.1:PORT"), `token` (bound to the shipped Role in `namespace`,
  the rights `sandboxrun serve` has on a cluster), `admin_token` (every right),
  `namespace` (created for the test, `kubefake-<id>`), `kubeconfig` (a file: the server,
  the Role's token, `namespace` as the context's namespace);
- `claims`: claim name → host folder, for persistentVolumeClaim volumes (set entries
  before creating pods that name them); `runtime_classes`: RuntimeClass name → engine
  runtime (e.g. {"gvisor": "runsc"}; a pod without one runs in the engine's default, or
  in `SANDBOX_TEST_RUNTIME` when set, as a node whose default handler is runsc);
- `pods()` (the stored Pod objects, dicts in the API's JSON shape), `containers()` (the
  engine containers of this cluster, docker SDK objects), `requests` ((method,
  path?query) the server got, in order), `client()` (a `kubernetes.client.ApiClient` on
  the kubeconfig), `add_namespace(name)`, `add_token(token, user, namespaces=...)`.

Every container is labelled `sandboxrun.kubefake=1`, `sandboxrun.kubefake.cluster=ID`
and its test process (sandboxrun's owner labels, never `sandboxrun.managed`: sandboxrun's
own reaper leaves them alone); the fixture removes them all at teardown, and a cluster's
start removes those of a test process that is gone. Without an engine it skips, except in CI
(`CI=true`), where that is a failure.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest
import yaml
from aiohttp import web

from . import attach
from .api import ApiServer, User, role_rules
from .runtime import Runtime
from .store import Pod, Store

HOOK_IMAGE = "sandboxrun/hooks:latest"


class KubeCluster:
    def __init__(self, client: docker.DockerClient, root: Path) -> None:
        self.id = secrets.token_hex(4)
        self.namespace = f"kubefake-{self.id}"
        self.token = secrets.token_urlsafe(24)
        self.admin_token = secrets.token_urlsafe(24)
        self.store = Store(namespaces={self.namespace, "default"})
        self.runtime = Runtime(self.store, client, self.id, root / "emptydir")
        self.claims = self.runtime.claims
        self.runtime_classes = self.runtime.runtime_classes
        self.server = ApiServer(self.store, {
            self.admin_token: User("kubernetes-admin"),
            self.token: User(f"system:serviceaccount:{self.namespace}:sandboxrun", role_rules(),
                             frozenset({self.namespace})),
        })  # fmt: skip
        self.server.attach = lambda request, pod: attach.attach(self.runtime, request, pod)
        self.requests = self.server.requests
        self._root = root
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._clients: list[Any] = []
        self.host = ""
        self.kubeconfig = root / "kubeconfig"

    # -- what tests use ---------------------------------------------------------------

    def pods(self) -> list[Pod]:
        return self.store.list(None, lambda p: True)[0]

    def containers(self) -> list[Any]:
        return self.runtime.containers()

    def client(self, token: str | None = None) -> Any:
        """An ApiClient of the official client, from the kubeconfig (or with `token`);
        closed when the cluster stops."""
        from kubernetes import client, config

        if token is None:
            api = config.new_client_from_config(config_file=str(self.kubeconfig))
        else:
            configuration = client.Configuration(host=self.host)
            configuration.api_key = {"BearerToken": f"Bearer {token}"}
            api = client.ApiClient(configuration)
        self._clients.append(api)  # closed at stop: no socket outlives the test
        return api

    def add_namespace(self, name: str) -> None:
        with self.store.lock:
            self.store.namespaces.add(name)

    def add_token(self, token: str, user: str, namespaces: tuple[str, ...] = (),
                  admin: bool = False) -> None:  # fmt: skip
        """Another identity: an admin, or bound to the shipped Role in `namespaces`."""
        rules = None if admin else role_rules()
        self.server.tokens[token] = User(user, rules, frozenset(namespaces))

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        self.runtime.sweep()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="kubefake-api",
                                        daemon=True)  # fmt: skip
        self._thread.start()
        assert ready.wait(30), "the fake API server did not start"
        port = self.runtime.api_port
        self.host = f"http://127.0.0.1:{port}"
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "kubefake",
            "clusters": [{"name": "kubefake", "cluster": {"server": self.host}}],
            "users": [{"name": "sandboxrun", "user": {"token": self.token}}],
            "contexts": [{"name": "kubefake", "context": {
                "cluster": "kubefake", "user": "sandboxrun", "namespace": self.namespace}}],
        }))  # fmt: skip

    def _serve(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        runner = web.AppRunner(self.server.app(), shutdown_timeout=2.0, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self._runner = runner
        self.runtime.api_port = runner.addresses[0][1]
        ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())
        self._loop.close()

    def stop(self) -> None:
        """Stop serving, then remove every container (never raises)."""
        for api in self._clients:
            api.close()
        self.runtime.close()  # first: an attach still relaying ends with its container
        if self._runner is not None:
            self.store.close_watches()
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=30)
        self.runtime.close()  # what a request in flight may have started meanwhile


def docker_client() -> docker.DockerClient:
    """The engine, or a skip (a failure with CI=true) without one or its hook image."""
    try:
        client = docker.from_env(version="auto", timeout=120)
        client.api.inspect_image(HOOK_IMAGE)
    except (docker.errors.DockerException, OSError) as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI needs a Docker Engine and {HOOK_IMAGE}: {exc}")
        pytest.skip(f"no Docker Engine or {HOOK_IMAGE}: {exc}")
    return client


@pytest.fixture
def kube_cluster() -> Iterator[KubeCluster]:
    """A fake cluster on loopback whose pods run in the local Docker Engine."""
    client = docker_client()
    with tempfile.TemporaryDirectory(prefix="kubefake-") as root:
        os.chmod(root, 0o755)
        cluster = KubeCluster(client, Path(root))
        # scripts/test's gVisor pass: a node whose container runtime runs pods in runsc.
        cluster.runtime.node_runtime = os.environ.get("SANDBOX_TEST_RUNTIME") or None
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop()
            client.close()
        failures = cluster.server.failures + cluster.runtime.failures
        assert not failures, "".join(failures)
