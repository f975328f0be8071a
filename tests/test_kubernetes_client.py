"""The Kubernetes backend's configuration and error translation (`kubernetes/client.py`):
where the cluster is comes from the settings only, and every failure of the API becomes
one line of sandboxrun's exception tree."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from sandboxrun._backends.kubernetes.attach import Streams
from sandboxrun._backends.kubernetes.backend import KubernetesBackend
from sandboxrun._backends.kubernetes.client import Cluster, create_pod, transient
from sandboxrun._errors import ConfigError, EngineError, EngineUnavailable
from sandboxrun._settings import Settings


def kubeconfig(path: Path, server: str, context: str = "here") -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
    }))  # fmt: skip
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_kubeconfig_comes_from_the_settings_never_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KUBECONFIG names another cluster: ignored; the settings' file and context win."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "evil", "http://192.0.2.1:1")))
    mine = kubeconfig(tmp_path / "mine", "http://127.0.0.1:6443", context="ours")
    c = Cluster(Settings(kubeconfig=str(mine), kube_context="ours"))
    assert c.server == "http://127.0.0.1:6443"
    assert c.configuration.retries is False  # one retry layer: never a resent POST


def test_a_missing_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="absent"):
        Cluster(Settings(kubeconfig=str(tmp_path / "absent")))


def test_an_unreachable_api_is_one_line_naming_the_server(tmp_path: Path) -> None:
    """No server at the address: `EngineUnavailable`, one line, naming it; never a hang."""
    server = f"http://127.0.0.1:{closed_port()}"
    b = KubernetesBackend(Settings(kubeconfig=str(kubeconfig(tmp_path / "k", server))))
    with pytest.raises(EngineUnavailable) as caught:
        b.check()
    assert server in str(caught.value) and "\n" not in str(caught.value)


def status(code: int, message: str) -> ApiException:
    exc = ApiException(status=code, reason="x")
    exc.body = json.dumps({"kind": "Status", "message": message})
    return exc


def test_refusals_say_what_is_missing(tmp_path: Path) -> None:
    """403 names the verb and resource the Role lacks; a missing namespace is named."""
    path = kubeconfig(tmp_path / "k", "http://127.0.0.1:1")
    c = Cluster(Settings(kubeconfig=str(path), kube_namespace="hooks"))
    forbidden = c.translate(status(403, 'pods "p" is forbidden: User "u" cannot patch'
                                        ' resource "pods" in API group "" in the namespace "hooks"'))  # fmt: skip
    assert "forbids patch pods in namespace 'hooks'" in str(forbidden)
    missing = c.translate(status(404, 'namespaces "hooks" not found'))
    assert "namespace 'hooks' does not exist" in str(missing)
    assert isinstance(c.translate(status(401, "Unauthorized")), EngineUnavailable)
    assert type(c.translate(status(500, "etcd"))) is EngineError


def test_which_errors_are_retried() -> None:
    assert transient(status(429, "slow down")) and transient(status(503, "busy"))
    assert not transient(status(409, "conflict")) and not transient(status(404, "gone"))
    assert transient(ConnectionResetError())


class FlakyCore:
    """A create whose answer is lost after the server made the pod (once)."""

    def __init__(self, made: bool) -> None:
        self.made, self.creates = made, 0

    def create_namespaced_pod(self, namespace: str, body: dict[str, object]) -> str:
        self.creates += 1
        if self.creates == 1:
            raise ConnectionResetError("reset")
        return "created again"

    def read_namespaced_pod(self, name: str, namespace: str) -> str:
        if self.made:
            return "found"
        raise status(404, f'pods "{name}" not found')


def test_a_create_is_retried_only_after_looking_the_pod_up() -> None:
    """A create that may have reached the server is never repeated blindly: the pod is
    looked up by name first; only when it is not there is it created again."""
    manifest = {"metadata": {"name": "p"}}
    made = FlakyCore(made=True)
    assert create_pod(made, "ns", manifest) == "found" and made.creates == 1
    lost = FlakyCore(made=False)
    assert create_pod(lost, "ns", manifest) == "created again" and lost.creates == 2


def test_channel_three_gives_an_exit_code_only_when_it_has_one() -> None:
    """attach's "Success" says the stream ended, not how the hook exited (the pod's
    status does); an ExitCode cause (as exec sends) is used."""
    s = Streams(None, b"", 1, Settings(), kill=lambda: False)
    s.status = {"status": "Success"}
    assert s.exit_code() is None
    s.status = {"status": "Failure", "reason": "NonZeroExitCode",
                "details": {"causes": [{"reason": "ExitCode", "message": "2"}]}}  # fmt: skip
    assert s.exit_code() == 2


def test_in_cluster_is_refused_to_a_command_an_agent_started(tmp_path: Path) -> None:
    """In-cluster credentials take the API server's address from KUBERNETES_SERVICE_HOST,
    which a repository can set for the commands an agent starts: a command refuses it
    in one line (and blocks under fail-closed); only `serve` and the API may use it."""
    import os
    import subprocess
    import sys

    config = tmp_path / "config.toml"
    config.write_text('backend = "kubernetes"\nkubeconfig = "in-cluster"\nserve = "off"\n')
    env = {**os.environ, "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "9"}
    argv = [sys.executable, "-m", "sandboxrun", "exec", "--config", str(config), "--", "true"]
    plain = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, timeout=60)
    assert plain.returncode == 1 and plain.stdout == b""  # Claude: an error, not a block
    [line] = plain.stderr.decode().splitlines()
    assert 'kubeconfig = "in-cluster" is for `sandboxrun serve`' in line
    closed = subprocess.run([*argv[:4], "--fail-closed", *argv[4:]], env=env, cwd=tmp_path,
                            capture_output=True, timeout=60)  # fmt: skip
    assert closed.returncode == 2 and b"in-cluster" in closed.stderr  # Claude's block


def test_in_cluster_is_loaded_where_the_environment_is_the_processs_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sandboxrun import _userconfig

    monkeypatch.setattr(_userconfig, "_environment_untrusted", False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    s = Settings(backend="kubernetes", kubeconfig="in-cluster")
    with pytest.raises(ConfigError, match="cannot load the Kubernetes configuration 'in-cluster'"):
        Cluster(s)  # not in a pod here: the loader itself says so
