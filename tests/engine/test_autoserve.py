"""Warm by default on the real engine (issue 19): the server a first `run` starts
answers the next ones, sees a hook edited between two calls, and leaves no container
behind, whether it stops when idle or is SIGKILLed (the next server sweeps)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sandboxrun import DockerBackend
from sandboxrun import _client as client
from sandboxrun._backends.labels import MANAGED, PID
from tests.engine.conftest import HookWriter, _test_config

HOOK = """echo '{"cancel": false, "contextModification": "%s"}'"""


def _wait(predicate: Any, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _pid(path: str) -> int:
    sock = client.connect(path)
    assert sock is not None
    try:
        return int(client.exchange(sock, "GET", "/healthz")[1]["pid"])
    finally:
        sock.close()


def _gone(pid: int) -> bool:
    """Whether process `pid` ended (a zombie waiting for its reaper has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2 :].startswith(b"Z")


def _answers(path: str) -> bool:
    sock = client.connect(path)
    if sock is not None:
        sock.close()
    return sock is not None


class _Calls:
    """`sandboxrun run PreToolUse` as an agent calls it, warm by default."""

    def __init__(self, folder: Path, workspace: Path, idle: float) -> None:
        self.path = str(folder / "s" / "serve.sock")
        self.config = folder / "config.toml"
        lines = [line for line in _test_config().splitlines() if not line.startswith("serve")]
        lines += [f'serve_socket = "{self.path}"', f"serve_idle = {idle}", "pool_size = 1"]
        self.config.write_text("".join(f"{line}\n" for line in lines))
        (folder / "home").mkdir()
        self.argv = [sys.executable, "-m", "sandboxrun", "run", "PreToolUse", "--config",
                     str(self.config), "--home", str(folder / "home"), "--workspace",
                     str(workspace)]  # fmt: skip
        self.env = {k: v for k, v in os.environ.items() if k != "CI"}

    def __call__(self) -> str:
        done = subprocess.run(self.argv, input=b"{}", capture_output=True, env=self.env,
                              timeout=180)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["contextModification"])


def _containers_of(engine: DockerBackend, pid: int) -> list[str]:
    mine = {"label": [f"{MANAGED}=1", f"{PID}={pid}"]}
    return [c["Id"] for c in engine.api.containers(all=True, filters=mine)]


def test_the_started_server_sees_an_edited_hook_and_leaves_nothing_when_idle(
    engine: DockerBackend, tmp_path: Path, workspace: Path, hook: HookWriter
) -> None:
    """First call cold (it starts the server), the next through it; a hook replaced
    between two calls with the same size and mtime (a new inode and ctime) runs as
    its new self; after `serve_idle` the server stops and its pool is gone."""
    short = Path(tempfile.mkdtemp(prefix="sa-", dir="/tmp"))  # a socket's path is short
    calls = _Calls(short, workspace, idle=8)
    script = hook(HOOK % "one")
    assert calls() == "one"
    _wait(lambda: _answers(calls.path), "no server was started")
    pid = _pid(calls.path)
    try:
        assert calls() == "one"  # through the server; its pool fills for the next
        stamp = script.stat()
        fresh = script.with_name("new")
        fresh.write_text(script.read_text().replace("one", "two"))
        fresh.chmod(0o755)
        os.utime(fresh, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        fresh.replace(script)
        assert (script.stat().st_size, script.stat().st_mtime_ns) == (
            stamp.st_size, stamp.st_mtime_ns,
        )  # fmt: skip
        assert calls() == "two"
        assert _pid(calls.path) == pid  # the same server answered
        _wait(lambda: not os.path.exists(calls.path), "the server did not stop when idle")
        _wait(lambda: _gone(pid), "the server did not exit")
        assert _containers_of(engine, pid) == []
    finally:
        if not _gone(pid):
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(short, ignore_errors=True)


def test_a_killed_servers_containers_go_with_the_next_server(
    engine: DockerBackend, tmp_path: Path, workspace: Path, hook: HookWriter
) -> None:
    """SIGKILL leaves the pool's containers; the next call finds the dead socket, starts
    a server again, and that one's start-up sweep removes them."""
    short = Path(tempfile.mkdtemp(prefix="sk-", dir="/tmp"))
    calls = _Calls(short, workspace, idle=60)
    hook(HOOK % "one")
    calls()
    _wait(lambda: _answers(calls.path), "no server was started")
    first = _pid(calls.path)
    second = None
    try:
        calls()  # fills the pool
        _wait(lambda: _containers_of(engine, first), "the pool did not fill")
        os.kill(first, signal.SIGKILL)
        _wait(lambda: _gone(first), "the server did not die")
        assert calls() == "one"  # cold, and it starts the next server
        _wait(lambda: _answers(calls.path), "no second server was started")
        second = _pid(calls.path)
        assert second != first
        _wait(lambda: not _containers_of(engine, first), "the killed server's pool stayed")
    finally:
        for pid in (first, second):
            if pid and not _gone(pid):
                os.kill(pid, signal.SIGTERM)
        if second:
            _wait(lambda: _gone(second), "the second server stayed")
            assert _containers_of(engine, second) == []
        shutil.rmtree(short, ignore_errors=True)
