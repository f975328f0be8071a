"""The fake cluster (tests/kubefake) behaves like a real API server and kubelet for the
calls the Kubernetes backend makes: every test drives it through the official client
only, with the hardened hook pod of `_backends/kubernetes/pod.py`."""

from __future__ import annotations

import contextlib
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import docker.errors
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

from sandboxrun._backends.kubernetes.pod import WorkspaceVolume, pod_manifest
from sandboxrun._settings import Settings
from sandboxrun._types import ExecRequest
from tests.kubefake.fixtures import KubeCluster, docker_client
from tests.kubefake.podspec import CLUSTER, LABEL, expand

EMPTY_CONFIG = Path(tempfile.mkdtemp(prefix="kubefake-")) / "config.toml"
EMPTY_CONFIG.write_text("")
WAIT = 120  # seconds: generous bounds, never speed assertions


def core(cluster: KubeCluster, token: str | None = None) -> client.CoreV1Api:
    return client.CoreV1Api(cluster.client(token))


def manifest(
    cluster: KubeCluster, *argv: str, name: str = "hook-1", **values: Any
) -> dict[str, Any]:
    settings = Settings.load(config=EMPTY_CONFIG, **values.pop("settings", {}))
    request = ExecRequest(argv=argv, stdin=b"", workdir="/", timeout=30, **values)
    return pod_manifest(request, settings, name=name, namespace=cluster.namespace, now=time.time())


def wait_for(api: client.CoreV1Api, cluster: KubeCluster, name: str, done: Any) -> Any:
    """Watch the pod until `done(pod)`; the pod (a V1Pod)."""
    w = watch.Watch()
    for event in w.stream(api.list_namespaced_pod, cluster.namespace,
                          field_selector=f"metadata.name={name}", timeout_seconds=WAIT):  # fmt: skip
        if done(event["object"]):
            w.stop()
            return event["object"]
    raise AssertionError(f"{name}: not done within {WAIT}s: {cluster.pods()}")


def phase(*phases: str) -> Any:
    return lambda pod: pod.status.phase in phases


def attached(api: client.CoreV1Api, cluster: KubeCluster, name: str) -> Any:
    return stream(api.connect_get_namespaced_pod_attach, name, cluster.namespace, container="hook",
                  stdin=True, stdout=True, stderr=True, tty=False, binary=True,
                  _preload_content=False)  # fmt: skip


def hang_up(ws: Any) -> None:
    """Close the attach socket. After the server closed first, `WSClient.close()` alone
    leaves the TCP socket open (websocket-client's close returns early once it answered
    the server's close frame): shut it down too."""
    ws.close()
    ws.sock.shutdown()


def test_a_hook_pod_runs_attached_and_reports_its_exit(kube_cluster: KubeCluster) -> None:
    """Create the hardened pod, watch it to Running, attach (v5), write stdin, close it
    through the close channel, read stdout and stderr, find the exit code in the status."""
    api = core(kube_cluster)
    body = manifest(
        kube_cluster,
        "sh",
        "-c",
        "cat > /tmp/in; cat /tmp/in; printf %s '$(HOME) $$ $'; echo oops >&2; exit 3",
    )
    api.create_namespaced_pod(kube_cluster.namespace, body)
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    ws = attached(api, kube_cluster, "hook-1")
    assert ws.subprotocol == "v5.channel.k8s.io"
    ws.write_stdin(b'{"hook": "PreToolUse"}\n')
    ws.close_channel(0)
    ws.run_forever(timeout=WAIT)
    assert not ws.is_open()
    hang_up(ws)
    assert ws.read_stdout() == b'{"hook": "PreToolUse"}\n$(HOME) $$ $'
    assert ws.read_stderr() == b"oops\n"
    assert json.loads(ws.read_channel(3)) == {
        "metadata": {},
        "status": "Success",
    }  # attach: no exit code
    pod = wait_for(api, kube_cluster, "hook-1", phase("Succeeded", "Failed"))
    [status] = pod.status.container_statuses
    assert pod.status.phase == "Failed"
    assert status.state.terminated.exit_code == 3 and status.state.terminated.reason == "Error"
    [c] = kube_cluster.containers()
    host = c.attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Init"] is False and c.attrs["Config"]["User"] == "65534:65534"
    assert host["Memory"] == host["MemorySwap"] == 512 << 20 and host["NanoCpus"] == 10**9
    assert host["Tmpfs"]["/tmp"] == "rw,exec,nosuid,nodev,mode=1777,size=67108864"


