"""Issue 29 item 2 without an engine: a tenant's request (serve's TCP listener,
`Caller.tenant`) is given nothing of the server's account, only what lies below the
allowed_roots (`_sandbox.mounts.for_tenant`), on both pipelines and through the Python API;
read off the requests a recording backend receives. tests/engine/test_tenant.py runs
the issue's reproduction through a real `serve --listen`."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from sandboxrun import ExecResult, FakeBackend, HookFactory, Settings
from sandboxrun._dialects.claude.settings import project_root
from sandboxrun._runner.exec import exec_request
from sandboxrun._sandbox import mounts as _mounts
from sandboxrun._server import App
from tests.conftest import user_config
from tests.test_claude_plugins import install

HOOK = "#!/bin/sh\nexit 0\n"


def ok(request: object) -> ExecResult:
    return ExecResult(0, b"", b"", 1)


@pytest.fixture
def ws(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tenant's project (`.claude`) below a server's allowed_roots (`platform/tenants`),
    itself inside the platform's own checkout (`platform/.git`), and the server's own
    hook folders in the fake home."""
    tenants = tmp_path / "platform" / "tenants"
    (tenants / "t1" / ".claude").mkdir(parents=True)
    (tmp_path / "platform" / ".git").mkdir()
    (tmp_path / "platform" / "platform.env").write_text("PLATFORM\n")
    user_config(home, f'allowed_roots = ["{tenants}"]\nhook_paths = ["{tmp_path / "tools"}"]\n')
    monkeypatch.setattr(_mounts, "_server", _mounts._Server((), (os.path.realpath(tenants),)))
    for agent in (".claude", ".cursor"):
        (home / agent / "hooks" / "notify").mkdir(parents=True)
        (home / agent / "hooks" / "notify" / "guard.sh").write_text(HOOK)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.sh").write_text(HOOK)
    return tenants / "t1"


@pytest.mark.parametrize("named", ["~/.claude/hooks/notify/guard.sh", "{home}/.claude/hooks/"
                                   "notify/guard.sh", "{tmp}/tools/t.sh"])  # fmt: skip
def test_a_tenants_exec_mounts_no_file_its_command_names(
    home: Path, ws: Path, tmp_path: Path, named: str
) -> None:
    """The agent's hook folder and `hook_paths` are trusted places for the server's own
    user (the control), never for a tenant: only its workspace is mounted."""
    line = f"sh {named.format(home=home, tmp=tmp_path)}"
    settings = Settings.load(agent="claude")
    mine = exec_request(settings, [line], b"", None, {}, cwd=str(ws))
    assert len(mine.mounts) == 2, mine.mounts
    theirs = exec_request(settings, [line], b"", None, {}, cwd=str(ws), tenant=True)
    assert theirs.mounts == (str(ws),)


def test_a_tenants_plugin_roots_mount_nothing(home: Path, ws: Path) -> None:
    """CLAUDE_PLUGIN_ROOT naming an installed plugin, Goose's PLUGIN_ROOT naming a user
    plugin (over TCP the environment never carries them: this is the API's `tenant`)."""
    root = install(home)
    goose = home / ".agents" / "plugins" / "g"
    goose.mkdir(parents=True)
    for agent, var, value in (("claude", "CLAUDE_PLUGIN_ROOT", root), ("goose", "PLUGIN_ROOT",
                                                                       goose)):  # fmt: skip
        settings = Settings.load(agent=agent)
        env = {var: str(value)}
        mine = exec_request(settings, ["true"], b"", None, env, cwd=str(ws))
        assert str(value) in mine.mounts, (agent, mine.mounts)
        theirs = exec_request(settings, ["true"], b"", None, env, cwd=str(ws), tenant=True)
        assert theirs.mounts == (str(ws),), agent


def test_a_tenants_cursor_exec_in_the_servers_cursor_folder(home: Path, ws: Path) -> None:
    """Cursor starts a user hook in ~/.cursor with its hooks folder mounted: a tenant
    naming that folder as its own gets its workspace only."""
    event = json.dumps({"workspace_roots": [str(ws)]}).encode()
    settings = Settings.load(agent="cursor")
    cwd = str(home / ".cursor")
    mine = exec_request(settings, ["true"], event, None, {}, cwd=cwd)
    assert str(home / ".cursor" / "hooks") in mine.mounts
    theirs = exec_request(settings, ["true"], event, None, {}, cwd=cwd, tenant=True)
    assert theirs.mounts == (str(ws),)


