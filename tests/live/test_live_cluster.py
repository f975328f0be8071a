"""Opt-in: the Kubernetes backend against a live cluster. Skipped unless `KUBECONFIG`
names one (the tests read it to build their settings; sandboxrun itself never reads it).

    KUBECONFIG=~/.kube/config SANDBOX_TEST_KUBE_NAMESPACE=sandboxrun \\
        .venv/bin/pytest -q tests/live/

The namespace must exist with deploy/kubernetes/ applied (or at least the Role), and the
nodes must be able to pull the hook image (`SANDBOX_TEST_KUBE_IMAGE`, default the
settings' image). The hooks here read no workspace, so no volume is needed. What these
prove that tests/kube/ cannot: a real API server's admission and RBAC, a real kubelet's
attach, exit status and deletion, and the claim's precondition in etcd."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from sandboxrun._backends.kubernetes.backend import KubernetesBackend
from sandboxrun._backends.kubernetes.lifecycle import claim
from sandboxrun._backends.labels import RUN
from sandboxrun._settings import Settings
from sandboxrun._types import ExecRequest

KUBECONFIG = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
pytestmark = pytest.mark.skipif(not KUBECONFIG, reason="no live cluster: KUBECONFIG unset")
BOUND = 300  # seconds: a cold pull on a live cluster can be slow


def live_settings(**overrides: object) -> Settings:
    values: dict[str, object] = {
        "backend": "kubernetes", "kubeconfig": os.path.abspath(os.path.expanduser(KUBECONFIG)),
        "kube_namespace": os.environ.get("SANDBOX_TEST_KUBE_NAMESPACE", "sandboxrun"),
    }  # fmt: skip
    if os.environ.get("SANDBOX_TEST_KUBE_IMAGE"):
        values["image"] = os.environ["SANDBOX_TEST_KUBE_IMAGE"]
    return Settings(**(values | overrides))  # type: ignore[arg-type]


def request(script: str, stdin: bytes = b"{}", timeout: float = 60) -> ExecRequest:
    return ExecRequest(argv=("sh", "-c", script), stdin=stdin, workdir="/tmp", timeout=timeout)


@pytest.fixture
def backend() -> Iterator[KubernetesBackend]:
    b = KubernetesBackend(live_settings())
    yield b
    b.close()
    assert not left(b), "pods of this test were left behind"


def left(b: KubernetesBackend) -> list[str]:
    c = b.cluster
    pods = c.core.list_namespaced_pod(c.namespace, label_selector=f"{RUN}={b.run_id}")
    return [p.metadata.name for p in pods.items if not p.metadata.deletion_timestamp]


def test_a_hook_runs_in_a_pod_of_its_own(backend: KubernetesBackend) -> None:
    """The event in, stdout and stderr apart, the hook's exit code, never root."""
    r = backend.run(request("cat; echo; id -u; echo oops >&2; exit 3", stdin=b'{"e": 1}'))
    assert (r.exit_code, r.timed_out, r.start_error) == (3, False, None), r
    out = r.stdout.decode().split("\n")
    assert out[0] == '{"e": 1}' and out[1] != "0" and r.stderr == b"oops\n"


def test_a_timeout_deletes_the_pod(backend: KubernetesBackend) -> None:
    r = backend.run(request("echo started; sleep 600", timeout=5))
    assert r.timed_out and r.stdout == b"started\n"


def test_two_claimers_exactly_one_wins() -> None:
    s = live_settings()
    owner, a, b = (KubernetesBackend(s, warm=True), KubernetesBackend(s), KubernetesBackend(s))
    name = owner._launch(owner._manifest(request("cat"), owner._name(), 120))
    try:
        seen, won = owner._seen[name], {}
        barrier = threading.Barrier(2)

        def race(x: KubernetesBackend) -> None:
            barrier.wait()
            won[x.run_id] = claim(x.cluster.core, x.cluster.namespace, name, seen, x.run_id)

        threads = [threading.Thread(target=race, args=(x,)) for x in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
        assert sorted(won.values()) == [False, True]
    finally:
        owner._delete(name)
        for x in (owner, a, b):
            x.close()


def test_the_pod_is_hardened(backend: KubernetesBackend) -> None:
    """What admission let through is what we asked for: a read-only root, no
    service-account token, no capabilities."""
    script = (
        "(touch /usr/x 2>/dev/null && echo root-writable) || echo root-read-only;"
        " (test -e /var/run/secrets/kubernetes.io && echo token) || echo no-token;"
        " grep CapEff /proc/self/status | tr -d '\\t'"
    )
    out = backend.run(request(script)).stdout.decode().split()
    assert out == ["root-read-only", "no-token", "CapEff:0000000000000000"]


def test_the_api_server_is_out_of_reach(backend: KubernetesBackend) -> None:
    """Holds only where the cluster's network plugin enforces NetworkPolicy (the deny-all
    policy of deploy/kubernetes/networkpolicy.yaml); some (kind's default) do not."""
    script = (
        'curl -sk -m 5 "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/version"'
        ' >/dev/null; echo "curl=$?"'
    )
    out = backend.run(request(script, timeout=30)).stdout.decode().strip()
    assert out != "curl=0", "a hook pod reached the API server: is NetworkPolicy enforced?"


def test_a_warm_pod_answers_and_closing_deletes_the_pool() -> None:
    b = KubernetesBackend(live_settings(pool_size=1), warm=True)
    try:
        b.run(request("cat", stdin=b"first"))
        second = b.run(request("cat", stdin=b"second"))
        assert second.stdout == b"second" and second.warm, second
    finally:
        b.close()
    assert not left(b), "pods of this test were left behind"