@pytest.mark.parametrize("kind", ["pvc", "hostPath"])
def test_a_workspace_volume_is_read_only(
    kube_cluster: KubeCluster, tmp_path: Path, kind: str
) -> None:
    """A ReadOnlyMany claim (with subPath) or a hostPath folder reads, and refuses
    writes; exit 0 is Succeeded with reason Completed."""
    (tmp_path / "tenant-a").mkdir()
    (tmp_path / "tenant-a" / "README.md").write_text("hello\n")
    tmp_path.chmod(0o755)
    kube_cluster.claims["workspaces"] = str(tmp_path)
    ws = (WorkspaceVolume("pvc", "workspaces", "/srv/ws", sub_path="tenant-a") if kind == "pvc"
          else WorkspaceVolume("hostPath", str(tmp_path / "tenant-a"), "/srv/ws"))  # fmt: skip
    api = core(kube_cluster)
    script = (
        "cat >/dev/null; cat /srv/ws/README.md; touch /srv/ws/x 2>/dev/null && echo writable; pwd"
    )
    body = pod_manifest(ExecRequest(argv=("sh", "-c", script), stdin=b"", workdir="/srv/ws",
                                    mounts=("/srv/ws",)), Settings.load(config=EMPTY_CONFIG),
                        name="ws", volumes=(ws,), namespace=kube_cluster.namespace, now=time.time())  # fmt: skip
    api.create_namespaced_pod(kube_cluster.namespace, body)
    wait_for(api, kube_cluster, "ws", phase("Running"))
    ws_client = attached(api, kube_cluster, "ws")
    ws_client.close_channel(0)
    ws_client.run_forever(timeout=WAIT)
    hang_up(ws_client)
    assert ws_client.read_stdout() == b"hello\n/srv/ws\n"
    pod = wait_for(api, kube_cluster, "ws", phase("Succeeded", "Failed"))
    assert pod.status.phase == "Succeeded"
    assert pod.status.container_statuses[0].state.terminated.reason == "Completed"


