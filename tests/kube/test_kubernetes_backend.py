"""The real KubernetesBackend against a real HTTP API (tests/kubefake: the official
client's requests, watches and the v5.channel.k8s.io attach websocket, each pod a real
container of the local engine). What these prove and what only a live cluster can is
said in tests/kube/README.md."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker
import pytest
import yaml
from kubernetes import client

from sandboxrun._backends.kubernetes.backend import KubernetesBackend
from sandboxrun._backends.kubernetes.lifecycle import claim, claimed_by_other
from sandboxrun._backends.labels import CLAIMED, DEADLINE, HOOK
from sandboxrun._errors import Cancelled, EngineError, ImageMissing
from sandboxrun._settings import Settings, WorkspaceVolume
from sandboxrun._types import Cancel, ExecRequest

from .. import side_by_side
from ..kubefake import attach as fake_attach
from .conftest import KubeCluster

BOUND = 120  # seconds: generous bounds for a loaded machine, never a speed claim
CLAUDE_GUARD = """#!/bin/sh
input=$(cat)
case "$input" in *"rm -rf"*) echo "rm -rf is not allowed" >&2; exit 2;; esac
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "seen"}}'
"""
CLINE_HOOK = """#!/bin/sh
input=$(cat)
case "$input" in
  *"rm -rf"*) echo '{"cancel": true, "errorMessage": "no rm -rf"}';;
  *) echo '{"cancel": false, "contextModification": "workspace: '"$(cat README.md)"'"}';;
esac
"""


@pytest.fixture
def cluster(kube_cluster: KubeCluster) -> Iterator[KubeCluster]:
    """The fake cluster; afterwards no pod of ours may be left (every test deletes what
    it made)."""
    yield kube_cluster
    end = time.monotonic() + 30
    while kube_cluster.pods() and time.monotonic() < end:
        time.sleep(0.2)
    assert [p["metadata"]["name"] for p in kube_cluster.pods()] == []


@pytest.fixture
def ws(tmp_path: Path, cluster: KubeCluster) -> Path:
    """A workspace, given to the cluster as the ReadOnlyMany claim `workspace`."""
    tmp_path.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("hello from the workspace\n")
    cluster.claims["workspace"] = str(ws)
    return ws


def settings(cluster: KubeCluster, ws: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "backend": "kubernetes", "kubeconfig": str(cluster.kubeconfig),
        "kube_namespace": cluster.namespace,
        "kube_volumes": (WorkspaceVolume(kind="pvc", source="workspace", path=str(ws)),),
    }  # fmt: skip
    return Settings(**(values | overrides))


def request(ws: Path, script: str, stdin: bytes = b"{}", timeout: float = 30) -> ExecRequest:
    return ExecRequest(argv=("sh", "-c", script), stdin=stdin, workdir=str(ws),
                       mounts=(str(ws),), timeout=timeout, label="test")  # fmt: skip


def config_file(tmp_path: Path, cluster: KubeCluster | None, ws: Path, extra: str = "") -> Path:
    """A config file for the command line: the cluster's (or, None, the Docker default)."""
    path = tmp_path / ("kube.toml" if cluster else "docker.toml")
    text = extra
    if cluster is not None:
        text += (
            f'backend = "kubernetes"\nkubeconfig = "{cluster.kubeconfig}"\n'
            f'kube_namespace = "{cluster.namespace}"\n'
            f'[[kube_volumes]]\nkind = "pvc"\nsource = "workspace"\npath = "{ws}"\n'
        )
    path.write_text(text)
    return path


def cli(
    config: Path, home: Path, *args: str, stdin: str, cwd: Path
) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "sandboxrun", args[0], "--config", str(config), "--home",
         str(home), "--no-serve", *args[1:]],
        input=stdin, capture_output=True, text=True, timeout=BOUND, cwd=cwd,
    )  # fmt: skip


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The CLI's JSON without what differs between two runs of the same hook."""
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for h in result["hooks"]:
        h.pop("durationMs", None)
    return dict(result)


def backend_of(s: Settings, warm: bool = False) -> KubernetesBackend:
    return KubernetesBackend(s, warm=warm)


# -- the same answers as Docker ------------------------------------------------------


