"""What the Kubernetes backend puts in its pods besides `pod.py`'s spec: the image's
helper as the command (gate, deadline, Landlock list), the gate's wait counted into the
cluster's deadline, and a pool key that tells apart only what differs in the pod."""

from __future__ import annotations

import dataclasses

from sandboxrun._backends.kubernetes.backend import HELPER, START_LIMIT, KubernetesBackend
from sandboxrun._backends.kubernetes.pod import GRACE
from sandboxrun._backends.pool import pool_key
from sandboxrun._settings import Settings, WorkspaceVolume
from sandboxrun._types import ExecRequest

WS = "/srv/ws/t1"
REQUEST = ExecRequest(argv=("sh", "-c", "cat"), stdin=b"{}", workdir=WS, mounts=(WS,),
                      timeout=10)  # fmt: skip


def backend(**overrides: object) -> KubernetesBackend:
    volumes = (WorkspaceVolume(kind="pvc", source="ws", path="/srv/ws"),)
    return KubernetesBackend(Settings(kube_volumes=volumes, **overrides))  # type: ignore[arg-type]


def command(manifest: dict[str, object]) -> list[str]:
    return list(manifest["spec"]["containers"][0]["command"])  # type: ignore[index]


def test_the_pod_runs_the_hook_behind_the_helpers_gate() -> None:
    """The helper holds the hook until its event arrives; its own deadline and Landlock
    list come as on Docker; the cluster's deadline allows for the wait at the gate."""
    manifest = backend()._manifest(REQUEST, "p", START_LIMIT)
    argv = command(manifest)
    assert argv[0] == HELPER.path and argv[-4:] == ["--", "sh", "-c", "cat"]
    assert argv[argv.index("--gate") + 1] == f"{START_LIMIT:g}"
    assert argv[argv.index("--deadline") + 1] == "15"  # the hook's 10 s + the helper's grace
    assert "/tmp" in argv and "--landlock-optional" not in argv
    assert manifest["spec"]["activeDeadlineSeconds"] == 10 + START_LIMIT + GRACE  # type: ignore[index]


def test_gvisor_pods_run_without_landlock() -> None:
    """gVisor has no Landlock: the helper is told it is optional there, as on Docker."""
    assert "--landlock-optional" in command(
        backend(runtime_class="gvisor")._manifest(REQUEST, "p", 5)
    )


def test_the_pool_key_ignores_the_name_labels_and_event_only() -> None:
    """Two pods for the same request share a key (new names, labels, deadlines); another
    command or limit gets another pool, never a pod made for something else."""
    b = backend(pool_size=1)
    b.warm = True
    first, again = b._pooled(REQUEST), b._pooled(dataclasses.replace(REQUEST, stdin=b"x"))
    other = b._pooled(dataclasses.replace(REQUEST, argv=("true",)))
    assert first and again and other
    assert first[0] == again[0] != other[0]
    one, two = first[1](), first[1]()
    assert one["metadata"]["name"] != two["metadata"]["name"]
    assert pool_key({"spec": one["spec"]}) == pool_key({"spec": two["spec"]})
    b.close()
