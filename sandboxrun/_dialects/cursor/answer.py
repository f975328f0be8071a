"""Cursor's answers: the events and what each honours, one hook's stdout read as
Cursor reads it, and what a repository's hook may not say (see `dialect.py`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..base import clean_answer, filter_json_stdout
from ..claude.handler import brief

HOOK_NAMES = (
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
    "beforeTabFileRead",
    "afterTabFileEdit",
)
# Events whose `permission` Cursor honours (and which exit 2 or a failClosed failure deny).
PERMISSION_EVENTS = frozenset(
    {
        "preToolUse",
        "subagentStart",
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
        "beforeTabFileRead",
    }
)
ASK_EVENTS = frozenset({"beforeShellExecution", "beforeMCPExecution"})  # others: allow|deny
FOLLOWUP_EVENTS = frozenset({"stop", "subagentStop"})
CONTEXT_EVENTS = frozenset({"sessionStart", "postToolUse"})
# The field a matcher is searched in. Tool events match the tool type (Shell, Read,
# MCP:x...), shell events the full command, subagent events the subagent type. For the
# other events the docs name a fixed value: the matcher is not applied (unconfirmed).
MATCH_FIELDS = {
    "preToolUse": "tool_name",
    "postToolUse": "tool_name",
    "postToolUseFailure": "tool_name",
    "beforeShellExecution": "command",
    "afterShellExecution": "command",
    "beforeMCPExecution": "tool_name",
    "afterMCPExecution": "tool_name",
    "subagentStart": "subagent_type",
    "subagentStop": "subagent_type",
}
STRICTNESS = {"allow": 1, "ask": 2, "deny": 3}
DEFAULT_LOOP_LIMIT = 5
# What an untrusted hook's JSON may carry; anything else is dropped and named.
_HARMLESS = frozenset(
    {
        "permission",
        "user_message",
        "agent_message",
        "userMessage",
        "agentMessage",
        "continue",
        "followup_message",
        "additional_context",
    }
)


def answer_of(**fields: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "blocked": False,
        "permission": None,
        "user_message": "",
        "agent_message": "",
        "continue": True,
        "followup_message": "",
        "additional_context": "",
        "env": {},
        "updated_input": None,
    }
    answer.update(fields)
    return answer


class _Rejected(ValueError):
    """The hook's JSON breaks the schema: a failed hook, no decision."""


def workspace_json(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An untrusted hook's JSON without what it may not decide, and what was dropped."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in data.items():
        if key == "permission" and value == "allow":
            dropped.insert(0, "its allow")
        elif key in _HARMLESS:
            kept[key] = value
        elif value is not None:
            dropped.append(key)
    return kept, dropped


def dropped_note(dropped: Sequence[str]) -> str:
    names = [n[:40] for n in dropped[:8]]
    if len(dropped) > 8:
        names.append(f"{len(dropped) - 8} more")
    return (
        f"workspace hook: {', '.join(names)} ignored (untrusted; "
        "trust_workspace_decisions = true in the user's config honours it)"
    )


def parse_answer(
    event: str, stdout: bytes, trusted: bool = True
) -> tuple[dict[str, Any] | None, str | None]:
    """Exit-0 stdout -> (answer, note or None), or (None, why it failed). Empty stdout
    is no decision; anything that is not one JSON object is a failed hook
    (failClosed blocks on it)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return answer_of(), None
    try:
        data: Any = clean_answer(json.loads(text))
    except (ValueError, RecursionError):
        return None, f"{event} hook printed no JSON object: {text[:80]!r}"
    if not isinstance(data, dict):
        return None, f"{event} hook printed JSON that is not an object"
    dropped: list[str] = []
    if not trusted:
        data, dropped = workspace_json(data)
    note = dropped_note(dropped) if dropped else None
    try:
        return _structured(event, data), note
    except _Rejected as exc:
        return None, f"{event} hook answer rejected: {exc}"


def _str(data: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise _Rejected(f"{key} must be a string")
            return value
    return ""


def _structured(event: str, data: Mapping[str, Any]) -> dict[str, Any]:
    answer = answer_of(
        user_message=_str(data, "user_message", "userMessage"),
        agent_message=_str(data, "agent_message", "agentMessage"),
    )
    permission = data.get("permission")
    if permission is not None:
        allowed = ("allow", "deny", "ask") if event in ASK_EVENTS else ("allow", "deny")
        if permission not in STRICTNESS:
            listed = ", ".join(allowed)
            raise _Rejected(f"permission must be one of {listed}, not {brief(permission)}")
        if event in PERMISSION_EVENTS:
            # "ask" where the docs list only allow|deny: read as ask (stricter than allow,
            # unconfirmed what Cursor does).
            answer["permission"] = permission
            answer["blocked"] = permission == "deny"
    proceed = data.get("continue")
    if proceed is not None:
        if not isinstance(proceed, bool):
            raise _Rejected("continue must be true or false")
        if event == "beforeSubmitPrompt":
            answer["continue"] = proceed
            answer["blocked"] = answer["blocked"] or not proceed
    if event in FOLLOWUP_EVENTS:
        answer["followup_message"] = _str(data, "followup_message")
    if event in CONTEXT_EVENTS:
        answer["additional_context"] = _str(data, "additional_context")
    if event == "sessionStart" and data.get("env") is not None:
        env = data["env"]
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise _Rejected("env must be an object of strings")
        answer["env"] = dict(env)
    if event == "preToolUse" and data.get("updated_input") is not None:
        if not isinstance(data["updated_input"], dict):
            raise _Rejected("updated_input must be an object")
        answer["updated_input"] = data["updated_input"]
    return answer


def untrusted_stdout(stdout: bytes) -> tuple[bytes, str | None]:
    """A repository command's stdout as Cursor may see it (`exec --untrusted`): its
    JSON without an allow, input rewrites or env (`workspace_json`), the rest as it
    was (`filter_json_stdout`)."""

    def rule(data: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
        kept, dropped = workspace_json(data)
        return kept, dropped, dropped_note(dropped)

    return filter_json_stdout(stdout, rule)


def agent_document(event: str, answer: Mapping[str, Any]) -> dict[str, Any]:
    """The combined answer as one Cursor hook's stdout JSON (`run --answer agent`): the
    fields `event` honours, a block as `permission: "deny"` (or `continue: false` on
    beforeSubmitPrompt), empty ones left out."""
    blocked = bool(answer.get("blocked"))
    document: dict[str, Any] = {}
    if event in PERMISSION_EVENTS and (answer.get("permission") or blocked):
        document["permission"] = "deny" if blocked else answer["permission"]
    if event == "beforeSubmitPrompt" and (blocked or answer.get("continue") is False):
        document["continue"] = False
    fields = ["user_message", "agent_message"]
    fields += ["followup_message"] if event in FOLLOWUP_EVENTS else []
    fields += ["additional_context"] if event in CONTEXT_EVENTS else []
    fields += ["env"] if event == "sessionStart" else []
    document |= {k: answer[k] for k in fields if answer.get(k)}
    if event == "preToolUse" and not blocked and answer.get("updated_input") is not None:
        document["updated_input"] = answer["updated_input"]
    return document


def join(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)