def test_two_claims_of_one_pod_with_one_resource_version_one_wins(
    kube_cluster: KubeCluster,
) -> None:
    """Two relabels racing with the same resourceVersion: exactly one gets 409 Conflict."""
    api = core(kube_cluster)
    created = api.create_namespaced_pod(
        kube_cluster.namespace, manifest(kube_cluster, "sleep", "60")
    )
    pod = wait_for(api, kube_cluster, "hook-1", phase("Running"))
    rv = pod.metadata.resource_version
    assert int(rv) > int(created.metadata.resource_version)
    results: dict[str, Any] = {}
    start = threading.Barrier(2)

    def claim(who: str) -> None:
        start.wait()
        try:
            body = {"metadata": {"resourceVersion": rv, "labels": {"claimed-by": who}}}
            results[who] = core(kube_cluster).patch_namespaced_pod(
                "hook-1", kube_cluster.namespace, body
            )
        except ApiException as exc:
            results[who] = exc

    threads = [threading.Thread(target=claim, args=(who,)) for who in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    lost = [r for r in results.values() if isinstance(r, ApiException)]
    won = [r for r in results.values() if not isinstance(r, ApiException)]
    assert len(lost) == 1 and len(won) == 1, results
    assert lost[0].status == 409 and json.loads(lost[0].body)["reason"] == "Conflict"
    now = api.read_namespaced_pod("hook-1", kube_cluster.namespace)
    assert now.metadata.labels["claimed-by"] == won[0].metadata.labels["claimed-by"]
    # A merge patch without a precondition always applies; a JSON patch `test` guards too.
    api.patch_namespaced_pod("hook-1", kube_cluster.namespace, {"metadata": {"labels": {"x": None}}},
                             _content_type="application/merge-patch+json")  # fmt: skip
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_pod("hook-1", kube_cluster.namespace,
                                 [{"op": "test", "path": "/metadata/labels/claimed-by", "value": "nobody"}])  # fmt: skip
    assert err.value.status == 422


def test_selectors_and_watch_from_a_resource_version(kube_cluster: KubeCluster) -> None:
    """labelSelector (=, !=, in, notin, key, !key) and fieldSelector on list; a watch
    from a resourceVersion replays only what came after it, and sees DELETED."""
    api = core(kube_cluster)
    ns = kube_cluster.namespace
    for name, tier in (("p-a", "a"), ("p-b", "b")):
        body = manifest(kube_cluster, "sleep", "60", name=name)
        body["metadata"]["labels"]["tier"] = tier
        api.create_namespaced_pod(ns, body)
    listed = api.list_namespaced_pod(ns)

    def names(selector: str) -> list[str]:
        return sorted(
            p.metadata.name for p in api.list_namespaced_pod(ns, label_selector=selector).items
        )

    assert names("tier=a") == ["p-a"] and names("tier!=a") == ["p-b"]
    assert names("tier in (a, b)") == ["p-a", "p-b"] and names("tier notin (a)") == ["p-b"]
    assert names("tier,sandboxrun.managed=1") == ["p-a", "p-b"] and names("!tier") == []
    assert [
        p.metadata.name
        for p in api.list_namespaced_pod(ns, field_selector="metadata.name=p-b").items
    ] == ["p-b"]
    since = listed.metadata.resource_version
    api.delete_namespaced_pod("p-a", ns, grace_period_seconds=0)
    seen = []
    w = watch.Watch()
    for event in w.stream(api.list_namespaced_pod, ns, label_selector="tier=a",
                          resource_version=since, timeout_seconds=WAIT):  # fmt: skip
        seen.append(event["type"])
        if event["type"] == "DELETED":
            w.stop()
    assert seen[-1] == "DELETED" and "ADDED" not in seen
    with pytest.raises(ApiException) as err:
        api.read_namespaced_pod("p-a", ns)
    assert err.value.status == 404 and json.loads(err.value.body)["reason"] == "NotFound"
    with pytest.raises(ApiException) as err:
        api.delete_namespaced_pod("p-b", ns, body=client.V1DeleteOptions(
            grace_period_seconds=0, preconditions=client.V1Preconditions(uid="not-its-uid")))  # fmt: skip
    assert err.value.status == 409
    with pytest.raises(ApiException) as err:
        api.create_namespaced_pod(ns, manifest(kube_cluster, "true", name="p-b"))
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "AlreadyExists"
    with pytest.raises(ApiException) as err:
        api.create_namespaced_pod(ns, manifest(kube_cluster, "true", name="Not_A_Name"))
    assert err.value.status == 422 and json.loads(err.value.body)["reason"] == "Invalid"


def test_the_deadline_kills_the_pod(kube_cluster: KubeCluster) -> None:
    """`activeDeadlineSeconds` may be shortened on a running pod (a claimed warm pod),
    never lengthened (422); when it passes, the pod is Failed, DeadlineExceeded."""
    api = core(kube_cluster)
    body = manifest(kube_cluster, "sleep", "600")
    body["spec"]["activeDeadlineSeconds"] = 600
    api.create_namespaced_pod(kube_cluster.namespace, body)
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_pod(
            "hook-1", kube_cluster.namespace, {"spec": {"activeDeadlineSeconds": 601}}
        )
    assert err.value.status == 422
    api.patch_namespaced_pod(
        "hook-1", kube_cluster.namespace, {"spec": {"activeDeadlineSeconds": 2}}
    )
    pod = wait_for(api, kube_cluster, "hook-1", phase("Failed"))
    assert pod.status.reason == "DeadlineExceeded"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 137


def test_an_image_the_node_lacks_leaves_the_pod_pending(kube_cluster: KubeCluster) -> None:
    api = core(kube_cluster)
    body = manifest(kube_cluster, "true", settings={"image": "sandboxrun/absent:kubefake"})
    api.create_namespaced_pod(kube_cluster.namespace, body)

    def waiting(pod: Any) -> bool:
        statuses = pod.status.container_statuses or []
        return bool(
            statuses
            and statuses[0].state.waiting
            and statuses[0].state.waiting.reason == "ErrImagePull"
        )

    pod = wait_for(api, kube_cluster, "hook-1", waiting)
    assert pod.status.phase == "Pending" and not kube_cluster.containers()
    with pytest.raises(ApiException) as err:  # nothing to attach to yet
        attached(api, kube_cluster, "hook-1")
    assert "400" in str(err.value)


def test_who_may_do_what(kube_cluster: KubeCluster) -> None:
    """A token the server does not know: 401; the Role's token outside its namespace,
    or on what the Role does not grant (the namespace object): 403."""
    version = client.VersionApi(kube_cluster.client()).get_code()
    assert version.major == "1"
    with pytest.raises(ApiException) as err:
        core(kube_cluster, token="wrong").list_namespaced_pod(kube_cluster.namespace)
    assert err.value.status == 401
    kube_cluster.add_namespace("elsewhere")
    for call in (lambda api: api.list_namespaced_pod("elsewhere"),
                 lambda api: api.read_namespace(kube_cluster.namespace)):  # fmt: skip
        with pytest.raises(ApiException) as err:
            call(core(kube_cluster))
        assert err.value.status == 403 and json.loads(err.value.body)["reason"] == "Forbidden"
    assert (
        core(kube_cluster, kube_cluster.admin_token)
        .read_namespace(kube_cluster.namespace)
        .status.phase
        == "Active"
    )


def test_teardown_leaves_no_container(tmp_path: Path) -> None:
    engine = docker_client()
    cluster = KubeCluster(engine, tmp_path)
    cluster.start()
    try:
        api = core(cluster)
        api.create_namespaced_pod(cluster.namespace, manifest(cluster, "sleep", "600"))
        wait_for(api, cluster, "hook-1", phase("Running"))
        assert len(cluster.containers()) == 1
    finally:
        cluster.stop()
    assert not engine.containers.list(all=True, filters={"label": f"{CLUSTER}={cluster.id}"})
    engine.close()


def test_output_streams_both_ways_and_a_flood_arrives_whole(kube_cluster: KubeCluster) -> None:
    """A line the hook writes reaches the client while its stdin is still open; then
    8 MiB after stdin closed, all of it, in order. (What a container prints before the
    attach is lost, as on a cluster: the hook reads its event first.)"""
    api = core(kube_cluster)
    script = (
        'read a; echo "got $a"; read b; echo "then $b"; head -c 8388608 /dev/zero; echo end >&2'
    )
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "sh", "-c", script))
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    ws = attached(api, kube_cluster, "hook-1")
    try:
        ws.write_stdin(b"one\n")
        assert ws.readline_stdout(timeout=WAIT) == b"got one"
        ws.write_stdin(b"two\n")
        ws.close_channel(0)
        out = bytearray()
        deadline = time.monotonic() + WAIT
        while ws.is_open() and time.monotonic() < deadline:
            ws.update(timeout=1)
            out += ws.read_stdout(timeout=0)
        out += ws.read_stdout(timeout=0)
        assert bytes(out) == b"then two\n" + bytes(8 << 20)
        assert ws.read_stderr() == b"end\n"
    finally:
        hang_up(ws)


