"""`exec --agent goose` in the real engine, as Goose starts an installed wrapper: the
plugin's `${PLUGIN_ROOT}` replaced in the command text (install's wrapper leaves none
for Goose to replace), `PLUGIN_ROOT` in the environment, `sh -c`. The same guard run on
the host and sandboxed is read the same by Goose's rules (`classify`,
block/goose `crates/goose/src/hooks/mod.rs@0825b570`). The guard is this file's: the
public Goose hooks found (Goose's own documentation) are in test_real_hooks_goose.py."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.goose.dialect import classify
from tests.fake_home import command as as_account

from .conftest import cli

GUARD = """#!/bin/sh
# Goose's protocol: read the event, deny a destructive shell command with exit 2
payload=$(cat)
case "$payload" in
  *'rm -rf'*) echo "refused by $(basename "$PLUGIN_ROOT")" >&2; exit 2 ;;
esac
[ -f "$PLUGIN_ROOT/hooks/hooks.json" ] || { echo "no plugin root" >&2; exit 1; }
exit 0
"""


@pytest.mark.parametrize("command", ["rm -rf /", "ls"])
def test_an_installed_plugin_hook_decides_as_on_the_host(
    engine: DockerBackend, tmp_path: Path, command: str
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    root = home / ".agents" / "plugins" / "my guard"  # a space: quoted, as a plugin does
    (root / "hooks").mkdir(parents=True)
    (root / "scripts").mkdir()
    (root / "scripts" / "guard.sh").write_text(GUARD)
    (root / "scripts" / "guard.sh").chmod(0o755)
    hooks = {"hooks": {"PreToolUse": [{"matcher": "shell", "hooks": [
        {"type": "command", "command": '"${PLUGIN_ROOT}/scripts/guard.sh"', "on_failure": "block"}
    ]}]}}  # fmt: skip
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    done = subprocess.run(as_account(home, cli("install", "--agent", "goose", "--user")),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    wrapper = json.loads((root / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"]
    installed = wrapper[0]["hooks"][0]["command"]
    assert "${PLUGIN_ROOT}" not in installed  # nothing for Goose to paste a root into
    original = shlex.split(installed)[-1]  # what sh hands sandboxrun
    event = {"event": "PreToolUse", "session_id": "s", "matcher_context": "developer__shell",
             "tool_name": "developer__shell", "tool_input": {"command": command},
             "working_dir": str(ws)}  # fmt: skip
    stdin = json.dumps(event).encode()
    env = {**os.environ, "PLUGIN_ROOT": str(root)}
    on_host = subprocess.run(["sh", "-c", original.replace("${PLUGIN_ROOT}", str(root))],
                             input=stdin, capture_output=True, env=env, cwd=ws)  # fmt: skip
    sandboxed = subprocess.run(
        as_account(home, cli("exec", "--agent", "goose", "--", original)),
        input=stdin, capture_output=True, env=env, cwd=ws, timeout=240,
    )  # fmt: skip
    host_says = classify(on_host.returncode, on_host.stdout, on_host.stderr)
    sandbox_says = classify(sandboxed.returncode, sandboxed.stdout, sandboxed.stderr)
    assert host_says[0] == sandbox_says[0] == ("block" if "rm" in command else "allow"), (
        on_host,
        sandboxed,
    )
    assert sandboxed.stdout == on_host.stdout == b"", sandboxed.stderr
    if "rm" in command:
        assert sandbox_says[1].startswith("refused by my guard")