@pytest.mark.parametrize("event", ["rm -rf /", "ls"])
def test_a_cline_hook_answers_as_on_docker(
    cluster: KubeCluster, ws: Path, tmp_path: Path, event: str
) -> None:
    """`sandboxrun run` with backend = "kubernetes" runs a Cline hook in a pod (reading
    the workspace through the claim) and answers exactly as the Docker backend does."""
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(CLINE_HOOK)
    (hooks / "PreToolUse").chmod(0o755)
    stdin = json.dumps({"preToolUse": {"toolName": "execute_command",
                                       "parameters": {"command": event}}})  # fmt: skip
    args = ("run", "PreToolUse", "--workspace", str(ws))
    kube = cli(config_file(tmp_path, cluster, ws), tmp_path / "home", *args, stdin=stdin, cwd=ws)
    docker = cli(config_file(tmp_path, None, ws), tmp_path / "home", *args, stdin=stdin, cwd=ws)
    assert answer(kube) == answer(docker)
    assert answer(kube)["cancel"] is (event == "rm -rf /")
    if event == "ls":
        assert "hello from the workspace" in answer(kube)["contextModification"]


@pytest.mark.parametrize("command", ["rm -rf /", "ls"])
def test_a_claude_hook_answers_as_on_docker(
    cluster: KubeCluster, ws: Path, tmp_path: Path, command: str
) -> None:
    """A Claude project hook: exit 2 blocks with its stderr as the reason, JSON output is
    read, on Kubernetes as on Docker."""
    (ws / ".claude" / "hooks").mkdir(parents=True)
    (ws / ".claude" / "hooks" / "guard.sh").write_text(CLAUDE_GUARD)
    (ws / ".claude" / "hooks" / "guard.sh").chmod(0o755)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./.claude/hooks/guard.sh"}]}
    ]}}))  # fmt: skip
    stdin = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(ws),
                        "tool_input": {"command": command}})  # fmt: skip
    args = ("run", "PreToolUse", "--agent", "claude")
    kube = cli(config_file(tmp_path, cluster, ws), tmp_path / "home", *args, stdin=stdin, cwd=ws)
    docker = cli(config_file(tmp_path, None, ws), tmp_path / "home", *args, stdin=stdin, cwd=ws)
    assert answer(kube) == answer(docker)
    blocked = answer(kube)
    assert blocked["blocked"] is (command == "rm -rf /")
    if command == "rm -rf /":
        assert blocked["reason"] == "rm -rf is not allowed"
        assert [h["exitCode"] for h in blocked["hooks"]] == [2]


# -- what a hook does is data ---------------------------------------------------------


def test_exit_code_stdout_stderr_and_the_read_only_workspace(
    cluster: KubeCluster, ws: Path
) -> None:
    """The event arrives on stdin (then EOF), stdout and stderr come back apart, the exit
    code is the hook's, the workspace is read-only, the hook is not root."""
    script = "cat; echo; id -u; echo oops >&2; touch x 2>/dev/null || echo ro >&2; exit 3"
    with backend_of(settings(cluster, ws)) as b:
        r = b.run(request(ws, script, stdin=b'{"event": 1}'))
    assert (r.exit_code, r.timed_out, r.start_error, r.warm) == (3, False, None, False)
    out = r.stdout.decode().split("\n")
    assert out[0] == '{"event": 1}' and out[1] != "0"
    assert r.stderr == b"oops\nro\n"


def test_a_timeout_is_data_and_the_pod_is_gone(cluster: KubeCluster, ws: Path) -> None:
    """A hook past its deadline: `timed_out`, and its pod deleted."""
    with backend_of(settings(cluster, ws)) as b:
        started = time.monotonic()
        r = b.run(request(ws, "echo started; sleep 60", timeout=2))
        assert time.monotonic() - started < BOUND / 2
    assert r.timed_out and r.stdout == b"started\n"
    assert cluster.pods() == []


def test_an_output_flood_is_killed_and_bounded(cluster: KubeCluster, ws: Path) -> None:
    """Past `output_limit` the pod is deleted (`killed_reason`); what is kept is the tail."""
    s = settings(cluster, ws, output_limit=4 << 20, stdout_tail=64 << 10)
    with backend_of(s) as b:
        r = b.run(request(ws, "yes flood", timeout=60))
    assert r.killed_reason and "output_limit" in r.killed_reason
    assert r.output_truncated and not r.timed_out
    assert len(r.stdout) <= 64 << 10 and b"flood\nflood\n" in r.stdout


def test_out_of_memory_is_reported_from_the_pods_status(cluster: KubeCluster, ws: Path) -> None:
    """A hook past its memory limit: `oom_killed`, read from the container's terminated
    state (reason OOMKilled), not a timeout."""
    with backend_of(settings(cluster, ws, memory="64m")) as b:
        r = b.run(request(ws, "python3 -c 'x = bytearray(512 << 20); print(len(x))'"))
    assert r.oom_killed and not r.timed_out and r.exit_code != 0, r


