"""Issue 29 item 2 on the real engine: a tenant of `serve --listen` (a TCP request) is
given nothing of the server's account, only what lies below the server's allowed_roots
(and the image), on both pipelines; the server's own hooks still run for it.

The scene, under a fake account home (tests/fake_home.py: the real home is never read):
the platform's guard in `~/.claude/hooks/notify` with its secret `notify.env` beside it
(and the same in `~/.cursor/hooks`), and the tenants' folder `platform/tenants` inside a
git checkout of the platform's own (`platform/.git`, `platform/platform.env`), so that a
project found by walking up from a tenant's folder would leave the allowed root.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend

from .test_roots import TOKEN, _read, _Server, _tenant_post, _world_readable, folder
from .test_serve import _free_port, post

__all__ = ["folder"]  # the fixture, shared with test_roots

SECRET = "SLACK-WEBHOOK-sandboxrun-test"
PLATFORM = "PLATFORM-SECRET-sandboxrun-test"
# The platform's own guard: reads its config beside it (its folder must be mounted) and
# blocks, saying so without the secret.
GUARD = """#!/bin/sh
. "$(dirname "$0")/notify.env" && [ -n "$WEBHOOK" ] && loaded=yes
echo "platform guard blocked (config loaded: ${loaded:-no}; project=${CLAUDE_PROJECT_DIR-})" >&2
exit 2
"""


def _scene(folder: Path) -> tuple[Path, Path, Path]:
    """(fake home, the platform's checkout, the tenant's workspace)."""
    home = folder / "home"
    for agent, config in ((".claude", "settings.json"), (".codex", "hooks.json"),
                          (".cursor", None)):  # fmt: skip
        notify = home / agent / "hooks" / "notify"
        notify.mkdir(parents=True)
        (notify / "notify.env").write_text(f"WEBHOOK={SECRET}\n")
        (notify / "guard.sh").write_text(GUARD)
        guard = {"type": "command", "command": f"sh {notify}/guard.sh"}
        if config:
            table = {"hooks": {"PreToolUse": [{"hooks": [guard]}]}}
            (home / agent / config).write_text(json.dumps(table))
    platform = folder / "platform"
    (platform / ".git").mkdir(parents=True)
    (platform / "platform.env").write_text(PLATFORM + "\n")
    ws = platform / "tenants" / "t1"
    ws.mkdir(parents=True)
    _world_readable(folder)
    return home, platform, ws


def _server(folder: Path, home: Path, platform: Path) -> tuple[_Server, int]:
    (folder / "token").write_text(TOKEN + "\n")
    (folder / "token").chmod(0o600)
    port = _free_port()
    config = f'allowed_roots = ["{platform / "tenants"}"]\n'
    srv = _Server(folder, home, config, "--listen", f"127.0.0.1:{port}", "--token-file",
                  str(folder / "token"))  # fmt: skip
    return srv, port


def _body(args: list[str], cwd: Path, event: dict[str, Any] | None = None) -> dict[str, Any]:
    stdin = base64.b64encode(json.dumps(event or {}).encode()).decode()
    return {"args": args, "cwd": str(cwd), "stdin": stdin, "env": {}}


def _tcp_exec(port: int, body: dict[str, Any]) -> tuple[int, str, str]:
    status, reply = _tenant_post(port, "/v1/exec", body)
    assert status == 200, reply
    return _read(reply)


def test_a_tenants_exec_reads_nothing_of_the_servers_hook_folders(
    engine: DockerBackend, folder: Path
) -> None:
    """The issue's reproduction: a tenant's `exec -- "cat ~/.claude/hooks/notify/
    notify.env"` (with and without --untrusted, by `~` and by absolute path), and a
    Cursor exec started in the server's ~/.cursor (where Cursor starts user hooks) read
    no secret; the server's own user, on the unix socket, still gets its own files (the
    control: the files are there to be read)."""
    home, platform, ws = _scene(folder)
    (ws / ".claude").mkdir()  # the tenant's project
    srv, port = _server(folder, home, platform)
    try:
        absolute = f"cat {home}/.claude/hooks/notify/notify.env"
        for args in (["--", "cat ~/.claude/hooks/notify/notify.env"],
                     ["--untrusted", "--", "cat ~/.claude/hooks/notify/notify.env"],
                     ["--agent", "claude", "--", absolute],
                     ["--agent", "claude", "--untrusted", "--", absolute]):  # fmt: skip
            code, out, err = _tcp_exec(port, _body(["--agent", "claude", *args], ws))
            assert SECRET not in out + err, (args, out, err)
            assert code != 0 and "No such file" in err, (args, code, out, err)
        event = {"hook_event_name": "beforeShellExecution", "workspace_roots": [str(ws)]}
        # Cursor starts a user hook in ~/.cursor, with its hooks folder mounted
        cursor = _body(["--agent", "cursor", "--", "cat hooks/notify/notify.env"],
                       home / ".cursor", event)  # fmt: skip
        code, out, err = _tcp_exec(port, cursor)
        assert SECRET not in out + err, (out, err)
        # A folder of the tenant's without a project marker: its project is never the
        # platform's checkout above the allowed root (the walk up stops there).
        (platform / "tenants" / "t2").mkdir()
        peek = ["--agent", "claude", "--", 'cat "$CLAUDE_PROJECT_DIR/platform.env"']
        code, out, err = _tcp_exec(port, _body(peek, platform / "tenants" / "t2"))
        assert PLATFORM not in out + err, (out, err)
        assert code == 1 and "No such file" in err, (code, out, err)
        # The control: the server's own user may read its own hook folder.
        status, reply = post(srv.socket, "POST", "/v1/exec",
                             _body(["--agent", "claude", "--", absolute], ws))  # fmt: skip
        assert status == 200, reply
        code, out, err = _read(reply)
        assert (code, out) == (0, f"WEBHOOK={SECRET}\n"), err
    finally:
        srv.stop()


# A tenant's repository hook (Codex's .codex/hooks.json in its workspace): blocks with
# what it could read of the platform's checkout and the server's hook folder.
SNOOP = ("{ echo tenant-hook-ran; cat %s/platform.env %s/.claude/hooks/notify/notify.env;"
         " } >&2; exit 2")  # fmt: skip


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_tenants_run_gets_no_mount_outside_the_allowed_roots(
    engine: DockerBackend, folder: Path, agent: str
) -> None:
    """`run` for a tenant: its repository's hook runs with its workspace only, never the
    platform's checkout its folder lies in (a project found by walking up to the
    `.git` above the allowed root), and the server's own guard still runs and blocks
    with its folder mounted. An event naming the server's hook folder as its `cwd` or
    its transcript is refused / mounts nothing."""
    home, platform, ws = _scene(folder)
    repo = ".codex" if agent == "codex" else ".claude"
    snoop = SNOOP % (platform, home)
    table = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": snoop}]}]}}
    (ws / repo).mkdir()
    (ws / repo / ("hooks.json" if agent == "codex" else "settings.json")).write_text(
        json.dumps(table)
    )
    if agent == "claude":  # no marker in the workspace: a project found by walking up
        # would be the platform's checkout; the guard says which project it was given
        (ws / repo / "settings.json").unlink()
        (ws / repo).rmdir()
    _world_readable(folder)
    srv, port = _server(folder, home, platform)
    try:
        event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(ws),
                 "tool_input": {"command": "ls"}, "session_id": "s1",
                 "transcript_path": str(home / ".claude" / "hooks" / "notify" / "notify.env")}  # fmt: skip
        status, reply = _tenant_post(port, "/v1/run", _body(["PreToolUse", "--agent", agent],
                                                            ws, event))  # fmt: skip
        assert status == 200, reply
        code, out, err = _read(reply)
        assert SECRET not in out + err and PLATFORM not in out + err, (out, err)
        report = json.loads(out)
        assert report["blocked"] is True, report
        by_source = {h["source"]: h for h in report["hooks"]}
        assert "config loaded: yes" in by_source["user"]["stderr"], report
        if agent == "codex":
            assert "tenant-hook-ran" in by_source["project"]["stderr"], report
        else:
            assert f"project={ws})" in by_source["user"]["stderr"], report
        # The server's hook folder as the event's folder: refused, nothing read.
        inside = dict(event, cwd=str(home / ".claude" / "hooks" / "notify"))
        body = _body(["PreToolUse", "--agent", agent], ws, inside)
        status, reply = _tenant_post(port, "/v1/run", body)
        code, out, err = _read(reply)
        assert SECRET not in out + err and code == 2 and "refused" in err, (out, err)
    finally:
        srv.stop()