def test_the_hook_image_gate_runs_as_the_command(kube_cluster: KubeCluster) -> None:
    """The image's init helper with `--gate` as the pod's command (no docker-init, the
    pod's user): the hook starts on its event, as on the warm path."""
    engine = docker_client()
    helper = engine.api.inspect_image("sandboxrun/hooks:latest")["Config"]["Labels"]
    engine.close()
    path = helper["sandboxrun.seccomp-helper"]
    options = ["--gate", "60", "--deadline", "60", "--write", "/tmp", "--write", "/dev",
               "--write", "/proc", "--landlock-optional"]  # fmt: skip
    api = core(kube_cluster)
    body = manifest(kube_cluster, path, *options, "--", "sh", "-c", "cat; id -u")
    api.create_namespaced_pod(kube_cluster.namespace, body)
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    ws = attached(api, kube_cluster, "hook-1")
    try:
        ws.write_stdin(b"{}\n")
        ws.close_channel(0)
        ws.run_forever(timeout=WAIT)
        assert ws.read_stdout() == b"{}\n65534\n", ws.read_stderr()
    finally:
        hang_up(ws)
    pod = wait_for(api, kube_cluster, "hook-1", phase("Succeeded", "Failed"))
    assert pod.status.phase == "Succeeded"


def test_a_hook_over_its_memory_is_oom_killed(kube_cluster: KubeCluster) -> None:
    api = core(kube_cluster)
    body = manifest(
        kube_cluster, "sh", "-c", "head -c 400m /dev/zero | tail", settings={"memory": "64m"}
    )
    api.create_namespaced_pod(kube_cluster.namespace, body)
    pod = wait_for(api, kube_cluster, "hook-1", phase("Succeeded", "Failed"))
    terminated = pod.status.container_statuses[0].state.terminated
    assert pod.status.phase == "Failed" and terminated.reason == "OOMKilled", terminated


