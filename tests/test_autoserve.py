"""Warm by default (issue 19): `run` and `exec` start the user's server on first use,
without waiting for it, one server per socket (its lock), stopped when idle; the old
`serve = "start"` still works. No engine: the servers here answer no hook."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from sandboxrun import Settings
from sandboxrun import _client as client
from sandboxrun._server import server_state
from tests.conftest import START_SERVER, user_config
from tests.test_cli_unit import _restore_library_logging  # noqa: F401 - autouse, shared

# A stand-in for the server: holds the lock it is handed and sleeps.
SLEEPER = "import sys, time; time.sleep(float(sys.argv[1]))"


@pytest.fixture
def started() -> Iterator[list[int]]:
    """The pids of what a test started; killed at its end if still there."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue


def test_the_default_is_auto_and_the_old_start_is_auto(home: Path) -> None:
    """`serve` is "auto" unless said; "start", its old name, reads as "auto" with a
    one-line notice; "use" and "off" are the other two."""
    assert (Settings.load().serve, Settings.load().serve_idle) == ("auto", 900.0)
    lines: list[str] = []
    logger.enable("sandboxrun")
    sink = logger.add(lines.append, level="WARNING", format="{message}")
    try:
        user_config(home, 'serve = "start"\n')
        assert Settings.load().serve == "auto"
    finally:
        logger.remove(sink)
    assert len(lines) == 1 and 'serve = "start" is now called "auto"' in lines[0]
    for mode in ("use", "off"):
        user_config(home, f'serve = "{mode}"\n')
        assert Settings.load().serve == mode


@pytest.mark.parametrize(
    ("text", "mode"),
    [("", "auto"), ('serve = "start"\n', "auto"), ('serve = "use"\n', "use"),
     ('serve = "off"\n', "off"), ('serve = "nonsense"\n', "off")],
)  # fmt: skip
def test_the_light_client_reads_the_same_names(home: Path, text: str, mode: str) -> None:
    user_config(home, text)
    path, found = client.socket_path((None, False))
    assert found == mode and (path is None) == (mode == "off")


def _first_call(
    home: Path,
    short_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    text: str = "",
) -> list[tuple[str, str | None]]:
    """One `run` with no hook, its socket in `short_dir`: the starts it asked for."""
    path = short_dir / "s" / "serve.sock"
    config = user_config(home, f'serve_socket = "{path}"\n{text}')
    asked: list[tuple[str, str | None]] = []
    monkeypatch.setattr(client, "start_server", lambda p, c=None: asked.append((p, c)))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    ws = short_dir / "ws"
    ws.mkdir(exist_ok=True)
    argv = ["run", "PreToolUse", "--config", str(config), "--home", str(home), "--workspace",
            str(ws)]  # fmt: skip
    assert client.main(argv) == 0
    assert json.loads(capsysbinary.readouterr().out)["hooks"] == []
    return asked


