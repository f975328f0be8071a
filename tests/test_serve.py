"""`sandboxrun serve` and its client without an engine: the client's trust checks, the
HTTP protocol, and answers through the server equal to the cold path's (FakeBackend)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

import sandboxrun._cli as cli
from sandboxrun import (
    ConfigError,
    EngineUnavailable,
    ExecRequest,
    ExecResult,
    FakeBackend,
    Settings,
)
from sandboxrun import _client as client
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._install.command import launcher
from sandboxrun._server import App, close_servers, open_servers, prepare_socket
from sandboxrun._server import app as _app
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared

ROOT_ONLY = pytest.mark.skipif(os.getuid() != 0, reason="needs root to chown to another uid")
CANCEL = b'{"cancel": true, "errorMessage": "no"}\n'


class _Closable(FakeBackend):
    """A FakeBackend with the cold CLI's lifecycle calls."""

    def close(self) -> None:
        return None

    def abort(self) -> None:
        return None


class Served:
    def __init__(self, path: str, app: App, backend: FakeBackend, config: Path) -> None:
        self.path, self.app, self.backend, self.config = path, app, backend, config


def answer(request: ExecRequest) -> ExecResult:
    """The fake hooks: exec's command echoes binary bytes; Cline's hook cancels."""
    if request.argv[-1].startswith("binary"):
        return ExecResult(3, b"\x00\xff" + request.stdin, b"to stderr\n", 5)
    return ExecResult(0, CANCEL, b"", 5)


