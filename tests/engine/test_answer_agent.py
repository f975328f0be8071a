"""`sandboxrun run --answer agent` against the real engine. Issue 29, item 5: a Cursor
guard's `{"permission": "deny"}` comes out as Cursor's deny (it came out as `{}`, an
allow), and its allow as no deny; read back as Cursor reads a hook. Issue 31, item 4: an
installed Cline shim (`run --answer agent`) is answered by the server, warm from its
second run (it was declined to the cold path, every run)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.cursor import CURSOR
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli, engine_image
from .test_install import CLINE_GUARD, cline_event, cline_runs
from .test_serve import Server

GUARD = """#!/bin/sh
if grep -q 'rm -rf'; then
  echo '{"permission": "deny", "user_message": "no rm -rf", "agent_message": "no rm -rf"}'
else
  echo '{"permission": "allow"}'
fi
"""


def cursor_blocks(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether Cursor blocks on what `run --answer agent` printed (its dialect's reading)."""
    spec = HookSpec("beforeShellExecution", "run", "user", ("run",), "/", ())
    result = ExecResult(done.returncode, done.stdout, done.stderr, 1)
    return bool(CURSOR.combine([CURSOR.interpret(spec, result, 30.0)], False)["blocked"])


@pytest.mark.parametrize(("command", "blocked"), [("rm -rf /", True), ("ls", False)])
def test_a_cursor_guards_answer_is_cursors_answer(
    tmp_path: Path, command: str, blocked: bool
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".cursor" / "hooks").mkdir(parents=True)
    ws.mkdir()
    guard = home / ".cursor" / "hooks" / "guard.sh"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    hooks = {"beforeShellExecution": [{"command": "./hooks/guard.sh"}]}
    (home / ".cursor" / "hooks.json").write_text(json.dumps({"version": 1, "hooks": hooks}))
    event = {"conversation_id": "c1", "hook_event_name": "beforeShellExecution",
             "workspace_roots": [str(ws)], "command": command, "cwd": str(ws)}  # fmt: skip
    run = cli("run", "beforeShellExecution", "--agent", "cursor", home=home)
    done = subprocess.run([*run, "--answer", "agent"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=240)  # fmt: skip
    # The report says the same (through `sandboxrun serve` too, as the agent's own answer).
    report = subprocess.run(run, input=json.dumps(event).encode(), capture_output=True,
                            timeout=240)  # fmt: skip
    assert json.loads(report.stdout)["blocked"] is blocked, report.stderr
    assert cursor_blocks(done) is blocked, (done.returncode, done.stdout, done.stderr)
    assert done.returncode == 0
    if blocked:
        assert json.loads(done.stdout) == {"permission": "deny", "user_message": "no rm -rf",
                                           "agent_message": "no rm -rf"}  # fmt: skip


def _idle_pooled(path: str) -> float:
    """The server's idle pooled containers (`/metrics` on its unix socket)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: s\r\nConnection: close\r\n\r\n")
        raw = b"".join(iter(lambda: sock.recv(1 << 16), b""))
    found = re.search(rb'^sandboxrun_pool_containers\{state="idle"\} (\S+)$', raw, re.M)
    return float(found[1]) if found else 0.0


def test_an_installed_cline_shim_is_answered_warm_from_its_second_run(
    engine: DockerBackend, tmp_path: Path
) -> None:
    """The shim `install --agent cline` writes, run as Cline runs it, twice: both runs are
    answered by the server (not declined to the cold path); the first starts the pool,
    the second runs in a container started ahead of time (`warm: true` in its audit
    line), and the guard's block still blocks, in Cline's terms."""
    folder = Path(tempfile.mkdtemp(prefix="sw-", dir="/tmp"))  # a socket's path is short
    root, home, audit = tmp_path / "ws", tmp_path / "home", folder / "audit.jsonl"
    (root / ".clinerules" / "hooks").mkdir(parents=True)
    home.mkdir()
    guard = root / ".clinerules" / "hooks" / "PreToolUse"
    guard.write_text(CLINE_GUARD)
    guard.chmod(0o755)
    image = f'image = "{engine_image()}"\n' if engine_image() else ""
    srv = Server(folder, config=f'{image}serve = "use"\naudit_log = "{audit}"\nreview = "off"\n')
    try:
        install = cli("install", "--agent", "cline", "--workspace", str(root), "--home",
                      str(home), config=srv.config)  # fmt: skip
        done = subprocess.run(install, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert b"--answer agent" in guard.read_bytes()  # the shim, in the guard's place
        event = cline_event("PreToolUse", root, {"toolName": "execute_command",
                                                 "parameters": {"command": "rm -rf ~/p"}})  # fmt: skip
        blocked = (True, "", "Blocked by team policy: rm -rf")
        before = srv.health()["answered"]
        assert cline_runs(guard, root, event) == blocked
        deadline = time.monotonic() + 120
        while _idle_pooled(srv.socket) < 1:  # the pool the first run asked for
            assert time.monotonic() < deadline, srv.logged()
            time.sleep(0.2)
        assert cline_runs(guard, root, event) == blocked
        assert srv.health()["answered"] == before + 2, srv.logged()
        srv.stop()
        assert srv.proc.returncode == 0, srv.logged()
        lines = [json.loads(line) for line in audit.read_text().splitlines()]
    finally:
        srv.stop()
        shutil.rmtree(folder, ignore_errors=True)
    assert [(line["served"], line["decision"]) for line in lines] == [(True, "block")] * 2
    assert lines[1]["warm"] is True, lines  # (the first too, if its container came in time)