def test_abort_deletes_the_pods_of_runs_in_flight(cluster: KubeCluster, ws: Path) -> None:
    """`abort()` (we are being stopped) deletes the pod of a run still going; the run
    ends at once instead of at its deadline."""
    with backend_of(settings(cluster, ws)) as b:
        done = threading.Event()

        def run() -> None:
            with contextlib.suppress(Exception):  # its pod vanished: an error, or data
                b.run(request(ws, "echo started; sleep 600", timeout=300))
            done.set()

        threading.Thread(target=run, daemon=True).start()
        wait_for(lambda: any(_running(p) for p in cluster.pods()))
        b.abort()
        assert done.wait(BOUND / 2)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_cancelled_run_loses_its_pod_only(cluster: KubeCluster, ws: Path, warm: bool) -> None:
    """A run whose `Cancel` is set (`serve`: its client hung up) has its pod deleted at
    once and ends in `Cancelled`; another run on the same backend is untouched."""
    cancel = Cancel()
    doomed = replace(request(ws, "sleep 600", timeout=300), label="doomed", cancel=cancel)
    other = replace(request(ws, "sleep 4; echo other", timeout=300), label="other")
    b = backend_of(settings(cluster, ws, pool_size=1 if warm else 0), warm=warm)

    def pods(label: str, claimed: bool = warm) -> set[str]:
        return {p["metadata"]["name"] for p in cluster.pods()
                if (p["metadata"].get("annotations") or {}).get(HOOK) == label and _running(p)
                and (CLAIMED in p["metadata"]["labels"] or not claimed)}  # fmt: skip

    threads: list[threading.Thread] = []
    try:
        if warm:
            assert b.prewarm(doomed, wait=BOUND)  # it runs in the pooled pod
        threads, outcomes = side_by_side.start(b, {"doomed": doomed, "other": other})
        names = wait_for(lambda: pods("other", claimed=False) and pods("doomed"))
        cancel.set()
        threads[0].join(BOUND / 2)
        assert isinstance(outcomes.get("doomed"), Cancelled), outcomes
        threads[1].join(BOUND)
        assert outcomes["other"].stdout == b"other\n" and outcomes["other"].exit_code == 0
        wait_for(lambda: not names & {p["metadata"]["name"] for p in cluster.pods()})
    finally:
        cancel.set()
        for t in threads:
            t.join(BOUND)
        b.close()


def test_a_missing_image_is_a_clear_error_and_blocks_fail_closed(
    cluster: KubeCluster, ws: Path, tmp_path: Path
) -> None:
    """An image the nodes cannot pull: `ImageMissing` naming it; through the command line
    with --fail-closed a block, never an allow."""
    b = backend_of(settings(cluster, ws, image="nope/absent:0"))
    with b, pytest.raises(ImageMissing, match="nope/absent:0"):
        b.run(request(ws, "true"))
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    (hooks / "PreToolUse").chmod(0o755)
    config = config_file(tmp_path, cluster, ws, extra='image = "nope/absent:0"\n')
    done = cli(config, tmp_path / "home", "run", "PreToolUse", "--workspace", str(ws),
               "--fail-closed", stdin="{}", cwd=ws)  # fmt: skip
    result = answer(done)
    assert result["cancel"] is True, result
    assert "nope/absent:0" in result["hooks"][0]["error"]


def test_an_image_without_the_helper_is_a_start_error(cluster: KubeCluster, ws: Path) -> None:
    """The pod's command is the image's helper: an image without it cannot start the
    container, and the run says so as a start error (a block under fail-closed)."""
    with backend_of(settings(cluster, ws, image="sandboxrun/base:bookworm")) as b:
        r = b.run(request(ws, "echo hi"))
    assert r.start_error and r.exit_code != 0 and r.stdout == b""