@pytest.fixture
def served(home: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """An in-process server on a short socket path, over a FakeBackend; the cold CLI
    uses the same FakeBackend; the user's config names the socket."""
    path = str(short_dir / "run" / "serve.sock")
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{path}"\n')
    backend = _Closable(answer)
    # The CLI imports the backend when a command needs it: patch it at its source.
    monkeypatch.setattr(_docker, "DockerBackend", lambda settings, warm=False: backend)
    logger.remove()  # as `serve` sets it up, without its own stderr sink
    logger.configure(patcher=cli._escape_message)
    logger.enable("sandboxrun")
    app = App(lambda settings: backend)
    servers = open_servers(app, path)
    threading.Thread(target=servers[0].serve_forever, daemon=True).start()
    yield Served(path, app, backend, config)
    close_servers(app, servers, path)


@pytest.fixture
def ws(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    hook = root / ".clinerules" / "hooks" / "PreToolUse"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\necho '{}'\n")
    hook.chmod(0o755)
    monkeypatch.chdir(root)
    return root


def run(
    argv: list[str], stdin: bytes, capsysbinary: pytest.CaptureFixture[bytes], cold: bool
) -> tuple[int | None, bytes, bytes]:
    """(exit code, stdout, stderr) of the command through the client; None: it went cold."""
    before = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = cli.main([argv[0], "--no-serve", *argv[1:]]) if cold else client.via_server(argv)
    finally:
        sys.stdin = before
        if cold:  # the CLI's stderr sink: in a real server's process there is none
            logger.remove()
            logger.enable("sandboxrun")
    out, err = capsysbinary.readouterr()
    return code, out, err


def test_run_through_the_server_answers_as_the_cold_path(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The same event, cold and through the server: the same bytes, the same exit."""
    argv = ["run", "PreToolUse", "--config", str(served.config)]
    event = json.dumps({"hookName": "PreToolUse", "preToolUse": {"toolName": "x"}}).encode()
    warm = run(argv, event, capsysbinary, cold=False)
    cold = run(argv, event, capsysbinary, cold=True)
    assert served.app.answered == 1
    assert warm == cold
    assert json.loads(warm[1])["cancel"] is True
    # The server ran the hook in the client's folder, with the client's event.
    first, second = served.backend.requests
    assert first.workdir == second.workdir == str(ws)
    assert b'"toolName":"x"' in first.stdin and b'"toolName":"x"' in second.stdin


def test_exec_passes_bytes_and_exit_code_through(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv = ["exec", "--config", str(served.config), "--", "binary"]
    warm = run(argv, b"\x01in", capsysbinary, cold=False)
    cold = run(argv, b"\x01in", capsysbinary, cold=True)
    assert warm == cold == (3, b"\x00\xff\x01in", b"to stderr\n")


def test_errors_of_ours_read_the_same(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """A bad event: exit 2 and one line without fail-closed, the block with it."""
    argv = ["run", "PreToolUse", "--config", str(served.config)]
    for extra in ([], ["--fail-closed"]):
        warm = run(argv + extra, b"[1]", capsysbinary, cold=False)
        cold = run(argv + extra, b"[1]", capsysbinary, cold=True)
        assert warm == cold
    assert served.app.answered == 2


def test_the_agents_own_answer_is_answered_by_the_server_as_by_the_command(
    served: Served, ws: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """`run --answer agent` (what every Cline shim and managed forwarder runs) is answered
    by the server, no longer declined to the cold path, with the bytes the command gives
    itself. Cline's folder is the event's primary root on both paths, never the calling
    process's (the CLI's hub daemon): its relative --hooks-dir is read from there."""
    elsewhere = tmp_path / "daemon"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the hub daemon's folder: another run's
    argv = ["run", "PreToolUse", "--agent", "cline", "--answer", "agent", "--config",
            str(served.config), "--hooks-dir", ".clinerules/hooks"]  # fmt: skip
    event = json.dumps({"hookName": "PreToolUse", "workspaceRoots": [str(ws)],
                        "preToolUse": {"toolName": "x"}}).encode()  # fmt: skip
    warm = run(argv, event, capsysbinary, cold=False)
    cold = run(argv, event, capsysbinary, cold=True)
    assert served.app.answered == 1
    assert warm == cold
    cline = {"cancel": True, "contextModification": "", "errorMessage": "no"}  # no report
    assert warm[0] == 0 and json.loads(warm[1]) == cline
    first, second = served.backend.requests
    assert first.workdir == second.workdir == str(ws)
    assert first.argv == second.argv and str(ws / ".clinerules" / "hooks") in first.argv[-1]


@pytest.mark.parametrize("agent", ["cline", "claude"])
def test_the_agents_own_answer_to_an_error_of_ours_is_the_same_through_the_server(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes], agent: str
) -> None:
    """An event that is not a JSON object: the agent's non-blocking error, one line;
    under fail-closed its block (Cline: `{"cancel": true}` on stdout; Claude: exit 2),
    the same bytes through the server as from the command itself."""
    argv = ["run", "PreToolUse", "--agent", agent, "--answer", "agent", "--config",
            str(served.config)]  # fmt: skip
    for extra in ([], ["--fail-closed"]):
        warm = run(argv + extra, b"[1]", capsysbinary, cold=False)
        cold = run(argv + extra, b"[1]", capsysbinary, cold=True)
        assert warm == cold
        code, out, err = warm
        assert b"must be a JSON object" in out + err and b"Traceback" not in err
        blocked = json.loads(out)["cancel"] is True if out else code == 2
        assert blocked is bool(extra), (code, out, err)
    assert served.app.answered == 2
    assert served.backend.requests == []


def test_the_callers_tightening_variable_reaches_the_server(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("SANDBOXRUN_FAIL_CLOSED", "1")
    argv = ["run", "PreToolUse", "--config", str(served.config)]
    code, out, _ = run(argv, b"not json", capsysbinary, cold=False)
    assert code == 0 and json.loads(out)["cancel"] is True


def test_arguments_the_parser_refuses_go_cold_with_their_stdin(
    served: Served, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv = ["run", "PreToolUse", "--config", str(served.config), "--timeout", "soon"]
    code, out, _ = run(argv, b"{}", capsysbinary, cold=False)
    assert code is None and out == b""
    assert served.app.answered == 0


def test_no_serve_and_serve_off_never_connect(
    home: Path, short_dir: Path, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    listener = Listener(short_dir)
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{listener.path}"\nserve = "off"\n')
    assert (
        run(["run", "PreToolUse", "--config", str(config)], b"{}", capsysbinary, False)[0] is None
    )
    config.write_text(f'serve_socket = "{listener.path}"\n')
    argv = ["run", "PreToolUse", "--no-serve", "--config", str(config)]
    assert run(argv, b"{}", capsysbinary, False)[0] is None
    assert listener.connections == 0


class Listener:
    """A plain unix socket that records what clients send (it never answers)."""

    def __init__(self, folder: Path) -> None:
        (folder / "s").mkdir(mode=0o700)
        self.path = str(folder / "s" / "serve.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o600)
        self.sock.listen(4)
        self.connections = 0
        self.received = b""
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            self.connections += 1
            conn.settimeout(0.5)
            try:
                while chunk := conn.recv(4096):
                    self.received += chunk
            except OSError:
                pass
            conn.close()


@ROOT_ONLY
def test_a_socket_of_another_user_is_never_used(
    home: Path, short_dir: Path, ws: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    listener = Listener(short_dir)
    os.chown(listener.path, 4242, -1)
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{listener.path}"\n')
    code, _, err = run(["run", "PreToolUse", "--config", str(config)], b"{}", capsysbinary, False)
    assert code is None
    assert listener.connections == 0
    assert b"not a socket of yours" in err


def test_a_folder_others_can_enter_is_never_used(short_dir: Path) -> None:
    listener = Listener(short_dir)
    os.chmod(os.path.dirname(listener.path), 0o755)
    assert "0700" in (client.untrusted(listener.path) or "")
    assert client.connect(listener.path) is None
    assert listener.connections == 0


@ROOT_ONLY
def test_a_server_of_another_uid_gets_nothing(
    home: Path, short_dir: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:  # fmt: skip
    """The files look like the user's (uid 4242 here), but the process at the other end
    runs as root: the client hangs up before sending a byte."""
    listener = Listener(short_dir)
    os.chown(os.path.dirname(listener.path), 4242, -1)
    os.chown(listener.path, 4242, -1)
    config = home / "config.toml"
    config.write_text(f'serve_socket = "{listener.path}"\n')
    monkeypatch.setattr(client.os, "getuid", lambda: 4242)
    code, _, err = run(["run", "PreToolUse", "--config", str(config)], b"{}", capsysbinary, False)
    assert code is None
    assert b"runs as uid 0" in err
    assert listener.received == b""


def test_the_socket_and_its_folder_are_the_users_alone(served: Served) -> None:
    assert client.untrusted(served.path) is None
    assert os.stat(served.path).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(served.path)).st_mode & 0o777 == 0o700


def test_a_live_server_is_not_replaced_and_a_stale_socket_is(
    served: Served, short_dir: Path
) -> None:
    with pytest.raises(ConfigError, match="already answers"):
        prepare_socket(served.path)
    stale = short_dir / "stale" / "serve.sock"
    stale.parent.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(stale))
    dead.close()  # bound, never listening: what a killed server leaves
    prepare_socket(str(stale))
    assert not stale.exists()


def request(path: str, raw: bytes) -> tuple[int, Any]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(raw)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return client.parse_response(data)


def test_protocol_health_and_errors(served: Served) -> None:
    status, health = request(served.path, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and health["ok"] is True and health["pid"] == os.getpid()
    assert request(served.path, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 404
    body = b"{not json"
    head = f"POST /v1/run HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    assert request(served.path, head + body)[0] == 400
    body = json.dumps({"args": ["PreToolUse"], "cwd": "relative", "stdin": ""}).encode()
    head = f"POST /v1/run HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    assert request(served.path, head + body)[0] == 400


def fetch(
    where: str | int, target: str, headers: str = "", method: str = "GET", body: bytes = b""
) -> tuple[int, bytes]:
    """(status, body) of one request on the unix socket (a path) or TCP (a port)."""
    if isinstance(where, int):
        sock = socket.create_connection(("127.0.0.1", where))
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(where)
    with sock:
        sock.sendall(f"{method} {target} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}"
                     f"\r\n{headers}\r\n".encode() + body)  # fmt: skip
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


TOKEN = "s3cret-token-0123456789"
BEARER = f"Authorization: Bearer {TOKEN}\r\n"


@pytest.fixture
def tcp(home: Path, short_dir: Path) -> Iterator[tuple[App, int, str]]:
    """A server on a unix socket and on loopback TCP with a token: (app, port, socket)."""
    path = str(short_dir / "t" / "serve.sock")
    app = App(lambda settings: FakeBackend(answer))
    servers = open_servers(app, path, ("127.0.0.1", 0), TOKEN.encode())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield app, servers[1].server_address[1], path
    close_servers(app, servers, path)


def test_tcp_needs_a_token(home: Path, short_dir: Path) -> None:
    path = str(short_dir / "t" / "serve.sock")
    app = App(lambda settings: FakeBackend(answer))
    with pytest.raises(ConfigError, match="token"):
        open_servers(app, path, ("127.0.0.1", 0), None)
    assert not os.path.exists(path)


def test_tcp_checks_the_token_but_for_the_probes(tcp: tuple[App, int, str]) -> None:
    """Probes answer without the token and say only yes or no; /metrics and the API
    want the right one."""
    _app, port, _path = tcp
    assert fetch(port, "/healthz") == (200, b'{"ok": true}')
    assert fetch(port, "/readyz") == (200, b'{"ready": true}')
    for target, method in (("/metrics", "GET"), ("/v1/run", "POST")):
        assert fetch(port, target, method=method)[0] == 401
        assert fetch(port, target, "Authorization: Bearer wrong-token-0123456789\r\n",
                     method=method)[0] == 401  # fmt: skip
    status, body = fetch(port, "/metrics", BEARER)
    assert status == 200 and b"sandboxrun_runs_total" in body
    status, body = fetch(port, "/healthz", BEARER)  # the token adds nothing there
    assert (status, body) == (200, b'{"ok": true}')


class Unready(FakeBackend):
    """A backend whose engine is down: `check` raises, and counts its calls."""

    def __init__(self) -> None:
        super().__init__(answer)
        self.checks = 0

    def check(self) -> None:
        self.checks += 1
        raise EngineUnavailable("no Docker Engine answers at unix:///secret/docker.sock")


def test_readyz_says_why_on_the_socket_and_only_no_on_tcp(home: Path, short_dir: Path) -> None:
    path = str(short_dir / "r" / "serve.sock")
    backend = Unready()
    app = App(lambda settings: backend)
    servers = open_servers(app, path, ("127.0.0.1", 0), TOKEN.encode())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    port = servers[1].server_address[1]
    try:
        status, body = fetch(path, "/readyz")
        assert status == 503
        assert json.loads(body) == {"ready": False, "reason": (
            "no Docker Engine answers at unix:///secret/docker.sock")}  # fmt: skip
        status, body = fetch(port, "/readyz")
        assert status == 503 and b"secret" not in body and json.loads(body)["ready"] is False
        assert backend.checks == 1  # the probes within READY_TTL read the first check
        assert fetch(path, "/healthz")[0] == 200  # alive all the same
    finally:
        close_servers(app, servers, path)


def test_readyz_checks_the_engine_again_after_a_while(
    home: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = Unready()
    app = App(lambda settings: backend)
    assert app.ready() and app.ready() and backend.checks == 1
    monkeypatch.setattr(_app, "READY_TTL", 0.0)
    assert app.ready() and backend.checks == 2
    app.stop()
    assert app.ready() == "the server is stopping"


class Gated(FakeBackend):
    """A FakeBackend whose hooks wait for `release` (a hook in flight at SIGTERM)."""

    def __init__(self) -> None:
        super().__init__(self._slow)
        self.started, self.release = threading.Event(), threading.Event()

    def _slow(self, request: ExecRequest) -> ExecResult:
        self.started.set()
        assert self.release.wait(60)
        return answer(request)


def test_stopping_drains_what_is_in_flight_and_declines_the_rest(
    home: Path, short_dir: Path, tmp_path: Path
) -> None:
    """While a request is in flight, closing keeps the listeners up: /readyz says 503,
    a new request 503 (the client runs it cold); the request in flight gets its
    answer; then the backends are closed."""
    path = str(short_dir / "g" / "serve.sock")
    backend = Gated()
    app = App(lambda settings: backend)
    servers = open_servers(app, path, ("127.0.0.1", 0), TOKEN.encode())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    port = servers[1].server_address[1]
    (tmp_path / "w").mkdir()  # not the folder of the home: no workspace may hold it
    body = json.dumps({"args": ["--", "binary"], "cwd": str(tmp_path / "w"), "stdin": ""})
    answers: list[tuple[int, bytes]] = []
    slow = threading.Thread(
        target=lambda: answers.append(fetch(port, "/v1/exec", BEARER, "POST", body.encode()))
    )
    slow.start()
    assert backend.started.wait(5), answers
    closing = threading.Thread(target=close_servers, args=(app, servers, path))
    closing.start()
    deadline = time.monotonic() + 60
    while os.path.exists(path):  # new local clients go cold without connecting
        assert time.monotonic() < deadline
        time.sleep(0.01)
    status, ready = fetch(port, "/readyz")
    assert (status, json.loads(ready)["reason"]) == (503, "the server is stopping")
    status, declined = fetch(port, "/v1/exec", BEARER, "POST", body.encode())
    assert (status, json.loads(declined)) == (503, {"fallback": "the server is stopping"})
    assert closing.is_alive() and not backend.closed
    backend.release.set()
    slow.join(60)
    closing.join(60)
    assert not closing.is_alive()
    [(status, reply)] = answers
    assert status == 200 and json.loads(reply)["exitCode"] == 3
    assert backend.closed


class Pooled(FakeBackend):
    """Fake hooks by their last argument; a pool that `stats` describes."""

    def __init__(self) -> None:
        super().__init__(self._answer)

    @staticmethod
    def _answer(request: ExecRequest) -> ExecResult:
        last = request.argv[-1]
        if last == "allow":
            return ExecResult(0, b"", b"", 5, warm=True)
        if last == "deny":
            return ExecResult(2, b"", b"no\n", 5)
        if last == "slow":
            return ExecResult(None, b"", b"", 5, timed_out=True)
        return ExecResult(0, CANCEL, b"", 5)  # Cline's hook: a cancel

    def stats(self) -> dict[str, int]:
        return {"idle": 2, "starting": 1, "claims_waited": 4}


def scrape(where: str | int, headers: str = "") -> dict[tuple[str, frozenset[Any]], float]:
    """/metrics, parsed by prometheus_client's own parser: {(sample, labels): value}."""
    from prometheus_client.parser import text_string_to_metric_families

    status, body = fetch(where, "/metrics", headers)
    assert status == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_metrics_count_runs_by_agent_status_and_path(home: Path, short_dir: Path, ws: Path) -> None:
    path = str(short_dir / "m" / "serve.sock")
    app = App(lambda settings: Pooled())
    [server] = open_servers(app, path)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for command, args in [
            ("exec", ["--agent", "claude", "--", "allow"]),
            ("exec", ["--agent", "claude", "--", "deny"]),
            ("exec", ["--agent", "claude", "--", "slow"]),
            ("run", ["PreToolUse"]),
            ("run", ["PreToolUse", "--timeout", "soon"]),  # the parser refuses: cold
        ]:
            body = json.dumps({"args": args, "cwd": str(ws), "stdin": ""}).encode()
            fetch(path, f"/v1/{command}", method="POST", body=body)
        got, kept = scrape(path), app.backends
    finally:
        close_servers(app, servers=[server], path=path)

    def runs(agent: str, status: str, where: str) -> float:
        labels = frozenset({"agent": agent, "status": status, "path": where}.items())
        return got.get(("sandboxrun_runs_total", labels), 0.0)

    assert runs("claude", "ok", "warm") == 1
    assert runs("claude", "blocked", "cold") == 1
    assert runs("claude", "timeout", "cold") == 1
    assert runs("cline", "blocked", "cold") == 1
    assert sum(v for (name, _), v in got.items() if name == "sandboxrun_runs_total") == 4
    count = "sandboxrun_request_duration_seconds_count"
    assert got[(count, frozenset({"command": "exec"}.items()))] == 3
    assert got[(count, frozenset({"command": "run"}.items()))] == 1
    assert got[("sandboxrun_requests_declined_total", frozenset())] == 1
    assert got[("sandboxrun_requests_in_flight", frozenset())] == 0
    # Summed over the kept backends: one for claude's settings, one for cline's.
    assert kept == 2
    assert got[("sandboxrun_pool_containers", frozenset({"state": "idle"}.items()))] == 4
    assert got[("sandboxrun_pool_containers", frozenset({"state": "starting"}.items()))] == 2
    assert got[("sandboxrun_pool_claims_waited_total", frozenset())] == 8
    # Bounded labels: never a hook's name or a path.
    assert not any(str(ws) in value for _, labels in got for _, value in labels)


@contextlib.contextmanager
def serve_process(
    args: list[str], path: str, home: Path, cwd: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`sandboxrun ARGS` (a `serve`) in a process of its own, with `home` as HOME and no
    SANDBOXRUN_* variable, once its socket at `path` answers; killed if left running."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOXRUN_")}
    env["HOME"] = str(home)
    argv = [sys.executable, "-m", "sandboxrun", *args]
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while (sock := client.connect(path)) is None:
            assert time.monotonic() < deadline and proc.poll() is None, "serve did not start"
            time.sleep(0.1)
        assert client.exchange(sock, "GET", "/healthz")[0] == 200
        sock.close()
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_log_format_json_writes_one_object_a_line_on_stderr(
    short_dir: Path, tmp_path: Path
) -> None:
    """`serve --log-format json`: every stderr line is a JSON object (the lifecycle's
    lines, whatever the level, and the log's at its level); stdout stays empty."""
    path = str(short_dir / "j" / "serve.sock")
    argv = ["-vv", "serve", "--socket", path, "--log-format", "json", "--idle-exit", "1"]
    with serve_process(argv, path, tmp_path) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == b""
    records = [json.loads(line)["record"] for line in err.decode().splitlines()]
    messages = [r["message"] for r in records]
    assert messages[0] == f"serving on {path} (pid {proc.pid})"
    assert (records[0]["name"], records[0]["function"]) == ("sandboxrun._server.lifecycle", "serve")
    assert messages[-1] == "stopped"
    assert any("GET /healthz" in m and r["level"]["name"] == "DEBUG"
               for m, r in zip(messages, records, strict=True))  # fmt: skip


def test_client_imports_stay_light(served: Served, ws: Path) -> None:
    """With a server answering, `run` imports neither docker, pydantic, loguru nor
    prometheus_client."""

    probe = (
        "import sys, json; from sandboxrun._client import main; code = main(sys.argv[1:]);"
        " heavy = [m for m in ('docker', 'pydantic', 'loguru', 'prometheus_client')"
        " if m in sys.modules];"
        " print(json.dumps(heavy), file=sys.stderr); sys.exit(code)"
    )
    argv = ["run", "PreToolUse", "--config", str(served.config)]
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], input=b"{}", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cancel"] is True
    assert done.stderr.strip().splitlines()[-1] == b"[]"
    assert served.app.answered == 1


