"""`sandboxrun serve` on the real engine: the same events cold (`--no-serve`) and through
a server started as a subprocess give the same answers; its lifecycle (SIGTERM waits for
requests in flight; a SIGKILLed server's containers are reaped); TCP only with a token."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend, ExecRequest
from sandboxrun._backends.docker.reaper import LABEL
from sandboxrun._backends.labels import HOOK as HOOK_LABEL
from sandboxrun._client import exchange
from sandboxrun._errors import Cancelled
from sandboxrun._server.app import MAX_BACKENDS
from sandboxrun._types import Cancel

from .. import side_by_side
from .conftest import HookWriter, engine_runtime, engine_settings

CANCEL = 'cat > /dev/null; echo \'{"cancel": true, "errorMessage": "no rm"}\''
GUARD = """#!/bin/sh
case "$(cat)" in *"rm -rf"*) echo "rm -rf is not allowed" >&2; exit 2 ;; esac
"""
CLAUDE_EVENT = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "rm -rf /"}}  # fmt: skip


class Server:
    """A `sandboxrun serve` subprocess on a socket of its own, with its config file."""

    def __init__(self, folder: Path, *extra: str, config: str = "") -> None:
        self.folder = folder
        self.socket = str(folder / "run" / "serve.sock")
        self.config = folder / "config.toml"
        runtime = f'runtime = "{engine_runtime()}"\n' if engine_runtime() else ""
        self.config.write_text(f'{runtime}serve_socket = "{self.socket}"\n{config}')
        self.log = open(folder / "serve.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sandboxrun", "serve", "--config", str(self.config), *extra],
            stdout=subprocess.DEVNULL, stderr=self.log,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not self._answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"serve did not start: {self.logged()}")
            time.sleep(0.1)

    def _answers(self) -> bool:
        try:
            return bool(self.health()["ok"])
        except OSError:
            return False

    def health(self) -> dict[str, Any]:
        return dict(post(self.socket, "GET", "/healthz")[1])

    def logged(self) -> str:
        return (self.folder / "serve.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=120)
        self.log.close()


def post(path: str, method: str, target: str, body: dict[str, Any] | None = None) -> Any:
    """One HTTP request on the unix socket: (status, JSON)."""
    data = json.dumps(body).encode() if body is not None else b""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        return exchange(sock, method, target, data)


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short path: a unix socket's path is at most 107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="srv-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def server(engine: DockerBackend, folder: Path) -> Iterator[Server]:
    srv = Server(folder)
    yield srv
    srv.stop()
    assert srv.proc.returncode == 0, srv.logged()
    assert not os.path.exists(srv.socket), "the socket outlived its server"


def both(
    srv: Server, *args: str, stdin: bytes = b"", cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    """The command cold and through the server (which must have answered it)."""
    command, *rest = args
    argv = [sys.executable, "-m", "sandboxrun", command, "--config", str(srv.config), *rest]
    cold_argv = [*argv[:4], "--no-serve", *argv[4:]]
    before = srv.health()["answered"]
    kw: dict[str, Any] = {"input": stdin, "capture_output": True, "timeout": 120, "cwd": cwd}
    warm = subprocess.run(argv, **kw)
    assert srv.health()["answered"] == before + 1, warm.stderr
    cold = subprocess.run(cold_argv, **kw)
    return cold, warm


def answer(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    """`run`'s answer without what varies from run to run (the durations)."""
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    for hook in document.get("hooks", []):
        hook.pop("durationMs")
        hook.pop("warm")  # the server's path may be warm, the cold one never is
    return document


def test_cline_block_is_the_same(server: Server, workspace: Path, hook: HookWriter) -> None:
    hook(CANCEL)
    event = json.dumps({"preToolUse": {"toolName": "execute_command"}}).encode()
    cold, warm = both(server, "run", "PreToolUse", "--workspace", str(workspace), stdin=event)
    assert answer(cold) == answer(warm)
    assert answer(warm)["cancel"] is True


def test_claude_deny_is_the_same(server: Server, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / "guard.sh").write_text(GUARD)
    (project / "guard.sh").chmod(0o755)
    entry = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [entry]}})
    )
    event = json.dumps(CLAUDE_EVENT | {"cwd": str(project)}).encode()
    args = ("run", "PreToolUse", "--agent", "claude", "--home", str(tmp_path))
    cold, warm = both(server, *args, stdin=event, cwd=project)
    assert answer(cold) == answer(warm)
    assert answer(warm)["permissionDecision"] == "deny"