def test_a_graceful_delete_marks_then_removes(kube_cluster: KubeCluster) -> None:
    """grace > 0: the pod gets a deletionTimestamp, the container is stopped (SIGKILL
    after the grace: `sleep` as pid 1 ignores SIGTERM), then the pod is DELETED."""
    api = core(kube_cluster)
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "sleep", "600"))
    pod = wait_for(api, kube_cluster, "hook-1", phase("Running"))
    marked = api.delete_namespaced_pod("hook-1", kube_cluster.namespace, grace_period_seconds=1)
    assert marked.metadata.deletion_timestamp is not None
    seen = []
    w = watch.Watch()
    for event in w.stream(api.list_namespaced_pod, kube_cluster.namespace,
                          resource_version=pod.metadata.resource_version, timeout_seconds=WAIT):  # fmt: skip
        seen.append(event["type"])
        if event["type"] == "DELETED":
            w.stop()
    assert seen[0] == "MODIFIED" and seen[-1] == "DELETED"
    assert not kube_cluster.containers() and not kube_cluster.pods()


def test_what_the_server_refuses(kube_cluster: KubeCluster) -> None:
    """A pod's spec is immutable (422); a watch from a resourceVersion older than the
    history is 410 Expired; a claim nobody made leaves the pod unschedulable."""
    api = core(kube_cluster)
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "sleep", "600"))
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_pod("hook-1", kube_cluster.namespace, {"spec": {"hostNetwork": True}})
    assert (
        err.value.status == 422 and "may not change fields" in json.loads(err.value.body)["message"]
    )
    kube_cluster.store.history.clear()
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(api.list_namespaced_pod, kube_cluster.namespace,
                                      resource_version="1", timeout_seconds=5):  # fmt: skip
            pass
    assert err.value.status == 410
    ws = WorkspaceVolume("pvc", "nobody-made-me", "/srv/ws")
    body = pod_manifest(ExecRequest(argv=("true",), stdin=b"", workdir="/"),
                        Settings.load(config=EMPTY_CONFIG), name="orphan", volumes=(ws,),
                        namespace=kube_cluster.namespace, now=time.time())  # fmt: skip
    api.create_namespaced_pod(kube_cluster.namespace, body)

    def unschedulable(pod: Any) -> bool:
        return any(c.reason == "Unschedulable" for c in pod.status.conditions or [])

    pod = wait_for(api, kube_cluster, "orphan", unschedulable)
    assert pod.status.phase == "Pending" and pod.spec.node_name is None


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("$(A)", "a"), ("$$(A)", "$(A)"), ("$(MISSING)", "$(MISSING)"), ("$$", "$"),
        ("$", "$"), ("a$b", "a$b"), ("$(A", "$(A"), ("$$$$(A)", "$$(A)"), ("x$(A)$(A)y", "xaay"),
    ],
)  # fmt: skip
def test_the_kubelet_expansion(text: str, expanded: str) -> None:
    assert expand(text, {"A": "a"}.get) == expanded


def test_v4_is_served_to_a_client_that_offers_only_v4(kube_cluster: KubeCluster) -> None:
    """An older client (v4: no close channel) gets v4; its stdin ends with the socket,
    so the hook here reads one line only; the status comes on channel 3 all the same."""
    from websocket import ABNF, create_connection

    api = core(kube_cluster)
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "head", "-n1"))
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    url = kube_cluster.host.replace("http://", "ws://") + (
        f"/api/v1/namespaces/{kube_cluster.namespace}/pods/hook-1/attach"
        "?container=hook&stdin=true&stdout=true&stderr=true"
    )
    sock = create_connection(url, header=[f"Authorization: Bearer {kube_cluster.token}"],
                             subprotocols=["v4.channel.k8s.io"], timeout=WAIT)  # fmt: skip
    try:
        assert sock.getsubprotocol() == "v4.channel.k8s.io"
        sock.send(b"\x00line\n", opcode=ABNF.OPCODE_BINARY)
        frames = []
        while (frame := sock.recv_data(control_frame=True))[0] != ABNF.OPCODE_CLOSE:
            frames.append(frame[1])
    finally:
        sock.shutdown()
    assert b"".join(f[1:] for f in frames if f[:1] == b"\x01") == b"line\n"
    assert json.loads(frames[-1][1:]) == {"metadata": {}, "status": "Success"}