def test_serve_start_starts_a_server_for_the_next_commands(
    home: Path, short_dir: Path, tmp_path: Path
) -> None:
    """`serve = "start"` (now `"auto"`): the first command runs cold and starts a server
    in the background; the next one is answered by it. (No hooks: no engine needed.)
    Outside CI: under `CI=true` no server is ever started (tests/test_autoserve.py)."""
    import os
    import signal
    import time

    path = str(short_dir / "auto" / "serve.sock")
    config = home / "config.toml"
    config.write_text(f'serve = "start"\nserve_socket = "{path}"\n')
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--config", str(config),
            "--home", str(home), "--workspace", str(empty)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    first = subprocess.run(argv, input=b"{}", capture_output=True, timeout=60, env=env)
    assert first.returncode == 0, first.stderr
    deadline = time.monotonic() + 60
    while (sock := client.connect(path)) is None:
        assert time.monotonic() < deadline, "no server was started"
        time.sleep(0.1)
    health = client.exchange(sock, "GET", "/healthz")[1]
    sock.close()
    try:
        second = subprocess.run(argv, input=b"{}", capture_output=True, timeout=60, env=env)
        assert (second.returncode, second.stdout) == (0, first.stdout)
        assert request(path, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")[1]["answered"] == 1
    finally:
        os.kill(health["pid"], signal.SIGTERM)
        while os.path.exists(path):
            assert time.monotonic() < deadline + 60, "the server did not stop"
            time.sleep(0.1)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "PreToolUse"], (0, "run", ["PreToolUse"])),
        (["-vv", "--verbose", "exec", "--", "x"], (3, "exec", ["--", "x"])),
        (["exec", "--", "guard", "--no-serve"], (0, "exec", ["--", "guard", "--no-serve"])),
        (["run", "PreToolUse", "--no-serve"], None),
        (["run", "PreToolUse", "--no-s"], None),  # argparse takes the prefix too
        (["run", "--help"], None),
        (["list"], None),
        (["-h"], None),
        ([], None),
    ],
)
def test_which_command_lines_may_go_to_the_server(
    argv: list[str], expected: tuple[int, str, list[str]] | None
) -> None:
    assert client._split(argv) == expected


