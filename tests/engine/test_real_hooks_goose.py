"""Goose hooks from Goose's own documentation (block/goose, Apache-2.0; provenance in
tests/real_hooks/goose/PROVENANCE.md), as project plugins (`.agents/plugins/<p>/`), each
run as Goose runs it on the host (`${PLUGIN_ROOT}` replaced, `PLUGIN_ROOT` set, `sh -c`)
and through `sandboxrun run --agent goose`, Goose's reading of both compared (`classify`,
block/goose `crates/goose/src/hooks/mod.rs@0825b570`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.goose.dialect import classify

from .conftest import cli

PLUGINS = Path(__file__).resolve().parents[1] / "real_hooks" / "goose" / "block__goose"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(sandboxrun's account home, the host's $HOME for bare runs, a project carrying the
    documentation's two plugins)."""
    home, host, ws = tmp_path / "home", tmp_path / "host-home", tmp_path / "ws"
    home.mkdir()
    host.mkdir()
    shutil.copytree(PLUGINS, ws)
    return home, host, ws


def on_host(ws: Path, host: Path, plugin: str, event: dict[str, Any]) -> tuple[str, str]:
    """The plugin's one hook as Goose starts it, read as Goose reads it."""
    root = ws / ".agents" / "plugins" / plugin
    config = json.loads((root / "hooks" / "hooks.json").read_text())
    [[entry]] = [group["hooks"] for groups in config["hooks"].values() for group in groups]
    command = entry["command"].replace("${PLUGIN_ROOT}", str(root))
    env = {**os.environ, "PLUGIN_ROOT": str(root), "HOME": str(host)}
    done = subprocess.run(["sh", "-c", command], input=json.dumps(event).encode(),
                          capture_output=True, cwd=ws, env=env, timeout=120)  # fmt: skip
    return classify(done.returncode, done.stdout, done.stderr)


def boxed(home: Path, ws: Path, hook_event: str, event: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        cli("run", hook_event, "--agent", "goose", "--workspace", str(ws), home=home),
        input=json.dumps(event), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize(("command", "blocked"), [("sudo rm -rf /", True), ("ls", False)])
def test_block_sudo_decides_the_same_sandboxed(
    engine: DockerBackend, setup: tuple[Path, Path, Path], command: str, blocked: bool
) -> None:
    """The docs' "Block a Dangerous Command" (`scripts/block-sudo.sh`, jq): a `sudo`
    command is denied with `{"decision":"block"}` on stdout; anything else gets silence
    (allow). Sandboxed, the project plugin's block is the same answer; its silence is
    no decision, which Goose reads as allow."""
    home, host, ws = setup
    event = {"event": "PreToolUse", "session_id": "s1", "matcher_context": "developer__shell",
             "tool_name": "developer__shell", "tool_input": {"command": command},
             "working_dir": str(ws)}  # fmt: skip
    verdict, reason = on_host(ws, host, "block-sudo", event)
    assert verdict == ("block" if blocked else "allow")
    answer = boxed(home, ws, "PreToolUse", event)
    assert (answer["blocked"], answer["decision"]) == (blocked, verdict)
    if blocked:
        assert answer["reason"] == reason == "sudo is not allowed in this session"
    [report] = answer["hooks"]
    assert report["status"] == "completed"


def test_session_logger_cannot_write_the_users_home(
    engine: DockerBackend, setup: tuple[Path, Path, Path]
) -> None:
    """Needs what the sandbox withholds: the docs' session-logger appends a line to
    `~/goose-session-log.md`. On the host it does; sandboxed `$HOME` is the hook's own
    throwaway folder, so the line is written there and lost: the user's home is never
    touched. SessionEnd decides nothing either way."""
    home, host, ws = setup
    event = {"event": "SessionEnd", "session_id": "s1", "working_dir": str(ws)}
    assert on_host(ws, host, "session-logger", event)[0] == "allow"
    assert "session s1 ended" in (host / "goose-session-log.md").read_text()
    answer = boxed(home, ws, "SessionEnd", event)
    assert answer["blocked"] is False
    [report] = answer["hooks"]
    assert (report["status"], report["exitCode"]) == ("completed", 0)
    assert not (home / "goose-session-log.md").exists()
