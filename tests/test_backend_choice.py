"""Choosing the backend is one setting: from the command line or the user's config file,
never from the environment, the workspace or the event."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandboxrun import ConfigError, Settings, WorkspaceVolume, make_backend
from sandboxrun._backends.docker.backend import DockerBackend
from sandboxrun._backends.kubernetes.backend import KubernetesBackend


def test_docker_by_default_and_kubernetes_when_named(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    assert isinstance(make_backend(Settings.load(config=config)), DockerBackend)
    chosen = make_backend(Settings.load(config=config, backend="kubernetes"), warm=True)
    assert isinstance(chosen, KubernetesBackend) and chosen.warm


def test_the_config_file_names_the_cluster(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'backend = "kubernetes"\nkube_namespace = "hooks"\nkubeconfig = "in-cluster"\n'
        "[[kube_volumes]]\n"
        'kind = "pvc"\nsource = "workspaces"\npath = "/srv/ws"\nsub_path = "tenant-a"\n'
    )
    s = Settings.load(config=config)
    assert (s.backend, s.kube_namespace, s.kubeconfig) == ("kubernetes", "hooks", "in-cluster")
    assert s.kube_volumes == (WorkspaceVolume("pvc", "workspaces", "/srv/ws", "tenant-a"),)


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('backend = "podman"', "backend"),
        ('kube_namespace = "Not_A_Namespace"', "kube_namespace"),
        ('kubeconfig = "relative/config"', "kubeconfig"),
        ('kube_volumes = [{kind = "pvc", source = "c", path = "/w", sub_path = "../x"}]',
         "kube_volumes"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_it(tmp_path: Path, line: str, named: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(line + "\n")
    with pytest.raises(ConfigError, match=named) as caught:
        Settings.load(config=config)
    assert "\n" not in str(caught.value) and str(config) in str(caught.value)


def test_the_environment_never_chooses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    monkeypatch.setenv("SANDBOXRUN_BACKEND", "kubernetes")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "evil"))
    s = Settings.load(config=config)
    assert (s.backend, s.kubeconfig) == ("docker", None)
