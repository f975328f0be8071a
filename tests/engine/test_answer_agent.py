"""`sandboxrun run --agent cursor --answer agent` against the real engine (issue 29, item
5): a Cursor guard's `{"permission": "deny"}` comes out as Cursor's deny (it came out as
`{}`, an allow), and its allow as no deny; read back as Cursor reads a hook."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sandboxrun._dialects.cursor import CURSOR
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli

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
    # The report says the same (through `sandboxrun serve` too, which leaves the agent's
    # own answer to the command itself).
    report = subprocess.run(run, input=json.dumps(event).encode(), capture_output=True,
                            timeout=240)  # fmt: skip
    assert json.loads(report.stdout)["blocked"] is blocked, report.stderr
    assert cursor_blocks(done) is blocked, (done.returncode, done.stdout, done.stderr)
    assert done.returncode == 0
    if blocked:
        assert json.loads(done.stdout) == {"permission": "deny", "user_message": "no rm -rf",
                                           "agent_message": "no rm -rf"}  # fmt: skip
