"""The tests never start, nor talk to, the account's own server (`sandboxrun serve` on
the developer's socket, warm by default): it would outlive the run and answer the
developer's hooks with a test's config. tests/conftest.py and tests/site say how."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandboxrun import _client, _userconfig
from tests.conftest import ACCOUNT_SOCKETS, TEST_SOCKET, account_servers


def _servers_of(config: Path) -> list[int]:
    """The pids of `sandboxrun serve` processes started with `config`."""
    found = []
    for entry in os.scandir("/proc"):
        try:
            argv = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(config).encode() in argv:
            found.append(int(entry.name))
    return found


def test_a_command_of_the_tests_starts_no_server_on_the_accounts_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run` outside CI, with a config that leaves `serve` at "auto" and the socket at
    its default: the command runs cold and no server is started, on the account's
    socket or anywhere (the Python processes the tests start load tests/site)."""
    monkeypatch.delenv("CI", raising=False)
    config = tmp_path / "auto.toml"
    config.write_text("")  # serve = "auto", serve_socket: the default
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--config", str(config),
            "--workspace", str(ws)]  # fmt: skip
    done = subprocess.run(argv, input=b"{}", capture_output=True, timeout=120, env=os.environ)
    assert done.returncode == 0, done.stderr
    time.sleep(0.5)  # a server would exist as soon as the command returned: a margin
    started = _servers_of(config)
    for pid in started:
        os.kill(pid, signal.SIGTERM)
    assert started == [], "a command of the tests started a server"


def test_the_default_socket_of_a_tests_command_is_the_sessions() -> None:
    """In this process and in the ones it starts, the default socket is never the
    account's; where it would be, it is the session's."""
    code = "from sandboxrun import _client, _userconfig; print(_userconfig.default_socket(), _client.default_socket())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    for path in [*done.stdout.split(), _userconfig.default_socket(), _client.default_socket()]:
        assert path not in ACCOUNT_SOCKETS
    assert done.stdout.split() == [TEST_SOCKET, TEST_SOCKET]


def test_a_server_on_the_watched_socket_is_found(short_dir: Path) -> None:
    """What `_no_account_server` looks for: a `sandboxrun serve` of this virtualenv on
    the socket (here a stand-in that only sleeps, on a socket of the test's)."""
    socket = str(short_dir / "serve.sock")
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m",
                                 "sandboxrun", "serve", "--socket", socket, "--lock-fd", "3"])  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while stand_in.pid not in account_servers(frozenset({socket})):
            assert time.monotonic() < deadline, "the stand-in was never found"
            time.sleep(0.05)
        assert stand_in.pid not in account_servers()  # the account's sockets only
    finally:
        stand_in.kill()
        stand_in.wait()
