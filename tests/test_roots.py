"""Issue 17 items 3 and 7: the workspace roots every entry point accepts (the rules are
`_sandbox.mounts.check_root`'s, tested in test_mounts.py): `run` (--workspace, the event's
roots, the caller's folder), `exec`, `check`, `serve`'s requests and its start-up, and
the Python API's `HookFactory.create` as well as `run`. No engine: a fake backend that
fails the test if a hook is ever run."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

import sandboxrun._cli as cli
from sandboxrun import ConfigError, FakeBackend, HookFactory, Settings
from sandboxrun._backends.docker import backend as _docker
from sandboxrun._runner.exec import exec_request
from sandboxrun._server import App
from tests.conftest import user_config
from tests.test_cli_unit import (
    _restore_library_logging,  # noqa: F401 - autouse, shared
    feed,
)

HOOK = "#!/bin/sh\necho '{\"cancel\": false}'\n"


def never(request: object) -> object:
    raise AssertionError(f"a hook ran: {request}")


@pytest.fixture
def secrets(home: Path) -> Path:
    """~/.ssh with a key, and a Cline hook in it, as an attacker would wish it read."""
    ssh = home / ".ssh"
    (ssh / ".clinerules" / "hooks").mkdir(parents=True)
    (ssh / "id_rsa").write_text("PRIVATE KEY\n")
    (ssh / ".clinerules" / "hooks" / "PreToolUse").write_text(HOOK)
    (ssh / ".clinerules" / "hooks" / "PreToolUse").chmod(0o755)
    return ssh


def test_the_api_create_checks_roots_as_run_does(home: Path, secrets: Path, tmp_path: Path) -> None:
    """Item 7: `HookFactory.create()` refuses what `run()` refuses, with the same line:
    a dot-folder of the home, a system folder, a folder outside allowed_roots."""
    (tmp_path / "tenants").mkdir()
    cases = [(Settings.load(), str(secrets)), (Settings.load(), "/etc"),
             (Settings.load(allowed_roots=(str(tmp_path / "tenants"),)), str(tmp_path))]  # fmt: skip
    for settings, root in cases:
        factory = HookFactory(settings, FakeBackend(never), cwd=str(tmp_path))
        with pytest.raises(ConfigError) as by_run:
            factory.run("PreToolUse", {"workspaceRoots": [root]})
        with pytest.raises(ConfigError) as by_create:
            factory.create("PreToolUse", [root])
        assert str(by_create.value) == str(by_run.value)
        assert "refused" in str(by_create.value)


def test_the_api_create_reads_relative_roots_from_its_folder(home: Path, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    factory = HookFactory(Settings.load(), FakeBackend(never), cwd=str(tmp_path))
    assert factory.create("PreToolUse", ["ws"]).specs == []
    with pytest.raises(ConfigError, match="does not exist"):
        factory.create("PreToolUse", ["missing"])


@pytest.mark.parametrize("how", ["--workspace", "event", "cwd"])
def test_run_refuses_a_dot_folder_however_named(
    home: Path, secrets: Path, how: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`run`: the root from --workspace, the event or the current folder: exit 2, one
    line naming the folder, and no hook run."""
    monkeypatch.setattr(_docker, "DockerBackend", lambda s, warm=False: FakeBackend(never))
    args = ["run", "PreToolUse", "--no-serve"]
    event: dict[str, object] = {}
    if how == "--workspace":
        args += ["--workspace", str(secrets)]
    elif how == "event":
        event = {"workspaceRoots": [str(secrets)]}
    else:
        monkeypatch.chdir(secrets)
    feed(monkeypatch, json.dumps(event))
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "refused: it is in ~/.ssh, a dot-folder of your home" in err
    assert len(err.splitlines()) == 1


def test_claude_events_cwd_in_a_dot_folder_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    aws = home / ".aws"
    aws.mkdir()
    feed(monkeypatch, json.dumps({"hook_event_name": "PreToolUse", "cwd": str(aws)}))
    assert cli.main(["run", "PreToolUse", "--agent", "claude", "--no-serve"]) == 2
    assert "~/.aws, a dot-folder" in capsys.readouterr().err


def test_exec_refuses_a_dot_folder_and_honours_allowed_roots(home: Path, tmp_path: Path) -> None:
    """`exec`: the caller's folder (or --workspace) in ~/.config is refused; listed in
    allowed_roots it is accepted; allowed_roots elsewhere confines. (Claude's: a Cline
    hook's workspace is only its event's workspaceRoots, never the caller's folder.)"""
    proj = home / ".config" / "proj"
    proj.mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"~/\.config, a dot-folder"):
        exec_request(Settings.load(agent="claude"), ["true"], b"", None, {}, cwd=str(proj))
    with pytest.raises(ConfigError, match=r"~/\.config, a dot-folder"):
        exec_request(Settings.load(agent="claude"), ["true"], b"", str(proj), {}, cwd=str(tmp_path))
    mine = Settings.load(agent="claude", allowed_roots=(str(home / ".config"),))
    assert exec_request(mine, ["true"], b"", None, {}, cwd=str(proj)).mounts[0] == str(proj)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ConfigError, match="not below allowed_roots"):
        exec_request(mine, ["true"], b"", None, {}, cwd=str(tmp_path / "elsewhere"))


def test_check_refuses_a_dot_folder(
    home: Path, secrets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text('{"hookName": "PreToolUse"}\n')
    assert cli.main(["check", "--events", str(events), "--workspace", str(secrets)]) == 2
    assert "~/.ssh, a dot-folder" in capsys.readouterr().err


def test_a_serve_request_naming_a_dot_folder_or_a_state_is_refused(
    home: Path, secrets: Path, tmp_path: Path
) -> None:
    """`serve` answers with `run`'s rules: a request naming ~/.ssh or a hook-state folder
    (here under a state_dir outside the home's dot-folders) is refused, no hook run."""
    state = tmp_path / "states" / ("a" * 32)
    state.mkdir(parents=True)
    (tmp_path / "ws").mkdir()
    user_config(home, f'state_dir = "{tmp_path / "states"}"\n')
    app = App(lambda settings: FakeBackend(never))
    for root in (secrets, state):
        event = base64.b64encode(json.dumps({"workspaceRoots": [str(root)]}).encode()).decode()
        request = {"args": ["PreToolUse"], "cwd": str(tmp_path / "ws"), "stdin": event,
                   "env": {}, "verbose": 0}  # fmt: skip
        reply = app.answer("run", request)
        assert reply.exit_code == 2 and b"refused" in reply.stderr, reply
        assert reply.stdout == b""


def test_serve_listen_needs_allowed_roots(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`serve --listen` with a token but no allowed_roots does not start: one line
    naming the setting and the config file."""
    token = tmp_path / "token"
    token.write_text("correct-horse-battery-staple\n")
    token.chmod(0o600)
    config = tmp_path / "config.toml"
    config.write_text(f'serve_socket = "{tmp_path / "run" / "s.sock"}"\n')
    argv = [
        "serve",
        "--config",
        str(config),
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        str(token),
        "--idle-exit",
        "1",
    ]  # fmt: skip (started, it would stop by itself)
    assert cli.main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "serve --listen needs allowed_roots in" in line and str(config) in line
    assert not (tmp_path / "run" / "s.sock").exists()
