"""The README's demo guard (examples/demo/app/.clinerules/hooks/PreToolUse) run on the host
as Cline runs it, on both Cline's event shapes: the CLI's `tool_call` event (`run_commands`
with a list of commands) and the VS Code extension's `PreToolUse` (`execute_command`)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"
GUARD = DEMO / "app" / ".clinerules" / "hooks" / "PreToolUse"
# What the Cline CLI 3.0.65 (@cline/core 0.0.86) handed a PreToolUse hook file for the
# model's `run_commands` call (recorded; ids shortened).
CLI_EVENT: dict[str, Any] = {
    "clineVersion": "", "timestamp": "2026-11-28T08:43:48.830Z", "taskId": "conv_1",
    "sessionContext": {"rootSessionId": "1_s"}, "workspaceRoots": ["/tmp/ws"],
    "workspaceInfo": {"rootPath": "/tmp/ws", "hint": "ws"}, "userId": "unknown",
    "agent_id": "agent_1", "parent_agent_id": None, "hookName": "tool_call", "iteration": 1,
    "tool_call": {"id": "call_1", "name": "run_commands", "input": {"commands": ["rm -r x"]}},
    "preToolUse": {"toolName": "run_commands", "parameters": {"commands": '["rm -r x"]'}},
}  # fmt: skip

pytestmark = pytest.mark.skipif(not shutil.which("jq"), reason="the guard needs jq")


def cli_event(commands: Any) -> dict[str, Any]:
    """The CLI's event for a `run_commands` call whose input is `commands`."""
    event = copy.deepcopy(CLI_EVENT)
    event["tool_call"]["input"] = commands
    text = commands.get("commands") if isinstance(commands, dict) else commands
    event["preToolUse"]["parameters"]["commands"] = json.dumps(text)
    return event


def extension_event(command: str) -> dict[str, Any]:
    event = json.loads((DEMO / "event.json").read_text())
    event["preToolUse"]["parameters"]["command"] = command
    return event


def guard(event: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(["bash", str(GUARD)], input=json.dumps(event), capture_output=True,
                          text=True, timeout=30, check=True)  # fmt: skip
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def test_the_demo_event_is_blocked() -> None:
    """scripts/demo's event (the extension's shape) is cancelled, its command named."""
    answer = guard(json.loads((DEMO / "event.json").read_text()))
    assert answer == {
        "cancel": True,
        "errorMessage": "Blocked by team policy: `rm -rf ~/projects` deletes recursively.",
    }


@pytest.mark.parametrize(
    "event",
    [
        cli_event({"commands": ["ls", "rm -rf ~/projects"]}),
        cli_event({"commands": "rm -fr ~/projects"}),  # the CLI takes a string too
        cli_event({"commands": [{"command": "rm", "args": ["-rf", "/"]}]}),
        cli_event("rm -rf ~/projects"),
        # the CLI's JSON text alone, without `tool_call`
        {k: v for k, v in cli_event({"commands": ["rm -rf /"]}).items() if k != "tool_call"},
        extension_event("cd /tmp && rm -rf ~/projects"),
    ],
    ids=["cli-list", "cli-string", "cli-args", "cli-bare", "cli-json-text", "extension"],
)
def test_a_recursive_force_delete_is_blocked_in_either_shape(event: dict[str, Any]) -> None:
    answer = guard(event)
    assert answer["cancel"] is True
    assert "deletes recursively" in answer["errorMessage"]


@pytest.mark.parametrize(
    "event",
    [cli_event({"commands": ["ls -la", "rm -r x"]}), extension_event("rm -r build"),
     {**CLI_EVENT, "tool_call": {"id": "c", "name": "read_files", "input": {"paths": ["rm -rf"]}},
      "preToolUse": {"toolName": "read_files", "parameters": {}}}],
    ids=["cli", "extension", "cli-other-tool"],
)  # fmt: skip
def test_anything_else_runs(event: dict[str, Any]) -> None:
    assert guard(event) == {"cancel": False}