def test_a_killed_sandboxrun_leaves_a_pod_that_ends_and_is_swept(
    cluster: KubeCluster, ws: Path, tmp_path: Path
) -> None:
    """SIGKILL the CLI mid-hook: the pod carries `activeDeadlineSeconds` (the cluster ends
    it by itself) and the next sandboxrun's check sweeps it."""
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\nsleep 600\n")
    (hooks / "PreToolUse").chmod(0o755)
    config = config_file(tmp_path, cluster, ws, extra="timeout = 5\n")
    (tmp_path / "home").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandboxrun", "run", "--config", str(config), "--home",
         str(tmp_path / "home"), "--no-serve", "PreToolUse", "--workspace", str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ws,
    )  # fmt: skip
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"{}")
        proc.stdin.close()
        pod = wait_for(lambda: next((p for p in cluster.pods() if _running(p)), None))
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=BOUND)
    spec = pod["spec"]
    assert spec["activeDeadlineSeconds"] <= 5 + 120 + 20 + 1  # timeout + start + grace
    assert int(pod["metadata"]["labels"][DEADLINE]) <= time.time() + 5 + 120 + 20 + 1
    # The cluster ends it by itself at that deadline: shortened here (allowed on a
    # running pod) so the test need not wait for it.
    core = client.CoreV1Api(cluster.client())
    core.patch_namespaced_pod(pod["metadata"]["name"], cluster.namespace,
                              {"spec": {"activeDeadlineSeconds": 1}})  # fmt: skip
    ended = wait_for(lambda: [p for p in cluster.pods()
                              if (p.get("status") or {}).get("reason") == "DeadlineExceeded"])  # fmt: skip
    assert ended[0]["status"]["phase"] == "Failed"
    with backend_of(settings(cluster, ws)) as b:
        b.check()  # its owner is gone: the sweep deletes it (in the background)
    assert cluster.pods() == []


def test_hooks_run_side_by_side_on_one_backend(cluster: KubeCluster, ws: Path) -> None:
    """Several runs at once on one backend (the runner's parallel hooks): each gets its
    own event and its own output (each attach has a client of its own)."""
    results: dict[int, bytes] = {}
    with backend_of(settings(cluster, ws)) as b:

        def one(i: int) -> None:
            results[i] = b.run(request(ws, f"cat; echo {i}", stdin=b"event-%d;" % i)).stdout

        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
    assert results == {i: b"event-%d;%d\n" % (i, i) for i in range(4)}


def test_a_namespace_we_may_not_use_or_that_is_missing_is_named(
    cluster: KubeCluster, ws: Path, tmp_path: Path
) -> None:
    """The Role's namespace only: elsewhere the check names the verb it lacks; with every
    right, a namespace that does not exist is named."""
    with pytest.raises(EngineError, match=r"forbids list pods in namespace 'elsewhere'"):
        backend_of(settings(cluster, ws, kube_namespace="elsewhere")).check()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    admin["users"][0]["user"]["token"] = cluster.admin_token
    (tmp_path / "admin").write_text(yaml.safe_dump(admin))
    s = settings(cluster, ws, kube_namespace="absent", kubeconfig=str(tmp_path / "admin"))
    with pytest.raises(EngineError, match=r"namespace 'absent' does not exist"):
        backend_of(s).check()


def test_a_runtime_class_runs_the_hook_under_gvisor(cluster: KubeCluster, ws: Path) -> None:
    """runtime_class = "gvisor": the pod names the RuntimeClass (the fake node maps it to
    the engine's runsc) and the helper is told Landlock is optional there."""
    engine = docker.from_env()
    try:
        runtimes = engine.info().get("Runtimes") or {}
    finally:
        engine.close()
    if "runsc" not in runtimes:
        pytest.skip("the engine has no runsc")
    cluster.runtime_classes["gvisor"] = "runsc"
    with backend_of(settings(cluster, ws, runtime_class="gvisor")) as b:
        r = b.run(request(ws, "cat; dmesg 2>/dev/null | head -1 | grep -c gVisor || true"))
    assert (r.exit_code, r.start_error) == (0, None), r
    assert r.stdout == b"{}1\n"


