"""`check --transcript FILE`: the hook events of a real session, derived from its record.

Formats (each from the agent's own files; the tests build transcripts in these shapes):

- Claude Code's transcript JSONL (`~/.claude/projects/<project>/<session>.jsonl`; the
  Claude-shaped agents that keep it: claude, qoder, qoder-cn). Each line is an entry
  with `type`, `sessionId`, `cwd`, `uuid` and a `message` in the Messages API shape
  (docs.anthropic.com, "Agent SDK: sessions"; the `transcript_path` hooks receive).
  An `assistant` entry's `tool_use` blocks (`id`, `name`, `input`) give PreToolUse; the
  `user` entry whose `tool_result` block (`tool_use_id`, `content`) answers one gives its
  PostToolUse (with `tool_response`: the entry's `toolUseResult` when present, else the
  block's content); a `user` entry whose content is the user's text (not a tool result,
  not `isMeta`) gives UserPromptSubmit with its `prompt`.
- Codex's rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`; openai/codex
  `codex-rs/protocol/src/protocol.rs` `RolloutLine {timestamp, type, payload}`). The
  `session_meta` payload gives `id` and `cwd`; `turn_context` the `cwd` and `model` of
  each turn; an `event_msg` of type `user_message` gives UserPromptSubmit; a
  `response_item` `function_call` (`name`, `arguments` as a JSON string, `call_id`)
  gives PreToolUse, its `function_call_output` (`call_id`, `output`) PostToolUse. Codex
  names shell calls `Bash` with `tool_input.command` a string in its hook input
  (`codex-rs/hooks/src/events/pre_tool_use.rs` @0082977c: "Shell-like tools pass
  `{command}`"), so `shell`/`shell_command`/`exec_command`/`local_shell` calls become
  Bash; `custom_tool_call` `apply_patch` becomes `apply_patch` with the patch as
  `command` (the patch tool's hook input beyond its name is unconfirmed).

The recorded paths are the recording machine's: the session's `cwd` is mapped to the
workspace under test, and each `--workspace-map OLD=NEW` maps a prefix, in every string
of the event (a `file_path`, a `cd` in a command). An entry that cannot be read becomes
a line with its `problem` (the gate fails on it), never a silent skip.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .._errors import ConfigError
from .events import EventLine

SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "local_shell",
                         "container.exec"})  # fmt: skip


def read_transcript(
    path: str, agent: str, workspace: str, maps: Sequence[str] = ()
) -> list[EventLine]:
    """The events of the session recorded in `path`, in order, as `check` replays them."""
    from .._dialects.registry import DIALECTS

    derive = READERS.get(DIALECTS[agent].transcript_format or "")
    if derive is None:  # (the others' names: every dialect imported, on this error only)
        known = ", ".join(sorted(a for a, d in DIALECTS.items() if d.transcript_format))
        raise ConfigError(f"--transcript: no transcript format known for {agent} (one of {known})")
    entries = list(_entries(path))
    pairs = [_pair(m) for m in maps]
    events = list(derive(entries))
    recorded = next((e["cwd"] for _, e in events if isinstance(e.get("cwd"), str)), None)
    if recorded:  # the session's folder is the workspace under test; longest prefix first
        pairs.append((recorded, workspace))
    pairs.sort(key=lambda p: -len(p[0]))
    lines = [EventLine(n, e["hook_event_name"], _mapped(e, pairs)) for n, e in events]
    if not lines:
        raise ConfigError(f"--transcript {path}: no tool call or prompt found in it")
    return lines


def _entries(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read transcript {path}: {exc.strerror}") from None
    for number, text in enumerate(raw.split(b"\n"), start=1):
        if not text.strip():
            continue
        try:
            entry = json.loads(text)
        except (ValueError, RecursionError):
            continue  # a transcript line being written, or not ours: not an event
        if isinstance(entry, dict):
            yield number, entry


def _claude(entries: Sequence[tuple[int, dict[str, Any]]]) -> Iterator[tuple[int, dict[str, Any]]]:
    tools: dict[str, tuple[str | None, Any]] = {}  # tool_use id -> (name, input)
    for number, entry in entries:
        message = entry.get("message")
        if not isinstance(message, dict) or entry.get("isMeta") is True:
            continue
        base = {"session_id": entry.get("sessionId"), "cwd": entry.get("cwd"),
                "permission_mode": entry.get("permissionMode") or "default"}  # fmt: skip
        content = message.get("content")
        if entry.get("type") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    use_id, name = block.get("id"), block.get("name")
                    tools[str(use_id)] = (str(name), block.get("input"))
                    given = block.get("input")
                    yield number, {**base, "hook_event_name": "PreToolUse", "tool_name": name,
                                   "tool_input": given, "tool_use_id": use_id}  # fmt: skip
        elif entry.get("type") == "user":
            if isinstance(content, str):
                yield number, {**base, "hook_event_name": "UserPromptSubmit", "prompt": content}
                continue
            results = [b for b in content or [] if isinstance(b, dict)
                       and b.get("type") == "tool_result"]  # fmt: skip
            for block in results:
                use_id = str(block.get("tool_use_id"))
                name, given = tools.get(use_id, (None, None))
                response = entry.get("toolUseResult", block.get("content"))
                yield number, {**base, "hook_event_name": "PostToolUse", "tool_name": name,
                               "tool_input": given, "tool_response": response,
                               "tool_use_id": use_id}  # fmt: skip
            texts = [str(b["text"]) for b in content or [] if isinstance(b, dict)
                     and b.get("type") == "text" and isinstance(b.get("text"), str)]  # fmt: skip
            if texts and not results:
                yield number, {**base, "hook_event_name": "UserPromptSubmit",
                               "prompt": "\n".join(texts)}  # fmt: skip


def _codex(entries: Sequence[tuple[int, dict[str, Any]]]) -> Iterator[tuple[int, dict[str, Any]]]:
    session, cwd, model = None, None, None
    calls: dict[str, tuple[str | None, Any]] = {}  # call_id -> (tool_name, tool_input)
    for number, entry in entries:
        kind, payload = entry.get("type"), entry.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            session, cwd = payload.get("id"), payload.get("cwd") or cwd
            continue
        if kind == "turn_context":
            cwd, model = payload.get("cwd") or cwd, payload.get("model") or model
            continue
        base = {"session_id": session, "cwd": cwd, "model": model, "permission_mode": "default",
                "transcript_path": None}  # fmt: skip
        item = payload.get("type")
        if kind == "event_msg" and item == "user_message":
            yield number, {**base, "hook_event_name": "UserPromptSubmit",
                           "prompt": payload.get("message")}  # fmt: skip
        elif kind == "response_item" and item in ("function_call", "custom_tool_call"):
            call_id = str(payload.get("call_id"))
            name, given = _codex_tool(payload)
            calls[call_id] = (name, given)
            yield number, {**base, "hook_event_name": "PreToolUse", "tool_name": name,
                           "tool_input": given, "tool_use_id": call_id}  # fmt: skip
        elif kind == "response_item" and item in ("function_call_output",
                                                   "custom_tool_call_output"):  # fmt: skip
            call_id = str(payload.get("call_id"))
            done, asked = calls.get(call_id, (None, None))
            yield number, {**base, "hook_event_name": "PostToolUse", "tool_name": done,
                           "tool_input": asked, "tool_response": payload.get("output"),
                           "tool_use_id": call_id}  # fmt: skip


Entries = Sequence[tuple[int, dict[str, Any]]]
# How each format of `Dialect.transcript_format` reads back into events.
READERS: dict[str, Callable[[Entries], Iterator[tuple[int, dict[str, Any]]]]] = {
    "claude": _claude,  # Claude Code's and Qoder's session jsonl
    "codex": _codex,  # Codex's rollout jsonl
}


def _codex_tool(payload: Mapping[str, Any]) -> tuple[str, Any]:
    name = str(payload.get("name"))
    if payload.get("type") == "custom_tool_call":
        return name, {"command": payload.get("input")}
    try:
        arguments = json.loads(payload.get("arguments") or "{}")
    except (TypeError, ValueError, RecursionError):
        arguments = {"arguments": payload.get("arguments")}
    if name in SHELL_TOOLS and isinstance(arguments, dict):
        command = arguments.get("command", arguments.get("cmd"))
        if isinstance(command, list):  # argv form (`["bash", "-lc", "..."]`): its script
            command = command[-1] if command[:2] in (["bash", "-lc"], ["sh", "-c"]) else " ".join(
                str(c) for c in command)  # fmt: skip
        return "Bash", {"command": command}
    return name, arguments


def _pair(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old.startswith("/") or not new.startswith("/"):
        raise ConfigError(f"--workspace-map {text!r}: OLD=NEW, both absolute paths")
    return old.rstrip("/") or "/", new.rstrip("/") or "/"


def _mapped(value: Any, pairs: Sequence[tuple[str, str]]) -> Any:
    """`value` with each recorded folder replaced wherever it stands as a whole path part
    (a `file_path`, a `cd /old/proj && ...` in a command; never `/old/project`)."""
    if isinstance(value, str):
        for old, new in pairs:
            value = re.sub(re.escape(old) + r"(?=/|\s|$|['\"])", new.replace("\\", r"\\"), value)
        return value
    if isinstance(value, dict):
        return {k: _mapped(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [_mapped(v, pairs) for v in value]
    return value