@pytest.mark.parametrize("code", [0, 2, 3])
def test_exec_passes_the_same_bytes_through(server: Server, tmp_path: Path, code: int) -> None:
    command = f"cat; printf 'a\\000b\\377'; printf 'e\\001' >&2; exit {code}"
    cold, warm = both(server, "exec", "--", command, stdin=b"in\xfe", cwd=tmp_path)
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        cold.returncode,
        cold.stdout,
        cold.stderr,
    )
    assert (warm.returncode, warm.stdout, warm.stderr) == (code, b"in\xfea\0b\xff", b"e\x01")


def test_a_missing_image_or_runtime_fails_the_same(
    server: Server, workspace: Path, hook: HookWriter, tmp_path: Path
) -> None:
    """Fail-closed blocks, without it one line and exit 2 (run) or 1 (exec); a missing
    runtime always blocks."""
    hook(CANCEL)
    ws = ("--workspace", str(workspace))
    missing = ("--image", "sandboxrun/none:missing")
    for args in (missing, (*missing, "--fail-closed"), ("--runtime", "no-such-runtime")):
        cold, warm = both(server, "run", "PreToolUse", *ws, *args, stdin=b"{}")
        assert (warm.returncode, warm.stdout, warm.stderr) == (
            cold.returncode, cold.stdout, cold.stderr,
        )  # fmt: skip
    assert warm.returncode == 0 and json.loads(warm.stdout)["cancel"] is True
    for args in (missing, (*missing, "--fail-closed")):
        cold, warm = both(server, "exec", *args, "--", "true", cwd=tmp_path)
        assert (warm.returncode, warm.stdout, warm.stderr) == (
            cold.returncode, cold.stdout, cold.stderr,
        )  # fmt: skip
    assert warm.returncode == 2 and b"fail-closed" in warm.stderr


def test_a_hook_that_times_out_is_reported_the_same(
    server: Server, workspace: Path, hook: HookWriter
) -> None:
    hook("sleep 30")
    args = ("run", "PreToolUse", "--workspace", str(workspace), "--timeout", "1")
    cold, warm = both(server, *args, stdin=b"{}")
    assert answer(cold) == answer(warm)
    assert [h["status"] for h in answer(warm)["hooks"]] == ["timed_out"]


def test_sigterm_lets_the_request_in_flight_finish(
    server: Server, workspace: Path, hook: HookWriter
) -> None:
    hook("sleep 2; echo '{\"cancel\": true}'")
    argv = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--config",
            str(server.config), "--workspace", str(workspace)]  # fmt: skip
    client = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while server.health()["inflight"] == 0:
        assert time.monotonic() < deadline and client.poll() is None, server.logged()
        time.sleep(0.05)
    server.proc.send_signal(signal.SIGTERM)
    out, _ = client.communicate(timeout=120)
    assert json.loads(out)["cancel"] is True
    assert server.proc.wait(timeout=60) == 0
    assert not os.path.exists(server.socket)