def _request(command: str, args: list[str], cwd: Path, event: object) -> dict[str, object]:
    stdin = base64.b64encode(json.dumps(event).encode()).decode()
    return {"args": args, "cwd": str(cwd), "stdin": stdin, "env": {}, "verbose": 0}


def test_serve_over_tcp_gives_a_tenant_its_workspace_only(home: Path, ws: Path) -> None:
    """Through serve's own answer (`tcp=True`, as its TCP listener calls it): exec's
    command naming the server's hook folder, and run's hooks: a Cline repository hook
    whose folder is a symlink to a folder outside the allowed_roots gets nothing of it,
    while the server's own (global) hook keeps its folder."""
    backend = FakeBackend(ok)
    app = App(lambda settings: backend)
    line = f"sh {home}/.claude/hooks/notify/guard.sh"
    reply = app.answer("exec", _request("exec", ["--", line], ws, {}), tcp=True)
    assert reply.exit_code == 0, reply
    assert backend.requests[-1].mounts == (str(ws),)
    shared = ws.parent.parent / "shared"  # the platform's, outside the allowed_roots
    shared.mkdir()
    (shared / "PreToolUse").write_text(HOOK)
    (ws / ".clinerules").mkdir()
    (ws / ".clinerules" / "hooks").symlink_to(shared)
    own = home / "Documents" / "Cline" / "Hooks"
    own.mkdir(parents=True)
    (own / "PreToolUse").write_text(HOOK)
    for hook in (shared / "PreToolUse", own / "PreToolUse"):
        hook.chmod(0o755)
    backend.requests.clear()
    event = {"hookName": "PreToolUse", "workspaceRoots": [str(ws)]}
    reply = app.answer("run", _request("run", ["PreToolUse"], ws, event), tcp=True)
    assert reply.exit_code == 0, reply
    mounts = {r.argv[-1]: r.mounts for r in backend.requests}
    assert mounts == {str(own / "PreToolUse"): (str(ws), str(own)),
                      str(ws / ".clinerules" / "hooks" / "PreToolUse"): (str(ws),)}, mounts  # fmt: skip


def test_the_api_factory_for_a_tenant(home: Path, ws: Path) -> None:
    """`HookFactory(tenant=True)`: a Claude session in a folder without a project marker
    below the allowed_roots has that folder as its project, never the platform's checkout
    above it; the user's own hook keeps its folder."""
    guard = {"type": "command", "command": f"sh {home}/.claude/hooks/notify/guard.sh"}
    table = {"hooks": {"PreToolUse": [{"hooks": [guard]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(table))
    bare = ws.parent / "t2"
    bare.mkdir()
    backend = FakeBackend(ok)
    factory = HookFactory(Settings.load(agent="claude"), backend, cwd=str(bare), tenant=True)
    factory.run("PreToolUse", {"hook_event_name": "PreToolUse", "cwd": str(bare)})
    [request] = backend.requests
    assert request.mounts == (str(bare), str(home / ".claude" / "hooks"))
    assert request.env["CLAUDE_PROJECT_DIR"] == str(bare)


def test_the_project_walk_stops_at_the_servers_allowed_roots(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Serving, the walk up never leaves the allowed_roots; outside `serve` it finds the
    checkout above (the user's own machine: unchanged)."""
    bare = ws.parent / "t2"
    bare.mkdir()
    assert project_root(str(bare), str(home), ".claude") == str(bare)
    monkeypatch.setattr(_mounts, "_server", _mounts._Server())
    assert project_root(str(bare), str(home), ".claude") == str(ws.parent.parent)


def test_a_tenants_repository_hooks_get_nothing_outside_whatever_a_dialect_found(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's own check, whatever discovery made of the tenant's paths: with the
    walk's bound taken away, Codex finds the platform's checkout as the project of a
    tenant's folder; its repository hook is still given nothing of it (here nothing at
    all: the tenant's root lay inside it)."""
    monkeypatch.setattr("sandboxrun._dialects.claude.settings.confined", lambda path: True)
    bare = ws.parent / "t2"
    (bare / ".codex").mkdir(parents=True)
    repo = {"type": "command", "command": "true"}
    (bare / ".codex" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [repo]}]}})
    )
    backend = FakeBackend(ok)
    factory = HookFactory(Settings.load(agent="codex"), backend, cwd=str(bare), tenant=True)
    factory.run("PreToolUse", {"hook_event_name": "PreToolUse", "cwd": str(bare)})
    [request] = backend.requests
    assert request.mounts == ()