def test_an_api_server_without_v5_attach_is_refused_clearly(
    cluster: KubeCluster, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that attaches with v4 only: stdin could not be closed without closing
    the hook's output too, so the run fails with one line saying so (no hook answer)."""
    monkeypatch.setattr(fake_attach, "V5", "v5.disabled.example")  # the fake serves v4 only
    with (
        backend_of(settings(cluster, ws)) as b,
        pytest.raises(EngineError, match=r"v4\.channel\.k8s\.io"),
    ):
        b.run(request(ws, "cat"))


# -- the warm path --------------------------------------------------------------------


def test_the_warm_path_claims_a_pooled_pod_and_close_deletes_the_pool(
    cluster: KubeCluster, ws: Path
) -> None:
    """warm=True: the first run goes cold and starts the pool; the second runs `warm` in
    the pod started ahead of time (claimed, then deleted), a replacement is started, and
    close() deletes the idle pods."""
    b = backend_of(settings(cluster, ws, pool_size=1), warm=True)
    try:
        req = request(ws, "cat; echo; cat README.md")
        b.claim_wait = 0  # the pool's first pod is still starting: go cold
        first = b.run(req)
        assert not first.warm and first.exit_code == 0
        assert b.prewarm(req, wait=BOUND)
        [pooled] = [p["metadata"]["name"] for p in cluster.pods() if _running(p)]
        second = b.run(req)
        assert second.warm and second.exit_code == 0
        assert second.stdout == first.stdout == b"{}\nhello from the workspace\n"
        assert b._pool is not None and b._pool.settle(BOUND)
        assert pooled not in [p["metadata"]["name"] for p in cluster.pods()]
        assert b.prewarm(req, wait=BOUND)  # the replacement
        assert b.stats()["idle"] == 1
    finally:
        b.close()
    assert cluster.pods() == []


def test_serve_runs_hooks_in_warm_pods_and_deletes_them_when_stopped(
    cluster: KubeCluster, ws: Path, tmp_path: Path
) -> None:
    """`sandboxrun serve` with backend = "kubernetes": the first run starts the pool, a
    later one runs in a pooled pod (`warm` in the report), the answers are the same, and
    SIGTERM deletes the pool's pods."""
    hooks = ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(CLINE_HOOK)
    (hooks / "PreToolUse").chmod(0o755)
    sock = Path(tempfile.mkdtemp(prefix="srv-", dir="/tmp")) / "serve.sock"
    config = config_file(tmp_path, cluster, ws, extra=f'serve_socket = "{sock}"\npool_size = 1\n')
    (tmp_path / "home").mkdir()
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen([sys.executable, "-m", "sandboxrun", "serve", "--config",
                               str(config)], stdout=subprocess.DEVNULL, stderr=log)  # fmt: skip
    run = [sys.executable, "-m", "sandboxrun", "run", "--config", str(config), "--home",
           str(tmp_path / "home"), "PreToolUse", "--workspace", str(ws)]  # fmt: skip
    stdin = json.dumps({"preToolUse": {"toolName": "execute_command",
                                       "parameters": {"command": "ls"}}})  # fmt: skip
    try:
        wait_for(sock.exists)
        answers = []
        for _ in range(2):
            done = subprocess.run(run, input=stdin, capture_output=True, text=True,
                                  timeout=BOUND, cwd=ws)  # fmt: skip
            answers.append(json.loads(done.stdout))
            wait_for(lambda: any(_running(p) for p in cluster.pods()))  # the pool's pod
        assert answers[1]["hooks"][0]["warm"] is True, answers
        for a in answers:
            for h in a["hooks"]:
                h.pop("durationMs"), h.pop("warm")
        assert answers[0] == answers[1] and answers[0]["cancel"] is False
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=BOUND)
        log.close()
        shutil.rmtree(sock.parent, ignore_errors=True)
    assert server.returncode == 0, (tmp_path / "serve.log").read_text()
    assert cluster.pods() == []


def test_two_claimers_race_for_one_pod_and_exactly_one_wins(cluster: KubeCluster, ws: Path) -> None:
    """Two sandboxruns (each its own client) saw the same pooled pod at the same
    resourceVersion and claim it at once: the API server's precondition lets one win."""
    s = settings(cluster, ws)
    owner, a, b = backend_of(s, warm=True), backend_of(s), backend_of(s)
    req = request(ws, "cat")
    try:
        name = owner._launch(owner._manifest(req, owner._name(), 60))
        seen = owner._seen[name]
        results: dict[str, bool] = {}
        barrier = threading.Barrier(2)

        def race(claimer: KubernetesBackend) -> None:
            barrier.wait()
            c = claimer.cluster
            results[claimer.run_id] = claim(c.core, c.namespace, name, seen, claimer.run_id)

        threads = [threading.Thread(target=race, args=(x,)) for x in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
        assert sorted(results.values()) == [False, True]
        [winner] = [run for run, won in results.items() if won]
        [pod] = cluster.pods()
        assert pod["metadata"]["labels"][CLAIMED] == winner
        loser = a if winner == b.run_id else b
        assert claimed_by_other(loser.cluster.core, cluster.namespace, name, loser.run_id)
        # A stale view loses too, even with no one else about.
        assert not claim(a.cluster.core, cluster.namespace, name, seen, a.run_id + "x")
    finally:
        owner._remove(name)
        for x in (owner, a, b):
            x.close()


# -- helpers --------------------------------------------------------------------------


def _running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def wait_for(found: Callable[[], Any], limit: float = BOUND) -> Any:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = found()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("not within the bound")