def test_a_first_call_starts_the_server_and_answers_cold(
    home: Path,
    short_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.delenv("CI", raising=False)
    asked = _first_call(home, short_dir, monkeypatch, capsysbinary)
    config = str(home / ".config" / "sandboxrun" / "config.toml")
    assert asked == [(str(short_dir / "s" / "serve.sock"), config)]


@pytest.mark.parametrize(
    ("text", "ci"),
    [('serve = "use"\n', ""), ('serve = "off"\n', ""), ("", "true"), ("", "1")],
)
def test_no_start_with_use_off_or_under_ci(
    home: Path,
    short_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    text: str,
    ci: str,
) -> None:
    """`use` and `off` never start a server, nor does "auto" in a CI job (`CI=true`):
    a job runs a few commands, and a server would linger after it."""
    monkeypatch.setenv("CI", ci)
    assert _first_call(home, short_dir, monkeypatch, capsysbinary, text) == []


def test_a_socket_another_process_answers_on_is_not_replaced(short_dir: Path) -> None:
    """Vacant: no socket, or a socket of ours nobody accepts on (a killed server's).
    A socket someone listens on (here: whoever it is) is not vacant."""
    import socket

    path = str(short_dir / "s" / "serve.sock")
    assert client.vacant(path)
    (short_dir / "s").mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    try:
        assert client.vacant(path)  # bound, not listening: a dead server's socket
        listener.listen(1)
        assert not client.vacant(path)
    finally:
        listener.close()


def test_start_server_detaches_holds_the_lock_and_never_waits(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch, started: list[int]
) -> None:
    """The server is started in a session of its own, with no stdin or stdout and its
    log beside the socket, and `start_server` returns while it still runs (here: a
    stand-in that sleeps a minute). Its lock makes a second start a no-op until it ends."""
    path = str(short_dir / "s" / "serve.sock")
    monkeypatch.setattr(
        client, "server_argv", lambda p, c, lock: [sys.executable, "-c", SLEEPER, "60"]
    )
    pid = START_SERVER(path)
    assert pid is not None
    started.append(pid)
    assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running: nobody waited for it
    assert os.getsid(pid) == pid  # its own session: the agent's signals miss it
    assert os.readlink(f"/proc/{pid}/fd/0") == os.readlink(f"/proc/{pid}/fd/1") == "/dev/null"
    assert os.readlink(f"/proc/{pid}/fd/2") == client.log_path(path)
    assert START_SERVER(path) is None  # the lock is held: one server per socket
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pid2 = START_SERVER(path)
    assert pid2 is not None  # a dead holder's lock is free
    started.append(pid2)
    assert oct(os.stat(short_dir / "s").st_mode & 0o777) == "0o700"
    assert oct(os.stat(client.lock_path(path)).st_mode & 0o777) == "0o600"


def test_the_first_call_answers_while_the_server_still_starts(
    home: Path,
    short_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    started: list[int],
) -> None:
    """The first call's answer does not wait for the server: it is written while the
    started process (a stand-in that sleeps a minute) has not yet served anything."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(
        client, "server_argv", lambda p, c, lock: [sys.executable, "-c", SLEEPER, "60"]
    )
    pids: list[int] = []

    def start(path: str, config: str | None = None) -> int | None:
        pid = START_SERVER(path, config)
        pids.append(pid or 0)
        started.append(pid or 0)
        return pid

    path = short_dir / "s" / "serve.sock"
    config = user_config(home, f'serve_socket = "{path}"\n')
    monkeypatch.setattr(client, "start_server", start)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    ws = short_dir / "ws"
    ws.mkdir()
    argv = ["run", "PreToolUse", "--config", str(config), "--home", str(home), "--workspace",
            str(ws)]  # fmt: skip
    assert client.main(argv) == 0
    assert json.loads(capsysbinary.readouterr().out)["hooks"] == []
    assert len(pids) == 1 and pids[0] > 0
    assert os.waitpid(pids[0], os.WNOHANG) == (0, 0)  # answered; the "server" still starts


def _wait(predicate: object, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _answers(path: str) -> bool:
    sock = client.connect(path)
    if sock is not None:
        sock.close()
    return sock is not None


def _health(path: str) -> dict[str, object]:
    sock = client.connect(path)
    assert sock is not None
    try:
        status, health = client.exchange(sock, "GET", "/healthz")
    finally:
        sock.close()
    assert status == 200
    return health  # type: ignore[no-any-return]


def test_two_first_calls_start_one_server_which_stops_when_idle(
    home: Path, short_dir: Path, started: list[int]
) -> None:
    """Two first calls at once (real commands): both answer cold, and one server comes
    up (the lock); `doctor` names it as started by run/exec with its idle time; a
    server started by hand on its socket is refused; after `serve_idle` seconds
    without a request it stops by itself: socket gone, lock free, `stopped` logged."""
    path = str(short_dir / "s" / "serve.sock")
    config = home / "c.toml"
    config.write_text(f'serve_socket = "{path}"\nserve_idle = 8\n')
    ws = short_dir / "ws"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CI" and not k.startswith("SANDBOXRUN_")}
    argv = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--config", str(config),
            "--home", str(home), "--workspace", str(ws)]  # fmt: skip
    calls = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env) for _ in range(2)]  # fmt: skip
    for call in calls:
        out, err = call.communicate(b"{}", timeout=120)
        assert call.returncode == 0, err
        assert json.loads(out)["hooks"] == []
    _wait(lambda: _answers(path), "no server came up")
    health = _health(path)
    pid = int(health["pid"])  # type: ignore[call-overload]
    started.append(pid)
    assert (health["started"], health["idleExit"]) == ("auto", 8.0)
    line = server_state(Settings.load(config=config))[2]  # doctor's line
    assert f"pid {pid}, started by run/exec" in line and "stops after 8s idle" in line, line
    by_hand = subprocess.run([sys.executable, "-m", "sandboxrun", "serve", "--config",
                              str(config)], capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert by_hand.returncode == 2 and "another server starts or runs" in by_hand.stderr
    _wait(lambda: not os.path.exists(path), "the server did not stop when idle")
    _wait(lambda: _lock_free(path), "the lock stayed held")
    log = Path(client.log_path(path)).read_text()
    assert log.count("serving on") == 1, log  # one server for the two first calls
    assert log.rstrip().endswith("stopped"), log


def _lock_free(path: str) -> bool:
    import fcntl

    fd = os.open(client.lock_path(path), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_server_started_by_hand_says_so(short_dir: Path, home: Path, started: list[int]) -> None:
    """`serve` by hand takes the same lock, has no idle exit unless told, and says
    "hand" on /healthz (doctor's "started by hand")."""
    path = str(short_dir / "h" / "serve.sock")
    proc = subprocess.Popen([sys.executable, "-m", "sandboxrun", "serve", "--socket", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    started.append(proc.pid)
    try:
        _wait(lambda: _answers(path), "serve did not start")
        health = _health(path)
        assert (health["started"], health["idleExit"]) == ("hand", None)
        assert not _lock_free(path)
        assert START_SERVER(path) is None
    finally:
        proc.terminate()
        proc.communicate(timeout=120)
    assert proc.returncode == 0


@pytest.mark.parametrize("auto", [True, False], ids=["on-demand", "by-hand"])
def test_a_request_naming_no_config_reads_the_accounts_unless_started_by_hand(
    home: Path, short_dir: Path, tmp_path: Path, started: list[int], auto: bool
) -> None:
    """A server `run`/`exec` started with their `--config` (a test's, a project's) answers
    a later command naming none from the account's config file, as that command would
    cold (here the account says `serve = "off"`: it declines, 503); one started by hand
    with `--config` answers it from that file (a platform's one file: 200). A request
    naming the server's file is answered either way. (No hooks: no engine needed.)"""
    import fcntl

    from tests.fake_home import command

    user_config(home, 'serve = "off"\n')
    first = tmp_path / "first.toml"
    first.write_text("")  # serve = "auto"
    path = str(short_dir / "s" / "serve.sock")
    os.makedirs(os.path.dirname(path), mode=0o700)
    argv = [sys.executable, "-m", "sandboxrun", "serve", "--socket", path, "--config", str(first)]
    lock = os.open(client.lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if auto:  # as `start_server` hands it on
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            argv += ["--lock-fd", str(lock)]
        proc = subprocess.Popen(command(home, argv), pass_fds=(lock,) if auto else (),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    finally:
        os.close(lock)
    started.append(proc.pid)
    ws = tmp_path / "ws"
    ws.mkdir()

    def status(*named: str) -> int:
        sock = client.connect(path)
        assert sock is not None
        args = [*named, "PreToolUse", "--home", str(home), "--workspace", str(ws)]
        request = {"args": args, "cwd": str(ws), "env": {}, "verbose": 0, "stdin": "e30="}
        try:
            return client.post(sock, "/v1/run", request)[0]
        finally:
            sock.close()

    try:
        _wait(lambda: _answers(path), "serve did not start")
        assert status("--config", str(first)) == 200
        assert status() == (503 if auto else 200)
    finally:
        proc.terminate()
        proc.communicate(timeout=120)