def test_the_config_named_on_the_command_line_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert client._config_of(["H", "--config", "c.toml"]) == (str(tmp_path / "c.toml"), True)
    assert client._config_of(["H", "--conf=/a.toml"]) == ("/a.toml", True)
    assert client._config_of(["--", "--config", "x"]) == (None, False)
    assert client._config_of(["--config"]) == (None, True)  # the cold path says what is wrong


def test_a_request_without_config_reads_the_servers_own(tmp_path: Path) -> None:
    """`serve --config FILE`: a platform's clients send only the command's arguments, and
    the hooks' settings come from the server's one file; a request's own --config wins."""
    server_config = tmp_path / "server.toml"
    server_config.write_text("timeout = 7\n")
    own = tmp_path / "own.toml"
    own.write_text("timeout = 3\n")
    backend = _Closable(lambda request: ExecResult(0, b"", b"", 1))
    app = App(lambda settings: backend, config=str(server_config))
    for args, timeout in ((["--", "true"], 7.0), (["--config", str(own), "--", "true"], 3.0)):
        request = {"args": args, "env": {}, "verbose": 0, "stdin": "", "cwd": str(tmp_path)}
        assert app.answer("exec", request).exit_code == 0
        assert backend.requests[-1].timeout == timeout


# -- the caller's folder, passed explicitly -------------------------------------------


def _request(args: list[str], cwd: Path) -> dict[str, Any]:
    return {"args": args, "cwd": str(cwd), "env": {}, "verbose": 0, "stdin": ""}


