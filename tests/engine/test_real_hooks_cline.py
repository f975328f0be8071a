"""Public hooks of Cline's SDK/CLI (tests/real_hooks/cline/PROVENANCE.md), each run as the
SDK runs it on the host (its `inferHookCommand`, the SDK's payload on stdin, in the
workspace) and through `sandboxrun run EVENT --agent cline` with the SDK's event name, the
SDK's reading of both compared (`_dialects.cline_sdk` reads the host run, as the SDK would).

Payloads as sdk/packages/core/src/hooks/hook-file-hooks.ts@21cb8d25 builds them
(createPayloadBase, runToolCallStart, runToolCallEnd, runAgentStart)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandboxrun import DockerBackend
from sandboxrun._dialects.cline import CLINE, sdk_argv
from sandboxrun._types import ExecResult, HookSpec

from .conftest import cli

HOOKS = Path(__file__).resolve().parents[1] / "real_hooks" / "cline" / "cline__cline"
STAMP = "2026-08-22T20:03:18.123Z"


def payload(event: str, ws: Path, **fields: Any) -> dict[str, Any]:
    base = {"clineVersion": "", "timestamp": STAMP, "taskId": "conv-1",
            "sessionContext": {"rootSessionId": "conv-1"}, "workspaceRoots": [str(ws)],
            "userId": "dev", "agent_id": "agent-1", "parent_agent_id": None}  # fmt: skip
    return {**base, "hookName": event, **fields}


def tool_call(ws: Path, tool: str, **tool_input: str) -> dict[str, Any]:
    return payload("tool_call", ws, iteration=1,
                   tool_call={"id": "call-1", "name": tool, "input": tool_input},
                   preToolUse={"toolName": tool, "parameters": tool_input})  # fmt: skip


def tool_result(ws: Path) -> dict[str, Any]:
    record = {
        "id": "call-1",
        "name": "run_commands",
        "input": {"command": "ls"},
        "output": "README.md",
        "durationMs": 12,
        "startedAt": STAMP,
        "endedAt": STAMP,
    }
    post = {"toolName": "run_commands", "parameters": {"command": "ls"}, "result": "README.md",
            "success": True, "executionTimeMs": 12}  # fmt: skip
    return payload("tool_result", ws, iteration=1, tool_result=record, postToolUse=post)


CASES = [
    ("PreToolUse_BlockDestructive.sh", "PreToolUse.sh",
     lambda ws: tool_call(ws, "run_commands", command="rm -rf build"), True),
    ("PreToolUse_BlockDestructive.sh", "PreToolUse.sh",
     lambda ws: tool_call(ws, "run_commands", command="git push --force origin main"), True),
    ("PreToolUse_BlockDestructive.sh", "PreToolUse.sh",
     lambda ws: tool_call(ws, "run_commands", command="ls"), False),
    ("PreToolUse_RequireReview.sh", "PreToolUse.sh",
     lambda ws: tool_call(ws, "editor", filePath="package.json"), False),
    ("PreToolUse_RequireReview.sh", "PreToolUse.sh",
     lambda ws: tool_call(ws, "editor", filePath="README.md"), False),
    ("PreToolUse.py", "PreToolUse.py", lambda ws: tool_call(ws, "read_files", filePath="a"), False),
    ("PostToolUse.sh", "PostToolUse.sh", tool_result, False),
    ("TaskStart.sh", "TaskStart.sh",
     lambda ws: payload("agent_start", ws, taskStart={"taskMetadata": {}}), False),
]  # fmt: skip


def on_host(path: Path, event: dict[str, Any], ws: Path) -> dict[str, Any]:
    """The hook as the SDK starts it, read as the SDK reads it."""
    done = subprocess.run([*sdk_argv(str(path))], input=json.dumps(event).encode(),
                          capture_output=True, cwd=ws, timeout=120)  # fmt: skip
    spec = HookSpec(path.stem, str(path), "global", ("x",), str(ws), ())
    outcome = CLINE.interpret(spec, ExecResult(done.returncode, done.stdout, done.stderr, 1), 30)
    assert outcome.status == "completed", (outcome, done.stderr)
    return CLINE.combine([outcome], False)


@pytest.mark.parametrize(("source", "name", "make", "cancels"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])  # fmt: skip
def test_public_sdk_hook_decides_the_same_sandboxed(
    engine: DockerBackend, tmp_path: Path, source: str, name: str, make: Any, cancels: bool
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".cline/hooks").mkdir(parents=True)
    ws.mkdir()
    hook = home / ".cline/hooks" / name
    shutil.copyfile(HOOKS / source, hook)  # no exec bit: the SDK needs none
    event = make(ws)
    host = on_host(hook, event, ws)
    done = subprocess.run(
        cli("run", event["hookName"], "--agent", "cline", home=home),
        input=json.dumps(event), capture_output=True, text=True, cwd=ws, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    boxed = json.loads(done.stdout)
    assert [h["status"] for h in boxed["hooks"]] == ["completed"], boxed
    assert {k: v for k, v in boxed.items() if k != "hooks"} == host
    assert host["cancel"] is cancels
    if "RequireReview" in source and "package.json" in json.dumps(event):
        assert host["contextModification"] == "This will modify a critical file: package.json"
