"""Codex's strict reading of a hook's stdout, as data: what its serde and its output
parser reject (Codex then ignores the answer and the hook counts as failed), and what a
repository's command may hand it (`Schema.untrusted`). See the package docstring."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..base import dropped_note, json_line, lines
from ..claude.dialect import workspace_json

# -- the output schema, as data ------------------------------------------------------
# From codex-rs/hooks/schema/generated/<event>.command.output.schema.json (pre-tool-use
# @3be4afd3 with schema.rs @2219e3df for its legacy decision/reason; post-tool-use
# @0ea83813; permission-request @2219e3df; session-start @658d027e; user-prompt-submit,
# subagent-start, subagent-stop, stop, pre-compact, post-compact @6fff509b). SessionEnd
# and Interrupt have no generated schema: read with the universal fields only (unconfirmed).
# A value checker answers whether Codex's serde would accept the value.
Check = Callable[[Any], bool]


def _opt(check: Check) -> Check:
    return lambda v: v is None or check(v)  # serde: Option<T> with a default takes null


def _enum(*values: str) -> Check:
    return _opt(lambda v: v in values)


STR: Check = _opt(lambda v: isinstance(v, str))
BOOL: Check = lambda v: isinstance(v, bool)  # noqa: E731 (serde bool: null is an error)
ANY: Check = lambda v: True  # noqa: E731 (serde_json::Value)
ARRAY: Check = _opt(lambda v: isinstance(v, list))
STR_MAP: Check = lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values())  # noqa: E731
UNIVERSAL: dict[str, Check] = {
    "continue": BOOL,
    "stopReason": STR,
    "suppressOutput": BOOL,
    "systemMessage": STR,
}
# PermissionRequest's hookSpecificOutput.decision (PermissionRequestDecisionWire).
VERDICT: dict[str, Check] = {
    "behavior": lambda v: v in ("allow", "deny"),  # required
    "updatedInput": ANY,
    "updatedPermissions": ARRAY,
    "addDirectories": ARRAY,
    "message": STR,
    "interrupt": BOOL,
}
_BLOCK = {"decision": _enum("block"), "reason": STR}
# event -> (top-level fields beside the universal ones, hookSpecificOutput's fields
# beside hookEventName, or None where the event has no hookSpecificOutput).
OUTPUT_SCHEMA: dict[str, tuple[dict[str, Check], dict[str, Check] | None]] = {
    "PreToolUse": (
        {"decision": _enum("approve", "block"), "reason": STR},
        {
            "permissionDecision": _enum("allow", "deny", "ask"),
            "permissionDecisionReason": STR,
            "updatedInput": ANY,
            "additionalContext": STR,
        },
    ),
    "PermissionRequest": ({}, {"decision": _opt(lambda v: _object_ok(v, VERDICT, ("behavior",)))}),
    "PostToolUse": (
        _BLOCK,
        {"additionalContext": STR, "updatedMCPToolOutput": ANY, "updatedToolOutput": ANY},
    ),
    "SessionStart": ({}, {"additionalContext": STR, "env": STR_MAP}),
    "UserPromptSubmit": (_BLOCK, {"additionalContext": STR}),
    "SubagentStart": ({}, {"additionalContext": STR}),
    "SubagentStop": (_BLOCK, None),
    "Stop": (_BLOCK, None),
    "PreCompact": ({}, None),
    "PostCompact": ({}, None),
    "SessionEnd": ({}, None),
    "Interrupt": ({}, None),
}
MAX_DEPTH = 128  # serde_json's recursion limit: deeper JSON does not parse in Codex
# What Rust's str::trim removes (Unicode White_Space): not U+FEFF, unlike JavaScript.
RUST_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" \
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # fmt: skip


def _object_ok(value: Any, fields: Mapping[str, Check], required: Sequence[str] = ()) -> bool:
    return (
        isinstance(value, dict)
        and all(k in fields and fields[k](v) for k, v in value.items())
        and all(k in value for k in required)
    )


def schema_problem(event: str, data: Mapping[str, Any]) -> str | None:
    """Why Codex's serde rejects this JSON answer for `event` (it then ignores the hook's
    answer), or None when it deserialises."""
    top, specific = OUTPUT_SCHEMA.get(event, ({}, None))
    for key, value in data.items():
        if key == "hookSpecificOutput" and specific is not None:
            if value is None:
                continue
            if not isinstance(value, dict):
                return "hookSpecificOutput must be an object"
            if value.get("hookEventName") != event:
                return f"hookSpecificOutput.hookEventName must be {event!r}"
            for k, v in value.items():
                if k != "hookEventName" and (k not in specific or not specific[k](v)):
                    why = "unknown field" if k not in specific else "invalid value of"
                    return f"{why} hookSpecificOutput.{k}"[:120]
            continue
        check = UNIVERSAL.get(key) or top.get(key)
        if check is None:
            return f"unknown field {key}"[:120]
        if not check(value):
            return f"invalid value of {key}"
    return None


def semantic_problem(event: str, data: Mapping[str, Any]) -> str | None:
    """What Codex's `output_parser.rs` rejects in an answer that deserialised."""
    specific = data.get("hookSpecificOutput") or {}
    if event in ("PreToolUse", "PermissionRequest"):
        if data.get("continue") is False:
            return f"{event}: continue:false is unsupported"
        if data.get("stopReason") is not None or data.get("suppressOutput") is True:
            return f"{event}: stopReason and suppressOutput are unsupported"
    if event == "PreToolUse":
        return _pre_tool_use_problem(data, specific)
    if event == "PermissionRequest":
        verdict = specific.get("decision") or {}
        if any(verdict.get(k) is not None for k in ("updatedInput", "updatedPermissions")):
            return "PermissionRequest: updatedInput and updatedPermissions are unsupported"
        if verdict.get("interrupt") is True:
            return "PermissionRequest: interrupt:true is unsupported"
    if data.get("decision") == "block" and not _text(data.get("reason")):
        return f"{event}: decision:block without a non-empty reason"
    if event == "PostToolUse" and data.get("decision") is None and data.get("reason") is not None \
            and data.get("continue") is not False:  # fmt: skip
        return "PostToolUse: reason without decision"
    return None