def test_a_sigkilled_servers_containers_are_reaped(
    engine: DockerBackend, folder: Path, workspace: Path, hook: HookWriter
) -> None:
    hook("sleep 60")
    srv = Server(folder)
    request = {"args": ["PreToolUse", "--workspace", str(workspace)], "cwd": str(workspace),
               "stdin": "", "env": {}}  # fmt: skip
    # Straight to the API: the CLI's client would run the hook again, cold, once the
    # server is gone.
    threading.Thread(
        target=lambda: _ignore(lambda: post(srv.socket, "POST", "/v1/run", request)), daemon=True
    ).start()
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={srv.proc.pid}"]}
    deadline = time.monotonic() + 60
    while not engine.api.containers(filters=mine):
        assert time.monotonic() < deadline, srv.logged()
        time.sleep(0.1)
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    srv.log.close()
    reaped = subprocess.run(
        [sys.executable, "-m", "sandboxrun", "reap", "--config", str(srv.config)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert reaped.returncode == 0, reaped.stderr
    assert not engine.api.containers(all=True, filters=mine)


def _ignore(call: Any) -> None:
    with contextlib.suppress(OSError, ValueError):  # the server is killed mid-request
        call()


def test_tcp_is_refused_without_a_token(engine: DockerBackend, folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sandboxrun", "serve", "--socket", str(folder / "s" / "x.sock"),
         "--listen", "127.0.0.1:0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "token" in done.stderr
    assert not (folder / "s" / "x.sock").exists()


# On TCP, serve needs allowed_roots (issue 17 item 3): the tests' workspaces are in /tmp.
ALLOWED = f'allowed_roots = ["{os.path.realpath(tempfile.gettempdir())}"]\n'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tcp(port: int, token: str | None, body: dict[str, Any]) -> tuple[int, Any]:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        return exchange(sock, "POST", "/v1/run", json.dumps(body).encode(), auth)


def test_tcp_wants_the_right_token(
    engine: DockerBackend, folder: Path, workspace: Path, hook: HookWriter
) -> None:
    hook(CANCEL)
    token = folder / "token"
    token.write_text("correct-horse-battery-staple\n")
    token.chmod(0o600)
    port = _free_port()
    srv = Server(folder, "--listen", f"127.0.0.1:{port}", "--token-file", str(token),
                 config=ALLOWED)  # fmt: skip
    try:
        request = {"args": ["PreToolUse", "--workspace", str(workspace)],
                   "cwd": str(workspace), "stdin": "e30=", "env": {}}  # fmt: skip
        assert _tcp(port, None, request)[0] == 401
        assert _tcp(port, "wrong-horse-battery-staple", request)[0] == 401
        status, reply = _tcp(port, "correct-horse-battery-staple", request)
        assert status == 200 and reply["exitCode"] == 0
        assert json.loads(base64.b64decode(reply["stdout"]))["cancel"] is True
    finally:
        srv.stop()


# -- operability: probes, metrics, the drain at SIGTERM ---------------------------------


def _get(port: int, target: str, token: str | None = None) -> tuple[int, bytes]:
    """(status, body) of a GET on TCP (the body need not be JSON: /metrics)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\n"
                     .encode())  # fmt: skip
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def _tcp_server(folder: Path, config: str = "") -> tuple[Server, int, str]:
    token = "correct-horse-battery-staple"
    (folder / "token").write_text(token + "\n")
    (folder / "token").chmod(0o600)
    port = _free_port()
    srv = Server(folder, "--listen", f"127.0.0.1:{port}", "--token-file",
                 str(folder / "token"), config=ALLOWED + config)  # fmt: skip
    return srv, port, token


def test_readyz_asks_the_real_engine(engine: DockerBackend, folder: Path) -> None:
    """Ready with the engine and the image there; not ready, and why on the unix socket
    only, when the image is missing. Both probes answer TCP without a token."""
    (folder / "ok").mkdir()
    srv, port, _ = _tcp_server(folder / "ok")
    try:
        assert _get(port, "/readyz") == (200, b'{"ready": true}')
        assert _get(port, "/healthz") == (200, b'{"ok": true}')
        assert post(srv.socket, "GET", "/readyz") == (200, {"ready": True})
    finally:
        srv.stop()
    (folder / "bad").mkdir()
    srv, port, _ = _tcp_server(folder / "bad", 'image = "sandboxrun/none:missing"\n')
    try:
        status, body = _get(port, "/readyz")
        assert status == 503 and b"none:missing" not in body
        status, why = post(srv.socket, "GET", "/readyz")
        assert status == 503 and "sandboxrun/none:missing" in why["reason"], why
        assert _get(port, "/healthz")[0] == 200  # alive: only not ready
    finally:
        srv.stop()
    assert srv.proc.returncode == 0


def _metrics(port: int, token: str) -> dict[tuple[str, frozenset[Any]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    status, body = _get(port, "/metrics", token)
    assert status == 200, body
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_metrics_after_warm_and_cold_runs(
    engine: DockerBackend, folder: Path, workspace: Path, hook: HookWriter
) -> None:
    """A run in a pooled container counts as warm, one under settings without a pool
    (pool_size = 0: a backend of its own) as cold; both blocked (a Cline cancel)."""
    hook(CANCEL)
    srv, port, token = _tcp_server(folder)
    cold = folder / "cold.toml"
    cold.write_text(srv.config.read_text() + "pool_size = 0\n")
    run = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--workspace",
           str(workspace)]  # fmt: skip

    def through_server(config: Path) -> None:
        before = srv.health()["answered"]
        done = subprocess.run([*run, "--config", str(config)], input=b"{}",
                              capture_output=True, timeout=120)  # fmt: skip
        assert json.loads(done.stdout)["cancel"] is True, done.stderr
        assert srv.health()["answered"] == before + 1

    try:
        assert _metrics(port, token)  # scrapes before any run
        assert _get(port, "/metrics")[0] == 401
        through_server(srv.config)  # starts the pool (warm if its container came in time)
        idle = ("sandboxrun_pool_containers", frozenset({"state": "idle"}.items()))
        deadline = time.monotonic() + 120
        while _metrics(port, token)[idle] < 1:
            assert time.monotonic() < deadline, srv.logged()
            time.sleep(0.2)
        through_server(srv.config)  # a container is idle: warm
        through_server(cold)
        got = _metrics(port, token)
    finally:
        srv.stop()
    assert srv.proc.returncode == 0, srv.logged()

    def runs(where: str) -> float:
        labels = frozenset({"agent": "cline", "status": "blocked", "path": where}.items())
        return got.get(("sandboxrun_runs_total", labels), 0.0)

    assert runs("warm") >= 1 and runs("cold") >= 1
    assert runs("warm") + runs("cold") == 3
    assert got[("sandboxrun_request_duration_seconds_count",
                frozenset({"command": "run"}.items()))] == 3  # fmt: skip
    assert got[("sandboxrun_requests_in_flight", frozenset())] == 0


def test_sigterm_drains_then_removes_the_pool(
    engine: DockerBackend, folder: Path, workspace: Path, hook: HookWriter
) -> None:
    """A slow hook in flight at SIGTERM still gets its answer; meanwhile /readyz says
    503 and the socket is gone; afterwards no container of the server's is left (its
    warm pool included)."""
    hook("sleep 4; echo '{\"cancel\": true}'")
    srv, port, token = _tcp_server(folder)
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={srv.proc.pid}"]}
    request = {"args": ["PreToolUse", "--workspace", str(workspace)], "cwd": str(workspace),
               "stdin": "e30=", "env": {}}  # fmt: skip
    answers: list[tuple[int, Any]] = []
    client = threading.Thread(target=lambda: answers.append(_tcp(port, token, request)))
    client.start()
    deadline = time.monotonic() + 60
    while srv.health()["inflight"] == 0:
        assert time.monotonic() < deadline, srv.logged()
        time.sleep(0.05)
    while not engine.api.containers(filters=mine):  # the hook's container runs
        assert time.monotonic() < deadline, srv.logged()
        time.sleep(0.05)
    srv.proc.send_signal(signal.SIGTERM)
    while os.path.exists(srv.socket):
        assert time.monotonic() < deadline, srv.logged()
        time.sleep(0.05)
    status, body = _get(port, "/readyz")
    assert (status, json.loads(body)["reason"]) == (503, "the server is stopping")
    client.join(120)
    [(status, reply)] = answers
    assert status == 200 and json.loads(base64.b64decode(reply["stdout"]))["cancel"] is True
    assert srv.proc.wait(timeout=120) == 0, srv.logged()
    srv.log.close()
    assert not engine.api.containers(all=True, filters=mine), srv.logged()


# -- hostile clients: a client killed mid-request, more settings than kept backends ---


def _tagged(engine: DockerBackend, pid: int, tag: str) -> set[str]:
    """The ids of the containers of server `pid` whose hook's label holds `tag`."""
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={pid}"]}
    return {c["Id"] for c in engine.api.containers(all=True, filters=mine)
            if tag in c["Labels"].get(HOOK_LABEL, "")}  # fmt: skip


def test_a_killed_clients_hook_is_stopped_and_another_clients_runs_on(
    engine: DockerBackend, folder: Path, tmp_path: Path
) -> None:
    """A client SIGKILLed while its `sleep 300` hook runs: the hook's container is gone
    within seconds (not at its deadline), while another client's run on the same backend
    completes with its answer. (Cold runs here, so the run's label names one container;
    `test_a_cancelled_run_loses_its_container_only` cancels pooled ones.)"""
    srv = Server(folder, config="pool_size = 0\n")
    try:
        exec_ = [sys.executable, "-m", "sandboxrun", "exec", "--config", str(srv.config),
                 "--timeout", "280"]  # fmt: skip
        killed = subprocess.Popen([*exec_, "--", "sleep 300 # killed-client"], cwd=tmp_path,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)  # fmt: skip
        other = subprocess.Popen([*exec_, "--", "sleep 4; echo other-client"], cwd=tmp_path,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 120
        while not (_tagged(engine, srv.proc.pid, "killed-client")
                   and _tagged(engine, srv.proc.pid, "other-client")):  # fmt: skip
            assert time.monotonic() < deadline and killed.poll() is None, srv.logged()
            time.sleep(0.1)
        doomed = _tagged(engine, srv.proc.pid, "killed-client")
        killed.kill()
        killed.wait(30)
        gone_by = time.monotonic() + 60  # generous; its deadline is minutes away
        while _tagged(engine, srv.proc.pid, "killed-client") & doomed:
            assert time.monotonic() < gone_by, srv.logged()
            time.sleep(0.2)
        out, _ = other.communicate(timeout=120)
        assert (other.returncode, out) == (0, b"other-client\n"), srv.logged()
        assert srv.health()["inflight"] == 0
    finally:
        for client in (killed, other):  # a failed test must not keep the server waiting
            if client.poll() is None:
                client.kill()
                client.communicate()
        srv.stop()
    assert srv.proc.returncode == 0, srv.logged()


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_cancelled_run_loses_its_container_only(
    engine: DockerBackend, workspace: Path, warm: bool
) -> None:
    """Through the backend seam: a run whose `Cancel` is set has its container removed at
    once and ends in `Cancelled`; another run on the same backend is untouched."""
    settings = engine_settings(pool_size=1 if warm else 0)
    backend = DockerBackend(settings, warm=warm)
    tag = uuid.uuid4().hex[:12]

    def request(script: str, label: str, cancel: Cancel | None = None) -> ExecRequest:
        return ExecRequest(argv=("sh", "-c", script), stdin=b"", workdir=str(workspace),
                           mounts=(str(workspace),), timeout=280, label=f"{label} {tag}",
                           cancel=cancel)  # fmt: skip

    cancel = Cancel()
    doomed = request("sleep 300", "doomed", cancel)
    other = request("sleep 4; echo other", "other")
    threads: list[threading.Thread] = []
    try:
        if warm:
            assert backend.prewarm(doomed, wait=120)  # it runs in the pooled container
        threads, outcomes = side_by_side.start(backend, {"doomed": doomed, "other": other})
        deadline = time.monotonic() + 120
        while not (_running(engine, f"doomed {tag}") and _running(engine, f"other {tag}")) or (
            warm
            and backend._pool
            and _running(engine, f"doomed {tag}") & set(backend._pool.idle_ids())
        ):  # started (cold), or taken from the pool (warm): its run is under way
            assert time.monotonic() < deadline, outcomes
            time.sleep(0.1)
        ids = _running(engine, f"doomed {tag}")
        cancel.set()
        threads[0].join(60)
        assert isinstance(outcomes["doomed"], Cancelled), outcomes
        threads[1].join(120)
        assert outcomes["other"].stdout == b"other\n" and outcomes["other"].exit_code == 0
        assert not ids & _running(engine, f"doomed {tag}", every=True)
    finally:
        cancel.set()
        for t in threads:
            t.join(120)
        backend.close()


def _running(engine: DockerBackend, label: str, every: bool = False) -> set[str]:
    """Containers of this process labelled `label` that run their hook (`every`: or
    exist at all). A pooled one waiting at its gate runs too: the caller prewarmed it."""
    mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={os.getpid()}", f"{HOOK_LABEL}={label}"]}
    return {c["Id"] for c in engine.api.containers(all=every, filters=mine)}


def test_past_max_backends_runs_go_cold_and_sigterm_leaves_no_container(
    engine: DockerBackend, folder: Path, tmp_path: Path
) -> None:
    """More distinct settings than the server keeps backends for (MAX_BACKENDS): the
    requests past them are still answered (cold, on a backend of their own that is
    closed after them), and after SIGTERM no container of the server's is left, pooled
    or not."""
    srv = Server(folder, config="pool_size = 1\n")
    try:
        for i in range(MAX_BACKENDS + 2):  # each timeout is a distinct Settings
            before = srv.health()["answered"]
            done = subprocess.run(
                [sys.executable, "-m", "sandboxrun", "exec", "--config", str(srv.config),
                 "--timeout", str(30 + i), "--", "echo ok"],
                capture_output=True, timeout=120, cwd=tmp_path,
            )  # fmt: skip
            assert (done.returncode, done.stdout) == (0, b"ok\n"), done.stderr
            assert srv.health()["answered"] == before + 1
        assert srv.health()["backends"] == MAX_BACKENDS
        mine = {"label": [f"{LABEL}=1", f"sandboxrun.pid={srv.proc.pid}"]}
        deadline = time.monotonic() + 120  # the kept backends' pools fill up
        while len(engine.api.containers(filters=mine)) < MAX_BACKENDS:
            assert time.monotonic() < deadline, srv.logged()
            time.sleep(0.2)
    finally:
        srv.stop()
    assert srv.proc.returncode == 0, srv.logged()
    assert engine.api.containers(all=True, filters=mine) == [], srv.logged()
