"""Reading a hook event and answering it, for Cline (and Careti) and for Claude Code (and
Qoder): the policy scripts beside this file share it. Standard library only.

A Cline event names itself in `hookName` and is answered with `{"cancel", "errorMessage",
"contextModification"}`; a Claude-family event names itself in `hook_event_name` and a
PreToolUse is denied with `hookSpecificOutput.permissionDecision: "deny"`.

Cline's two engines describe a tool call differently: the CLI (`hookName` `tool_call` /
`tool_result`) in `tool_call` / `tool_result` (`name`, `input`), with its own tools
(`run_commands`, `editor`, `apply_patch`); the VS Code extension in `preToolUse` /
`postToolUse` (`toolName`, `parameters`), with `execute_command`, `write_to_file`...
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

# Tools that run a shell command, and tools that write a file: (path field, content fields).
CLINE_SHELL = {"execute_command", "run_commands"}
CLINE_WRITE = {
    "write_to_file": ("path", ("content",)),
    "replace_in_file": ("path", ("diff",)),
    "editor": ("path", ("new_text",)),
    "apply_patch": ("", ("input",)),  # the patch names its files itself
}
CLAUDE_SHELL = {"Bash"}
CLAUDE_WRITE = {
    "Write": ("file_path", ("content",)),
    "Edit": ("file_path", ("new_string",)),
    "MultiEdit": ("file_path", ("edits",)),
    "NotebookEdit": ("notebook_path", ("new_source",)),
}


@dataclass
class ToolCall:
    tool: str
    command: str = ""  # a shell tool's command
    path: str = ""  # a write tool's file, as the agent gave it
    content: str = ""  # what a write tool writes (every new text joined)


def read_event() -> dict[str, Any]:
    event = json.load(sys.stdin)
    if not isinstance(event, dict):
        raise SystemExit("hook event is not a JSON object")
    return event


def is_claude(event: dict[str, Any]) -> bool:
    return "hook_event_name" in event


def workspace(event: dict[str, Any]) -> str:
    """The project root: Cline's first workspace root, Claude's project dir or cwd."""
    if is_claude(event):
        return os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or os.getcwd()
    roots = event.get("workspaceRoots") or [os.getcwd()]
    return str(roots[0])


def tool_call(event: dict[str, Any]) -> ToolCall:
    if is_claude(event):
        tool, params = event.get("tool_name", ""), event.get("tool_input") or {}
        shell, write = CLAUDE_SHELL, CLAUDE_WRITE
    elif isinstance(event.get("tool_call") or event.get("tool_result"), dict):  # the CLI
        call = event.get("tool_call") or event.get("tool_result")
        tool, params = call.get("name", ""), call.get("input")
        shell, write = CLINE_SHELL, CLINE_WRITE
    else:
        call = event.get("preToolUse") or event.get("postToolUse") or {}
        tool, params = call.get("toolName", ""), call.get("parameters") or {}
        shell, write = CLINE_SHELL, CLINE_WRITE
    if tool in shell:
        return ToolCall(tool, command=_command_line(params))
    if not isinstance(params, dict):
        params = {}
    if tool in write:
        path_field, content_fields = write[tool]
        texts = [_text(params.get(f)) for f in content_fields]
        return ToolCall(tool, path=str(params.get(path_field, "")), content="\n".join(texts))
    return ToolCall(tool)


def _command_line(value: Any) -> str:
    """A shell tool's input as one command line per command: the extension's `command`;
    the CLI's `run_commands` input in every form the CLI takes (a string, a list, or an
    object with `commands`, `command` (with `args`: run without a shell) or `cmd`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_command_line(v) for v in value)
    if not isinstance(value, dict):
        return "" if value is None else json.dumps(value)
    if "commands" in value:
        return _command_line(value["commands"])
    if isinstance(value.get("command"), str) and isinstance(value.get("args"), list):
        return shlex.join([value["command"], *map(str, value["args"])])
    return _command_line(value.get("command", value.get("cmd")))


def _text(value: Any) -> str:
    """A content field as text: MultiEdit's `edits` give their `new_string`s."""
    if isinstance(value, list):
        return "\n".join(str(e.get("new_string", "")) for e in value if isinstance(e, dict))
    return "" if value is None else str(value)


def block(event: dict[str, Any], reason: str) -> NoReturn:
    """Stop the tool call, in the agent's own terms."""
    if is_claude(event):
        name = event.get("hook_event_name")
        if name in ("PreToolUse", "PermissionRequest"):
            decision = {"hookEventName": name, "permissionDecision": "deny",
                        "permissionDecisionReason": reason}  # fmt: skip
            print(json.dumps({"hookSpecificOutput": decision}))
            sys.exit(0)
        print(reason, file=sys.stderr)  # elsewhere exit 2 is Claude's blocking error
        sys.exit(2)
    print(json.dumps({"cancel": True, "errorMessage": reason}))
    sys.exit(0)


def allow(event: dict[str, Any]) -> NoReturn:
    """No objection: Cline reads `cancel: false`; Claude reads no output as no decision."""
    if not is_claude(event):
        print(json.dumps({"cancel": False}))
    sys.exit(0)