def _pre_tool_use_problem(data: Mapping[str, Any], specific: Mapping[str, Any]) -> str | None:
    decision = specific.get("permissionDecision")
    reason = specific.get("permissionDecisionReason")
    updated = specific.get("updatedInput")
    if decision is not None or reason is not None or updated is not None:
        if updated is not None and decision != "allow":
            return "PreToolUse: updatedInput without permissionDecision:allow"
        if decision == "allow" and updated is None:
            return "PreToolUse: permissionDecision:allow is unsupported without updatedInput"
        if decision == "ask":
            return "PreToolUse: permissionDecision:ask is unsupported"
        if decision == "deny" and not _text(reason):
            return "PreToolUse: permissionDecision:deny without a non-empty reason"
        if decision is None and reason is not None:
            return "PreToolUse: permissionDecisionReason without permissionDecision"
        return None
    if data.get("decision") == "approve":
        return "PreToolUse: decision:approve is unsupported"
    if data.get("decision") is None and data.get("reason") is not None:
        return "PreToolUse: reason without decision"
    return None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip(RUST_SPACE))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # serde_json rejects NaN and Infinity


def parse_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """(the JSON object Codex reads from this stdout, whether it tried to read one).
    Codex trims (Rust's whitespace), and reads JSON only when that starts with `{`."""
    trimmed = text.strip(RUST_SPACE)
    if not trimmed.startswith(("{", "[")):  # `looks_like_json`: plain text
        return None, False
    try:
        data = json.loads(trimmed, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None, True
    if not isinstance(data, dict) or _depth(data) > MAX_DEPTH:
        return None, True
    return data, True


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack += [(v, level + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, level + 1) for v in item]
    return deepest


# Events whose `continue: false` Codex rejects (output_parser.rs): a block there instead.
NO_STOP = frozenset({"PreToolUse", "PermissionRequest"})


class Schema:
    """Codex's strict reading of a hook's stdout (`ClaudeDialect.strict`)."""

    def ignored(self, event: str, stdout: str) -> str | None:
        data, tried = parse_object(stdout)
        if not tried:
            return None  # plain text: read as the Claude family reads it
        if data is None:
            return "is not a JSON object Codex can read: ignored by Codex"
        problem = schema_problem(event, data) or semantic_problem(event, data)
        return f"ignored by Codex: {problem}" if problem else None

    def takes_stop(self, event: str) -> bool:
        """Whether Codex takes `continue: false` on `event` (output_parser.rs rejects it
        on PreToolUse and PermissionRequest: `run --answer agent` blocks there instead)."""
        return event not in NO_STOP

    def agent_answer(
        self, event: str, document: dict[str, Any], notes: list[str]
    ) -> tuple[bytes, bytes, int]:
        """The Claude family's exit-0 answer (`run --answer agent`) as Codex's parser
        takes it: a PreToolUse `allow` without `updatedInput` and an `ask` are dropped
        (Codex would ignore the whole answer: its own approval flow decides, as it does
        then), so is a PermissionRequest verdict with `updatedInput` (an allow of a
        rewritten call is no allow of the original one). Anything still invalid is
        dropped whole. Never an allow made of a deny: a block is exit 2 before this."""
        document = json.loads(json.dumps(document))  # a copy to change
        specific = document.get("hookSpecificOutput") or {}
        dropped = []
        decision = specific.get("permissionDecision")
        if (
            event == "PreToolUse"
            and decision in ("allow", "ask")
            and specific.get("updatedInput") is None
        ):
            specific.pop("permissionDecision")
            specific.pop("permissionDecisionReason", None)
            dropped.append(f"permissionDecision {decision} (Codex takes an allow only with"
                           " updatedInput, and no ask)")  # fmt: skip
        verdict = specific.get("decision")
        if event == "PermissionRequest" and isinstance(verdict, dict) and "updatedInput" in verdict:
            specific.pop("decision")
            dropped.append("the allow of a rewritten request (Codex takes no updatedInput there)")
        if specific and len(specific) == 1:
            document.pop("hookSpecificOutput")
        problem = schema_problem(event, document) or semantic_problem(event, document)
        if problem:  # nothing of ours should get here: what Codex would ignore, it never sees
            dropped.append(f"the whole answer ({problem})")
            document = {}
        notes = [*notes, *(f"sandboxrun: {event}: dropped {d}" for d in dropped)]
        return json_line(document) if document else b"", lines(notes), 0

    def untrusted(self, stdout: bytes, stdin: bytes) -> tuple[bytes, str | None]:
        """The Claude family's rule (`workspace_json`: approvals, input and output
        rewrites, `env`, every field not listed as harmless, dropped), made safe for a
        strict schema: an answer Codex would ignore anyway is dropped whole (stripping
        its unknown field would make Codex read what it ignored), and so is one whose
        stripped form would not validate or whose event is unknown."""
        text = stdout.decode("utf-8", "replace")
        data, tried = parse_object(text)
        if not tried:
            return stdout, None
        event = _event_of(stdin)
        if data is None or event is None:
            if data is not None and not workspace_json(data)[1]:
                return stdout, None  # nothing to drop: unchanged, whatever the event
            why = "is not a JSON object Codex can read" if data is None else \
                "answers an event sandboxrun cannot name"  # fmt: skip
            return b"", f"stdout {why}: dropped (untrusted command)"
        problem = schema_problem(event, data) or semantic_problem(event, data)
        if problem:
            return b"", f"stdout dropped: Codex would ignore it ({problem}) (untrusted command)"
        kept, dropped = workspace_json(data)
        if not dropped:
            return stdout, None
        if schema_problem(event, kept) or semantic_problem(event, kept):
            return b"", f"stdout dropped: {dropped_note(dropped)}"
        return json.dumps(kept, ensure_ascii=True).encode() + b"\n", dropped_note(dropped)


def _event_of(stdin: bytes) -> str | None:
    """The `hook_event_name` of the event a command read, if Codex knows it."""
    try:
        event = json.loads(stdin)
    except (ValueError, RecursionError):
        return None
    name = event.get("hook_event_name") if isinstance(event, dict) else None
    return name if name in OUTPUT_SCHEMA else None
