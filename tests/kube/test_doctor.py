"""`sandboxrun doctor` with `backend = "kubernetes"`: the cluster answers, and a probe pod,
made exactly as hooks get theirs, is observed confined from inside. What a pod cannot
show from inside (its network, cut by the NetworkPolicy; the node's process limit) is a
warning naming where it is held, never a pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.kubefake.fixtures import KubeCluster


def doctor(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sandboxrun", "doctor", "--config", str(config)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)  # fmt: skip


def test_doctor_checks_the_cluster_and_a_probe_pod(
    kube_cluster: KubeCluster, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'backend = "kubernetes"\nkubeconfig = "{kube_cluster.kubeconfig}"\n'
                      f'kube_namespace = "{kube_cluster.namespace}"\nserve = "off"\n')  # fmt: skip
    done = doctor(config, tmp_path)
    lines = {line.split(":")[0]: line for line in done.stdout.splitlines()}
    assert done.returncode == 0, done.stdout + done.stderr
    assert kube_cluster.host in lines["pass  cluster"] and kube_cluster.namespace in done.stdout
    for confined in ("root filesystem read-only", "capabilities empty", "user is not root",
                     "no-new-privileges set", "no host environment visible"):  # fmt: skip
        assert f"pass  {confined}" in lines, done.stdout
    assert "NetworkPolicy" in lines["warn  network absent"]
    assert "podPidsLimit" in lines["warn  processes limited to 256"]
    assert [p["metadata"]["name"] for p in kube_cluster.pods()] == []


def test_doctor_names_an_unreachable_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n"
        "- {name: c, cluster: {server: 'http://127.0.0.1:9'}}\n"
        "users:\n- {name: u, user: {token: t}}\n"
        "contexts:\n- {name: c, context: {cluster: c, user: u}}\n"
    )
    config = tmp_path / "config.toml"
    config.write_text(f'backend = "kubernetes"\nkubeconfig = "{kubeconfig}"\nserve = "off"\n')
    done = doctor(config, tmp_path)
    assert done.returncode == 1
    assert any(ln.startswith("FAIL  sandbox:") and "127.0.0.1:9" in ln
               for ln in done.stdout.splitlines()), done.stdout  # fmt: skip
