"""Copilot CLI's event names (two spellings) and its matchers.

Source: github/docs `content/copilot/reference/hooks-reference.md` (commit 05da5bc3):
"Hook events", "Hook event input payloads", "Matcher filtering", "Claude-format matchers".

An event configured in camelCase (`preToolUse`) gets the camelCase payload (`sessionId`,
`timestamp` in ms, `toolName`, `toolArgs`); the PascalCase spelling (`PreToolUse`: the
"VS Code compatible" one, as Claude plugins write it) gets snake_case (`session_id`,
an ISO `timestamp`, `tool_name`, `tool_input`) with Claude's tool names. `run EVENT`
runs the hooks configured under that exact spelling, each fed its own payload.

Matchers: a regex anchored as `^(?:PATTERN)$` on the event's field; an invalid one
skips the entry. PascalCase `PreToolUse`/`PermissionRequest` use Claude's rules instead:
`*`, `**` or `""` match every tool, a `|` list of names matches a token equal to the tool
name or to a runtime name whose Claude name it is, anything else is the anchored regex.
Patterns are bounded as every dialect's are (`.._dialects.patterns`): a repository's
that cannot be evaluated (too long or large, invalid, too slow) is its hook's `error`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..._types import HookSpec
from ..base import from_repository, named_event
from ..claude import matchers as _claude
from ..patterns import invalid, search

CAMEL = (
    "sessionStart", "sessionEnd", "userPromptSubmitted", "userPromptTransformed",
    "preToolUse", "postToolUse", "postToolUseFailure", "permissionRequest", "agentStop",
    "subagentStart", "subagentStop", "errorOccurred", "preCompact", "notification",
)  # fmt: skip
# PascalCase spelling -> the camelCase event it is (agentStop is `Stop`).
PASCAL = {
    "SessionStart": "sessionStart", "SessionEnd": "sessionEnd",
    "UserPromptSubmit": "userPromptSubmitted", "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse", "PostToolUseFailure": "postToolUseFailure",
    "PermissionRequest": "permissionRequest", "Stop": "agentStop",
    "SubagentStart": "subagentStart", "SubagentStop": "subagentStop",
    "ErrorOccurred": "errorOccurred", "PreCompact": "preCompact",
    "Notification": "notification",
}  # fmt: skip
HOOK_NAMES = (*CAMEL, *PASCAL)
# The field a matcher is tested against ("Matcher filtering"); other events ignore it.
MATCH_FIELDS = {
    "preToolUse": "toolName", "postToolUse": "toolName", "permissionRequest": "toolName",
    "notification": "notification_type", "preCompact": "trigger", "subagentStart": "agentName",
    "PreToolUse": "tool_name", "PostToolUse": "tool_name", "PermissionRequest": "tool_name",
    "Notification": "notification_type", "PreCompact": "trigger",
    "SubagentStart": "agent_name",
}  # fmt: skip
CLAUDE_FORMAT = frozenset({"PreToolUse", "PermissionRequest"})
# Runtime tool -> Claude tool name ("Claude-format matchers" table).
CLAUDE_NAMES = {
    "bash": "Bash", "powershell": "Bash", "view": "Read", "create": "Write", "edit": "Edit",
    "str_replace_editor": "Edit", "apply_patch": "Edit", "grep": "Grep", "rg": "Grep",
    "glob": "Glob", "web_fetch": "WebFetch", "web_search": "WebSearch",
    "ask_user": "AskUserQuestion", "update_todo": "TodoWrite", "task": "Agent",
}  # fmt: skip


def from_copilot(stdin: bytes) -> bool:
    """Whether a hook's stdin is Copilot's event: its camelCase payload (`sessionId`,
    `toolName`) or its VS Code compatible one, which carries a `timestamp` (an ISO
    string) that Claude Code's events never have (hooks-reference.md, "Hook event input
    payloads"; Claude Code's hooks reference lists no such field)."""
    try:
        event = json.loads(stdin) if stdin.strip() else None
    except (ValueError, RecursionError):
        return False
    return isinstance(event, dict) and any(k in event for k in ("sessionId", "toolName",
                                                                "timestamp"))  # fmt: skip


def derived(event: Mapping[str, Any]) -> str | None:
    """The event a payload is, for `CopilotDialect.event_name`: a PascalCase (VS Code
    compatible) payload names itself in `hook_event_name`; a camelCase one names no
    event, so it is read from its fields ("Hook event input payloads"): `toolResult`
    is postToolUse's, `toolName` with `toolArgs` and no result preToolUse's (a
    permissionRequest payload carrying the same two reads so too). None: nothing says
    (a wrapper that `install` gives the name records it instead)."""
    name = named_event(event)
    if name is not None:
        return name
    if "toolName" in event and "toolResult" in event:
        return "postToolUse"
    if "toolName" in event and "toolArgs" in event:
        return "preToolUse"
    return None


def camel(event: str) -> str:
    """The camelCase event a spelling names."""
    return PASCAL.get(event, event)


def _anchored(matcher: str) -> str:
    return f"^(?:{matcher})$"


def check_matcher(event: str, matcher: str, source: str) -> str | None:
    """Why a user's entry's matcher makes the agent skip it (an invalid regex), or None.
    A workspace pattern is judged where it is used (`patterns.search`): never dropped."""
    if (event in CLAUDE_FORMAT and _claude_all(matcher)) or from_repository(source):
        return None
    error = invalid(_anchored(matcher))
    if error:
        return f"invalid regular expression {matcher!r}: {error}; the entry is skipped"
    return None


def _claude_all(matcher: str) -> bool:
    return matcher in ("", "*", "**")


def matches(spec: HookSpec, event: Mapping[str, Any]) -> bool:
    field = MATCH_FIELDS.get(spec.hook_name)
    matcher = spec.matcher
    if field is None or matcher is None:
        return True
    value = event.get(field)
    text = value if isinstance(value, str) else ""
    if spec.hook_name in CLAUDE_FORMAT:
        if _claude_all(matcher):
            return True
        if _claude.SIMPLE_MATCHER.fullmatch(matcher):
            names = {text, *(r for r, c in CLAUDE_NAMES.items() if c == text)}
            names |= {"Task"} if text == "Agent" else set()  # "the literal Task is also accepted"
            return any(t in names for t in matcher.split("|"))
    # None: a user's invalid one, skipped at discovery; a repository's raises PatternError
    return bool(search(_anchored(matcher), text, spec))
