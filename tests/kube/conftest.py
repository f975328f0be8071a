"""The Kubernetes backend's tests run against `kube_cluster` (tests/kubefake): a fake
API server on loopback whose pods are real containers in the local Docker Engine. They
need that engine: marked `docker` (skipped without one, a failure with CI=true)."""

from __future__ import annotations

import pytest

from tests.kubefake.fixtures import KubeCluster, kube_cluster

__all__ = ["KubeCluster", "kube_cluster"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/kube/" in str(item.path):
            item.add_marker(pytest.mark.docker)