def test_stdin_once_closes_stdin_when_the_first_attach_ends(kube_cluster: KubeCluster) -> None:
    """A client that goes away without closing stdin (a killed sandboxrun): the hook
    sees EOF all the same (`stdinOnce`), ends, and no later attach is possible."""
    api = core(kube_cluster)
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "cat"))
    wait_for(api, kube_cluster, "hook-1", phase("Running"))
    ws = attached(api, kube_cluster, "hook-1")
    ws.write_stdin(b"partial")
    hang_up(ws)
    pod = wait_for(api, kube_cluster, "hook-1", phase("Succeeded", "Failed"))
    assert pod.status.phase == "Succeeded"
    with pytest.raises(ApiException) as err:
        attached(api, kube_cluster, "hook-1")
    assert "400" in str(err.value)


def test_generate_name_and_image_never_pull(kube_cluster: KubeCluster) -> None:
    """`generateName` gets a suffix; `imagePullPolicy: Never` for an absent image waits
    with ErrImageNeverPull."""
    api = core(kube_cluster)
    body = manifest(kube_cluster, "true", settings={"image": "sandboxrun/absent:kubefake"})
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = "hook-"
    body["spec"]["containers"][0]["imagePullPolicy"] = "Never"
    name = api.create_namespaced_pod(kube_cluster.namespace, body).metadata.name
    assert name.startswith("hook-") and len(name) == len("hook-") + 5

    def never(pod: Any) -> bool:
        statuses = pod.status.container_statuses or []
        return bool(statuses and statuses[0].state.waiting
                    and statuses[0].state.waiting.reason == "ErrImageNeverPull")  # fmt: skip

    assert wait_for(api, kube_cluster, name, never).status.phase == "Pending"


def test_a_command_that_cannot_start_fails_the_pod(kube_cluster: KubeCluster) -> None:
    """No such executable: terminated with StartError and exit code 128, as containerd's
    kubelet reports it; the pod Failed (restartPolicy Never)."""
    api = core(kube_cluster)
    api.create_namespaced_pod(kube_cluster.namespace, manifest(kube_cluster, "/no/such/hook"))
    pod = wait_for(api, kube_cluster, "hook-1", phase("Failed"))
    terminated = pod.status.container_statuses[0].state.terminated
    assert terminated.reason == "StartError" and terminated.exit_code == 128
    assert "/no/such/hook" in terminated.message


def test_hooks_that_never_read_stdin_do_not_hang_the_relay(kube_cluster: KubeCluster) -> None:
    """Eight hooks at once ignore a 1 MiB event (more than a pipe holds): each still
    prints, ends, and its attach closes. Each is attached as soon as it runs, and sleeps
    long enough to be (a loaded machine took over a second to see all eight run: the
    first had ended, and an attach to a completed pod is refused)."""
    api = core(kube_cluster)
    names = [f"deaf-{i}" for i in range(8)]
    for name in names:
        body = manifest(kube_cluster, "sh", "-c", "sleep 10; echo done", name=name)
        api.create_namespaced_pod(kube_cluster.namespace, body)
    outputs: dict[str, bytes] = {}

    def run(name: str) -> None:
        wait_for(api, kube_cluster, name, phase("Running"))
        ws = attached(api, kube_cluster, name)
        try:
            ws.write_stdin(bytes(1 << 20))
            ws.close_channel(0)
            ws.run_forever(timeout=WAIT)
            outputs[name] = ws.read_stdout()
        finally:
            hang_up(ws)

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert outputs == dict.fromkeys(names, b"done\n")


def test_a_cluster_sweeps_what_a_killed_test_run_left(tmp_path: Path) -> None:
    """A container of a fake cluster whose test process is gone is removed when the
    next cluster starts; one of a live process stays."""
    from sandboxrun._backends.labels import PID, STARTED, owner_labels

    engine = docker_client()
    mine = {LABEL: "1", CLUSTER: "gone", **owner_labels()}
    dead = {**mine, PID: "999999999", STARTED: "1"}  # no such process
    made = [engine.api.create_container("sandboxrun/hooks:latest", ["true"], labels=labels)["Id"]
            for labels in (dead, mine)]  # fmt: skip
    cluster = KubeCluster(engine, tmp_path)
    try:
        cluster.start()
        left = {
            c["Id"] for c in engine.api.containers(all=True, filters={"label": f"{CLUSTER}=gone"})
        }
        assert left == {made[1]}
    finally:
        cluster.stop()
        for ident in made:
            with contextlib.suppress(docker.errors.NotFound):
                engine.api.remove_container(ident, force=True)
        engine.close()