def test_requests_from_two_folders_are_answered_at_once(
    home: Path, short_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One server answers two callers in different folders at the same time: each hook
    waits in the backend until the other is there too (a lock serialising requests would
    break the barrier), and each starts in its own caller's folder, mounted; the
    server's current directory is neither."""
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    monkeypatch.chdir("/")
    both_inside = threading.Barrier(2, timeout=60)
    cwds: list[str] = []

    def hook(request: ExecRequest) -> ExecResult:
        cwds.append(os.getcwd())
        both_inside.wait()
        return ExecResult(0, b"ok\n", b"", 1)

    backend = _Closable(hook)
    app = App(lambda settings: backend)
    path = str(short_dir / "c" / "serve.sock")
    servers = open_servers(app, path)
    threading.Thread(target=servers[0].serve_forever, daemon=True).start()
    replies: dict[Path, tuple[int, Any]] = {}

    def ask(folder: Path) -> None:
        sock = client.connect(path)
        assert sock is not None
        replies[folder] = client.post(sock, "/v1/exec", _request(["--", "true"], folder))
        sock.close()

    threads = [threading.Thread(target=ask, args=(folder,)) for folder in folders]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        close_servers(app, servers, path)
    for folder in folders:
        status, reply = replies[folder]
        assert status == 200 and client._decode(reply) == (b"ok\n", b"", 0), reply
    assert sorted(r.workdir for r in backend.requests) == [str(f) for f in folders]
    assert all(r.mounts == (r.workdir,) for r in backend.requests)
    assert cwds == ["/", "/"]


def test_relative_paths_are_read_from_the_callers_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--workspace`, `--config` and `--hooks-dir` given relative are the caller's: read
    against the request's cwd, never the server's current directory, which holds a
    decoy of each (another timeout, another hook)."""
    caller, decoy = tmp_path / "caller", tmp_path / "decoy"
    for folder, timeout in ((caller, 4), (decoy, 9)):
        (folder / "ws" / "sub").mkdir(parents=True)
        (folder / "c.toml").write_text(f"timeout = {timeout}\n")
        hook = folder / "hooks" / "PreToolUse"
        hook.parent.mkdir()
        hook.write_text("#!/bin/sh\necho '{}'\n")
        hook.chmod(0o755)
    monkeypatch.chdir(decoy)
    backend = _Closable(lambda request: ExecResult(0, b"{}", b"", 1))
    app = App(lambda settings: backend)
    args = ["PreToolUse", "--workspace", "ws", "--config", "c.toml", "--hooks-dir", "hooks"]
    reply = app.answer("run", _request(args, caller))
    assert reply.exit_code == 0, reply.stderr
    [sent] = backend.requests
    assert sent.timeout == 4
    assert sent.workdir == str(caller / "ws")
    assert sent.argv[-1] == str(caller / "hooks" / "PreToolUse")
    assert not [m for m in sent.mounts if m.startswith(str(decoy))]
    # exec: the workspace and config relative to the caller's folder, the hook started there.
    args = ["--workspace", "..", "--config", "../../c.toml", "--", "./guard.sh"]
    assert app.answer("exec", _request(args, caller / "ws" / "sub")).exit_code == 0
    sent = backend.requests[-1]
    assert (sent.timeout, sent.workdir) == (4, str(caller / "ws" / "sub"))
    assert sent.mounts == (str(caller / "ws"),)


def test_a_callers_folder_that_cannot_be_entered_goes_cold(home: Path, tmp_path: Path) -> None:
    """The caller's folder is checked, not entered: gone, or not a folder, is 503."""
    backend = _Closable(lambda request: ExecResult(0, b"", b"", 1))
    app = App(lambda settings: backend)
    (tmp_path / "file").write_text("")
    for cwd in (tmp_path / "gone", tmp_path / "file"):
        with pytest.raises(_app.Decline, match="cannot enter the caller's folder"):
            app.answer("exec", _request(["--", "true"], cwd))
    with pytest.raises(ValueError, match="cwd must be an absolute path"):
        app.answer("exec", {**_request(["--", "true"], tmp_path), "cwd": "rel"})
    assert backend.requests == []


def test_hook_paths_must_be_absolute(home: Path) -> None:
    """A relative `hook_paths` entry is a configuration error: it would name another
    folder for each caller's folder (a workspace's, for one)."""
    with pytest.raises(ConfigError, match="hook_paths"):
        Settings.load(hook_paths=("tools",))
    assert Settings.load(hook_paths=("/opt/tools",)).hook_paths == ("/opt/tools",)


def test_the_server_works_from_the_root_folder(short_dir: Path, tmp_path: Path) -> None:
    """`serve` reads its own relative paths (--socket, --config) against the folder it
    was started in, then works from `/` for its whole life: no request can depend on
    its current directory. Its socket is still removed at the end."""
    (short_dir / "c.toml").write_text('serve = "auto"\n')
    path = str(short_dir / "s" / "serve.sock")
    argv = ["serve", "--socket", "s/serve.sock", "--config", "c.toml", "--idle-exit", "2"]
    with serve_process(argv, path, tmp_path, cwd=short_dir) as proc:
        assert os.readlink(f"/proc/{proc.pid}/cwd") == "/"
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert not os.path.lexists(path)


# -- hostile clients: idle and slow connections, the cap, clients that hang up --------


def _idle(where: str | int) -> socket.socket | None:
    """A connection that sends nothing; None when the server takes no more (a server
    out of descriptors leaves it in the backlog: the connect times out)."""
    family = socket.AF_INET if isinstance(where, int) else socket.AF_UNIX
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(2)
    try:
        sock.connect(("127.0.0.1", where) if isinstance(where, int) else where)
    except OSError:
        sock.close()
        return None
    return sock


def _probe(where: str | int) -> tuple[int, bytes]:
    """GET /healthz within a generous bound (the server may be under attack)."""
    family = socket.AF_INET if isinstance(where, int) else socket.AF_UNIX
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(20)
        sock.connect(("127.0.0.1", where) if isinstance(where, int) else where)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


def _limited_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_idle_connections_never_take_the_probes_down(short_dir: Path, tmp_path: Path) -> None:
    """More idle connections than the server has descriptors (a server limited to 256),
    on TCP and on the unix socket: /healthz still answers on both."""
    path = str(short_dir / "i" / "serve.sock")
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOXRUN_")}
    env["HOME"] = str(tmp_path)
    (tmp_path / "w").mkdir()
    config = tmp_path / "config.toml"  # a server on TCP confines its roots
    config.write_text(f'allowed_roots = ["{tmp_path / "w"}"]\n')
    argv = [sys.executable, "-m", "sandboxrun", "serve", "--socket", path, "--config",
            str(config), "--listen", f"127.0.0.1:{port}", "--token-file", str(token)]  # fmt: skip
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log,
                            preexec_fn=_limited_files)  # fmt: skip
    idle: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        while (sock := client.connect(path)) is None:
            assert time.monotonic() < deadline and proc.poll() is None, "serve did not start"
            time.sleep(0.1)
        sock.close()
        for where in (port, path):
            for _ in range(300):  # each listener more than the process has descriptors
                found = _idle(where)
                if found is None:
                    break
                idle.append(found)
        assert _probe(port) == (200, b'{"ok": true}')
        status, health = _probe(path)
        assert status == 200 and json.loads(health)["pid"] == proc.pid
    finally:
        for sock in idle:
            sock.close()
        proc.kill()
        proc.wait()
        log.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _closed_by_server(sock: socket.socket, dribble: bytes, bound: float) -> float:
    """Send `dribble` a byte at a time (0.2 s apart, then nothing) until the server
    closes the connection; the seconds that took (the test fails past `bound`)."""
    started = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - started < bound:
        if dribble:
            try:
                sock.send(dribble[:1])
            except OSError:  # reset: closed
                return time.monotonic() - started
            dribble = dribble[1:]
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - started
    raise AssertionError(f"the server kept a slow client for {bound} s")


@pytest.fixture
def slow_tcp(home: Path, short_dir: Path) -> Iterator[tuple[App, int, str, Gated]]:
    """A server on TCP and a unix socket that gives a client 1 s to send its request
    and answers one request at a time, over a `Gated` backend."""
    path = str(short_dir / "l" / "serve.sock")
    backend = Gated()
    settings = Settings.load(serve_read_timeout=1.0, serve_max_requests=1)
    app = App(lambda settings: backend, settings)
    servers = open_servers(app, path, ("127.0.0.1", 0), TOKEN.encode())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield app, servers[1].server_address[1], path, backend
    backend.release.set()
    close_servers(app, servers, path)


def test_slow_and_silent_clients_are_dropped(slow_tcp: tuple[App, int, str, Gated]) -> None:
    """A client that sends nothing, dribbles its head (slowloris) or its body is
    dropped at its deadline (1 s here), on TCP and on the unix socket."""
    _app, port, path, _backend = slow_tcp
    body = b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    for where in (port, path):
        for dribble in (b"", b"GET /healthz HTTP/1.1\r\n" + b"X-Slow: yes\r\n" * 100,
                        body + b"{" * 1000):  # fmt: skip
            family = socket.AF_INET if isinstance(where, int) else socket.AF_UNIX
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.connect(("127.0.0.1", where) if isinstance(where, int) else where)
                assert _closed_by_server(sock, dribble, bound=30) < 30


def test_past_the_cap_a_request_gets_503_and_probes_still_answer(
    slow_tcp: tuple[App, int, str, Gated], tmp_path: Path
) -> None:
    """With `serve_max_requests = 1` and one request in flight, the next gets 503 with
    a fallback (the client runs it cold); /healthz and /readyz still answer; once the
    first is answered, a request is taken again."""
    _app, port, path, backend = slow_tcp
    (tmp_path / "w").mkdir()
    body = json.dumps({"args": ["--", "binary"], "cwd": str(tmp_path / "w"), "stdin": ""})
    answers: list[tuple[int, bytes]] = []
    first = threading.Thread(
        target=lambda: answers.append(fetch(port, "/v1/exec", BEARER, "POST", body.encode()))
    )
    first.start()
    assert backend.started.wait(10)
    status, busy = fetch(path, "/v1/exec", method="POST", body=body.encode())
    assert status == 503 and "busy" in json.loads(busy)["fallback"]
    assert fetch(port, "/healthz") == (200, b'{"ok": true}')
    assert fetch(port, "/readyz") == (200, b'{"ready": true}')
    assert fetch(path, "/healthz")[0] == 200
    backend.release.set()
    first.join(60)
    assert [status for status, _ in answers] == [200]
    status, again = fetch(path, "/v1/exec", method="POST", body=body.encode())
    assert status == 200 and json.loads(again)["exitCode"] == 3


class Hanging(FakeBackend):
    """Hooks that run until their request is cancelled (at most `most` seconds), but
    for commands ending in "quick", which answer after `quick` seconds. A hook writes
    `export NODE_ENV=from-the-hook` to its CLAUDE_ENV_FILE first (a name the default
    `env_file_allow` passes)."""

    def __init__(self, most: float = 30.0, quick: float = 1.0) -> None:
        super().__init__(self._run)
        self.most, self.quick = most, quick
        self.started: dict[str, threading.Event] = {}
        self.cancelled: list[str] = []

    def _run(self, request: ExecRequest) -> ExecResult:
        name = request.argv[-1]
        if request.env_file:
            with open(request.env_file, "a") as f:
                f.write("export NODE_ENV=from-the-hook\n")
        self.started.setdefault(name, threading.Event()).set()
        if name.endswith("quick"):
            time.sleep(self.quick)
            return ExecResult(0, b"done " + name.encode(), b"", 5)
        ended = threading.Event()
        cancel = getattr(request, "cancel", None)  # None before serve could cancel
        with request.on_cancel(ended.set) if cancel else contextlib.nullcontext():
            if ended.wait(self.most):
                self.cancelled.append(name)
        return ExecResult(0, b"", b"", 5)

    def wait_started(self, name: str) -> None:
        assert self.started.setdefault(name, threading.Event()).wait(30), name


def _exec_body(
    command: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes = b""
) -> bytes:
    args = ["--agent", "claude", "--", command]
    body = {"args": args, "cwd": str(cwd), "stdin": base64.b64encode(stdin).decode(),
            "env": env or {}}  # fmt: skip
    return json.dumps(body).encode()


# An event the agent hands a hook its CLAUDE_ENV_FILE for (`_sandbox.envfile.EVENTS`)
SESSION_START = json.dumps({"hook_event_name": "SessionStart", "session_id": "s"}).encode()


def _hang_up_after_start(path: str, body: bytes, backend: Hanging, name: str) -> None:
    """POST `body` on the unix socket, wait until its hook runs, then hang up."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(b"POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))  # fmt: skip
        backend.wait_started(name)


def _wait_idle(app: App) -> None:
    deadline = time.monotonic() + 60
    while app.inflight:
        assert time.monotonic() < deadline, "the request never ended"
        time.sleep(0.05)


def test_a_client_that_hangs_up_stops_its_hooks_only(
    home: Path, short_dir: Path, tmp_path: Path
) -> None:
    """A client that closes its connection mid-request: its hook is cancelled within a
    few seconds (not at its deadline), while another client's request on the same
    backend runs on and gets its answer."""
    path = str(short_dir / "h" / "serve.sock")
    backend = Hanging(most=30.0, quick=2.0)
    app = App(lambda settings: backend)
    servers = open_servers(app, path)
    threading.Thread(target=servers[0].serve_forever, daemon=True).start()
    (tmp_path / "w").mkdir()  # not the folder of the home: no workspace may hold it
    try:
        answers: list[tuple[int, bytes]] = []
        other = threading.Thread(target=lambda: answers.append(
            fetch(path, "/v1/exec", method="POST", body=_exec_body("b-quick", tmp_path / "w"))
        ))  # fmt: skip
        started = time.monotonic()
        _hang_up_after_start(path, _exec_body("a-hangs", tmp_path / "w"), backend, "a-hangs")
        other.start()
        _wait_idle(app)
        other.join(60)
        assert backend.cancelled == ["a-hangs"]
        assert time.monotonic() - started < 25  # its hook waited 30 s for a cancel
        [(status, reply)] = answers
        assert status == 200 and b"done b-quick" in base64.b64decode(json.loads(reply)["stdout"])
    finally:
        close_servers(app, servers, path)


def test_an_exec_whose_client_hung_up_hands_nothing_to_the_env_file(
    home: Path, short_dir: Path, tmp_path: Path
) -> None:
    """The hook wrote an env line, then its client went away: the agent's
    CLAUDE_ENV_FILE stays untouched (the same exec, answered, copies it)."""
    path = str(short_dir / "e" / "serve.sock")
    backend = Hanging(most=3.0, quick=0.0)
    app = App(lambda settings: backend)
    servers = open_servers(app, path)
    threading.Thread(target=servers[0].serve_forever, daemon=True).start()
    target = home / ".claude" / "session-env" / "s" / "sessionstart-hook-0.sh"
    target.parent.mkdir(parents=True)
    env = {"CLAUDE_ENV_FILE": str(target)}
    (tmp_path / "p").mkdir()
    try:
        body = _exec_body("gone", tmp_path / "p", env, SESSION_START)
        _hang_up_after_start(path, body, backend, "gone")
        _wait_idle(app)
        assert not target.exists() or "from-the-hook" not in target.read_text()
        status, _ = fetch(path, "/v1/exec", method="POST",
                          body=_exec_body("answered-quick", tmp_path / "p", env,
                                          SESSION_START))  # fmt: skip
        assert status == 200 and "from-the-hook" in target.read_text()  # the control
    finally:
        close_servers(app, servers, path)


def test_past_max_backends_a_request_runs_cold_on_a_backend_closed_after_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept backends are made warm and live as long as the server; a request with
    settings past MAX_BACKENDS gets a backend without a pool, closed after it."""
    monkeypatch.setattr(_app, "MAX_BACKENDS", 1)
    made: list[tuple[int, FakeBackend]] = []

    def make(settings: Settings) -> FakeBackend:
        made.append((settings.pool_size, FakeBackend(answer)))
        return made[-1][1]

    app = App(make)
    (tmp_path / "w").mkdir()
    for timeout in ("5", "6", "5"):  # two distinct settings, the first twice
        reply = app.answer("exec", _request(["--timeout", timeout, "--", "binary"], tmp_path / "w"))
        assert reply.exit_code == 3
    assert [(size, backend.closed) for size, backend in made] == [(2, False), (0, True)]
    app.close()
    assert made[0][1].closed


# -- a TCP request is a tenant's: the server's config file decides --------------------


class Tenant:
    def __init__(self, port: int, path: str, backend: FakeBackend, ws: Path, home: Path) -> None:
        self.port, self.path, self.backend, self.ws, self.home = port, path, backend, ws, home

    def ask(
        self, command: str, args: list[str], env: dict[str, str] | None = None, tcp: bool = True,
        stdin: bytes = b"",
    ) -> tuple[int, dict[str, Any]]:  # fmt: skip
        """(status, JSON) of one request over TCP (else the unix socket)."""
        body = json.dumps({"args": args, "cwd": str(self.ws), "env": env or {},
                           "stdin": base64.b64encode(stdin).decode()})  # fmt: skip
        where: str | int = self.port if tcp else self.path
        status, raw = fetch(where, f"/v1/{command}", BEARER if tcp else "", "POST", body.encode())
        return status, json.loads(raw)


def _env_writer(request: ExecRequest) -> ExecResult:
    """A hook that writes a line the default env_file_allow passes, when it has a file;
    it prints whether it got one. A command "exit-127" cannot be found."""
    if request.env_file:
        with open(request.env_file, "a") as f:
            f.write("export NODE_ENV=from-the-tenant\n")
    if request.argv[-1] == "exit-127":
        return ExecResult(127, b"", b"not found\n", 1)
    return ExecResult(0, b"file" if request.env_file else b"none", b"", 1)


@pytest.fixture
def tenant(home: Path, short_dir: Path, tmp_path: Path) -> Iterator[Tenant]:
    """A server on its socket and on TCP, its settings in its own config file (`serve
    --config`: allowed_roots, timeout 5); a tenant's workspace below its allowed_roots
    holds a config file that would widen everything, and garbage."""
    ws = tmp_path / "tenants" / "t1"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "wide.toml").write_text(
        'network = "bridge"\nhook_paths = ["/"]\ntimeout = 3600\n'
    )
    (ws / ".claude" / "garbage.toml").write_text("[[[ this is not TOML\n")
    config = tmp_path / "server.toml"
    config.write_text(f'allowed_roots = ["{tmp_path / "tenants"}"]\ntimeout = 5\n')
    backend = FakeBackend(_env_writer)
    logger.remove()  # as `serve` sets it up: the request's log lines reach its stderr
    logger.enable("sandboxrun")
    app = App(lambda settings: backend, config=str(config))
    path = str(short_dir / "t" / "serve.sock")
    servers = open_servers(app, path, ("127.0.0.1", 0), TOKEN.encode())
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Tenant(servers[1].server_address[1], path, backend, ws, home)
    close_servers(app, servers, path)


REFUSED = [
    (["--config", "{ws}/.claude/garbage.toml"], "--config"),
    (["--config", "{ws}/.claude/wide.toml"], "--config"),
    (["--conf={ws}/.claude/wide.toml"], "--config"),  # an abbreviation is what it means
    (["--network", "bridge"], "--network"),
    (["--net=bridge"], "--network"),
    (["--network", "none"], "--network"),  # even a narrower one: by list, not by value
    (["--allow-domain", "evil.test"], "--allow-domain"),
    (["--image", "evil/image"], "--image"),
    (["--runtime", "runc"], "--runtime"),
    (["--backend", "docker"], "--backend"),
]
RUN_ONLY = [
    (["--home", "{ws}"], "--home"),
    (["--hooks-dir", "{ws}/.claude"], "--hooks-dir"),
    (["--env-file", "{home}/.claude/session-env/s/sessionstart-hook-0.sh"], "--env-file"),
]


@pytest.mark.parametrize(
    ("command", "options", "name"),
    [("run", o, n) for o, n in REFUSED + RUN_ONLY] + [("exec", o, n) for o, n in REFUSED],
)
def test_a_tcp_request_may_not_carry_options_that_name_settings(
    tenant: Tenant, command: str, options: list[str], name: str
) -> None:
    """Refused with a 400 and one line naming the option, before anything is read or
    run: a config file the tenant names is never parsed (its garbage goes unmentioned).
    The same request on the unix socket (the server's own user) is answered as today."""
    options = [o.format(ws=tenant.ws, home=tenant.home) for o in options]
    args = (["PreToolUse", "--agent", "claude", *options] if command == "run"
            else [*options, "--", "true"])  # fmt: skip
    status, reply = tenant.ask(command, args)
    assert status == 400, reply
    error = reply["error"]
    assert f"{name} is not accepted over TCP" in error and "\n" not in error
    assert "toml" not in error.lower() and "garbage" not in error
    assert tenant.backend.requests == []
    status, reply = tenant.ask(command, args, tcp=False)
    assert status == 200, reply


@pytest.mark.parametrize("command", ["run", "exec"])
def test_a_tcp_request_may_carry_the_options_that_pick_within_the_servers_settings(
    tenant: Tenant, command: str
) -> None:
    hook = tenant.ws / ".claude" / "settings.json"
    hook.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true"}]}]}}))  # fmt: skip
    common = ["--agent", "claude", "--workspace", str(tenant.ws), "--fail-closed",
              "--timeout", "2"]  # fmt: skip
    args = (["PreToolUse", *common, "--answer", "report"] if command == "run"
            else [*common, "--untrusted", "--", "true"])  # fmt: skip
    status, reply = tenant.ask(command, args)
    assert status == 200 and reply["exitCode"] == 0, reply
    assert [r.timeout for r in tenant.backend.requests] == [2.0]


@pytest.mark.parametrize("command", ["run", "exec"])
def test_a_tcp_requests_timeout_only_shortens_the_servers(tenant: Tenant, command: str) -> None:
    """The server's config says timeout = 5: a tenant's --timeout 3000 gets 5, its 2
    gets 2; on the unix socket the server's user still lengthens it."""
    hook = tenant.ws / ".claude" / "settings.json"
    hook.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true"}]}]}}))  # fmt: skip
    for given, tcp, got in (("3000", True, 5.0), ("2", True, 2.0), ("3000", False, 3000.0)):
        args = (["PreToolUse", "--agent", "claude", "--timeout", given] if command == "run"
                else ["--timeout", given, "--", "true"])  # fmt: skip
        status, reply = tenant.ask(command, args, tcp=tcp)
        assert status == 200 and reply["exitCode"] == 0, reply
        assert tenant.backend.requests[-1].timeout == got


def test_a_tcp_exec_never_appends_to_a_file_its_environment_names(tenant: Tenant) -> None:
    """The tenant's env names a CLAUDE_ENV_FILE in the server's own session-env folder
    (and a plugin root): over TCP the hook gets no env file, nothing is appended, and
    stderr says what was ignored; the tightening variable still tightens. The same
    request on the unix socket (the server's user's agent) copies the line."""
    target = tenant.home / ".claude" / "session-env" / "s" / "sessionstart-hook-0.sh"
    target.parent.mkdir(parents=True)
    env = {"CLAUDE_ENV_FILE": str(target), "CLAUDE_PLUGIN_ROOT": str(tenant.home / ".claude")}
    status, reply = tenant.ask("exec", ["--", "true"], env, stdin=SESSION_START)
    assert status == 200 and reply["exitCode"] == 0, reply
    assert base64.b64decode(reply["stdout"]) == b"none"
    assert "CLAUDE_ENV_FILE, CLAUDE_PLUGIN_ROOT" in base64.b64decode(reply["stderr"]).decode()
    assert tenant.backend.requests[-1].env_file is None
    assert "CLAUDE_ENV_FILE" not in tenant.backend.requests[-1].env
    assert not target.exists()
    status, reply = tenant.ask("exec", ["--", "exit-127"], {"SANDBOXRUN_FAIL_CLOSED": "1"})
    assert status == 200 and reply["exitCode"] == 2, reply  # fail-closed: a block
    status, reply = tenant.ask("exec", ["--", "true"], env, tcp=False, stdin=SESSION_START)
    # (the control)
    assert status == 200 and base64.b64decode(reply["stdout"]) == b"file"
    assert "from-the-tenant" in target.read_text()


def test_a_tcp_tenants_agent_answer_keeps_the_tenant_rules(tenant: Tenant) -> None:
    """`run --answer agent` over TCP (a tenant's Cline hook) is answered, no longer left to
    a cold path the tenant does not have, with the tenant's rules: the workspace its event
    names outside the server's allowed_roots runs nothing, and under fail-closed blocks in
    Cline's terms; below them, its hooks run. A tenant's `--hooks-dir` stays refused."""
    hooks = tenant.ws / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    (hooks / "PreToolUse").chmod(0o755)
    outside = tenant.home / "project"
    (outside / ".clinerules" / "hooks").mkdir(parents=True)
    (outside / ".clinerules" / "hooks" / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    (outside / ".clinerules" / "hooks" / "PreToolUse").chmod(0o755)
    args = ["PreToolUse", "--agent", "cline", "--answer", "agent"]

    def event(root: Path) -> bytes:
        return json.dumps({"hookName": "PreToolUse", "workspaceRoots": [str(root)]}).encode()

    status, reply = tenant.ask("run", [*args, "--fail-closed"], stdin=event(outside))
    assert status == 200, reply
    assert json.loads(base64.b64decode(reply["stdout"]))["cancel"] is True
    assert reply["exitCode"] == 0 and tenant.backend.requests == []
    status, reply = tenant.ask("run", args, stdin=event(tenant.ws))
    assert status == 200 and reply["exitCode"] == 0, reply
    assert [r.workdir for r in tenant.backend.requests] == [str(tenant.ws)]
    status, reply = tenant.ask("run", [*args, "--hooks-dir", str(hooks)], stdin=event(tenant.ws))
    assert status == 400 and "--hooks-dir is not accepted over TCP" in reply["error"]


def test_a_tcp_request_never_gets_the_servers_transcripts(tenant: Tenant) -> None:
    """An event naming a transcript in the server user's own ~/.claude/projects (another
    tenant's session, on a platform whose agents run as that user) gets it mounted over
    the unix socket (the server's user's own agent), never over TCP: run and exec."""
    transcript = tenant.home / ".claude" / "projects" / "other" / "session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"secret": "another tenant"}\n')
    (tenant.ws / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    )
    event = json.dumps({"hook_event_name": "Stop", "cwd": str(tenant.ws),
                        "transcript_path": str(transcript)}).encode()  # fmt: skip
    for command, args in (("exec", ["--", "true"]), ("run", ["Stop", "--agent", "claude"])):
        for tcp in (True, False):
            before = len(tenant.backend.requests)
            status, reply = tenant.ask(command, args, tcp=tcp, stdin=event)
            assert status == 200, reply
            assert len(tenant.backend.requests) == before + 1, (command, reply)
            mounted = str(transcript) in tenant.backend.requests[-1].mounts
            assert mounted is not tcp, (command, tcp, tenant.backend.requests[-1].mounts)


def test_the_command_answered_by_the_server_exits_with_its_whole_answer(
    served: Served, ws: Path
) -> None:
    """`python -m sandboxrun` (the command itself, not `main(argv)`) leaves without the
    interpreter's teardown once the server has answered: its stdout and stderr are
    still whole, and its exit code is the answer's."""
    exec_argv = ["exec", "--agent", "claude", "--config", str(served.config), "--",
                 "binary"]  # fmt: skip
    stdin = bytes(range(256)) * 400  # past every buffer on the way
    done = subprocess.run(
        [sys.executable, "-m", "sandboxrun", *exec_argv], input=stdin, capture_output=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stdout == b"\x00\xff" + stdin
    assert done.stderr.endswith(b"to stderr\n")
    assert served.app.answered == 1


def test_the_installed_command_imports_neither_re_nor_json(served: Served, ws: Path) -> None:
    """What installed hooks start (`launcher`: `PYTHON -I .../sandboxrun-hook`, from
    bin/sandboxrun-hook), answered by the server, imports neither `re` nor `json` (their
    `enum` is most of Python 3.11's start-up cost of a hook: `bench/client_start.py`),
    and the answer it decodes with `json`'s C accelerator is whole."""
    python, isolated, script = launcher()
    assert Path(script).name == "sandboxrun-hook", "pip install -e . puts it beside python"
    exec_argv = ["exec", "--agent", "claude", "--config", str(served.config), "--",
                 "binary"]  # fmt: skip
    stdin = 'é\u2028\x00 {"json": [1]}'.encode() * 100
    done = subprocess.run(
        [python, "-X", "importtime", isolated, script, *exec_argv], input=stdin,
        capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stdout == b"\x00\xff" + stdin
    imported = {
        line.rpartition("|")[2].strip()
        for line in done.stderr.decode().splitlines() if line.startswith("import time:")
    }  # fmt: skip
    assert "sandboxrun._client" in imported
    assert not imported & {"re", "json", "enum", "typing"}, sorted(imported)


def test_the_clients_json_is_jsons() -> None:
    """The client's `dumps`/`loads` (json's C accelerator, without importing `json`)
    give what `json` gives, and refuse what it refuses."""
    document = {"args": ["run", "é", "\x00", '"\\', "\u2028"], "cwd": "/w", "verbose": 2,
                "env": {"SANDBOXRUN_X": "1"}, "none": None, "yes": True, "f": 1.5,
                "emoji": "😀", "empty": [{}, []]}  # fmt: skip
    assert json.loads(client.dumps(document)) == document
    assert client.dumps(document) == json.dumps(document, separators=(",", ":"))
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        client.dumps({"a": {1}})
    for text in ['{"a": 1}', ' [1, 2.5e3, "x\\u00e9", null, true] \n', '"s"', "-0"]:
        assert client.loads(text) == json.loads(text)
    for bad in ["", "  ", '{"a": 1} x', '{"a":', '"\x01"', "{1: 2}", "[1,]"]:
        with pytest.raises(ValueError):
            client.loads(bad)
        with pytest.raises(ValueError):
            json.loads(bad)


def test_a_socket_in_a_shared_folder_or_the_home_is_refused_at_load(home: Path) -> None:
    """Its folder is sandboxrun's own (made 0700, never a workspace nor in one): in the
    home or /tmp, every workspace there would be refused, each hook an error."""
    for place in (home / "serve.sock", Path("/tmp/serve.sock"), Path("/serve.sock")):
        with pytest.raises(ConfigError, match="put the socket in a folder of its own"):
            Settings.load(serve_socket=str(place))
    mine = home / ".cache" / "sandboxrun" / "serve.sock"
    assert Settings.load(serve_socket=str(mine)).serve_socket == str(mine)
