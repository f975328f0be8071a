"""The Claude family's `run --answer agent` (`ClaudeDialect.agent_answer`): the combined
answer as one of the agent's own hooks would give it.

A block is exit 2 with the reason on stderr (every event that can block reads it so:
the tool is denied, the prompt erased, stopping prevented); `continue: false` is
`{"continue": false, "stopReason": ...}`; anything else is exit 0 with the documented
JSON (`hookSpecificOutput` with `hookEventName`, and `systemMessage`), or nothing when
there is nothing to say. An agent with a strict schema (Codex: `StrictOutput`) gets
that exit-0 JSON made valid for it, and a `continue: false` it rejects made a block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..base import AgentReply, block_on_stderr, json_line, lines

# Events whose hookSpecificOutput may carry additionalContext (reference/claude-hooks.md).
CONTEXT_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart",
     "SubagentStart", "Setup"}
)  # fmt: skip
DEFAULT_BLOCK = "blocked by a hook run in sandboxrun's sandbox"


class StrictAnswer(Protocol):
    """What an agent with a closed output schema (Codex) changes of the answer."""

    def takes_stop(self, event: str) -> bool:
        """Whether a `continue: false` answer is valid on `event` (else a block)."""

    def agent_answer(self, event: str, document: dict[str, Any], notes: list[str]) -> AgentReply:
        """The family's exit-0 `document` (no block) made valid under this schema, never
        a deny made an allow; `notes` for stderr."""


def agent_answer(
    event: str, answer: Mapping[str, Any], notes: Sequence[str], strict: StrictAnswer | None
) -> AgentReply:
    """The module's rule for one combined answer."""
    notes = list(notes)
    stop = answer.get("continue") is False
    if stop and strict is not None and not strict.takes_stop(event):
        return block_on_stderr(answer.get("stopReason") or DEFAULT_BLOCK, notes)
    if stop:
        document = {"continue": False, "stopReason": answer.get("stopReason", "")}
        if answer.get("systemMessage"):
            document["systemMessage"] = answer["systemMessage"]
        return json_line(document), lines(notes), 0
    if answer.get("blocked"):
        return block_on_stderr(answer.get("reason") or DEFAULT_BLOCK, notes)
    document, dropped = exit0_document(event, answer)
    if dropped:
        notes.append(f"sandboxrun: {event} takes no additionalContext; dropped: {dropped[:200]}")
    if strict is not None:
        return strict.agent_answer(event, document, notes)
    return json_line(document) if document else b"", lines(notes), 0


def exit0_document(event: str, answer: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The exit-0 JSON of a combined answer that does not block, and any context the
    event cannot carry."""
    specific: dict[str, Any] = {"hookEventName": event}
    decision = answer.get("permissionDecision")
    if event == "PreToolUse" and decision in ("allow", "ask"):
        specific["permissionDecision"] = decision
        specific["permissionDecisionReason"] = answer.get("reason", "")
    if event == "PreToolUse" and answer.get("updatedInput") is not None:
        specific["updatedInput"] = answer["updatedInput"]
    if event == "PermissionRequest" and decision == "allow":
        verdict: dict[str, Any] = {"behavior": "allow"}
        if answer.get("updatedInput") is not None:
            verdict["updatedInput"] = answer["updatedInput"]
        specific["decision"] = verdict
    context = answer.get("additionalContext") or ""
    dropped = ""
    if context and event in CONTEXT_EVENTS:
        specific["additionalContext"] = context
    elif context:
        dropped = context
    document: dict[str, Any] = {}
    if answer.get("systemMessage"):
        document["systemMessage"] = answer["systemMessage"]
    if len(specific) > 1:
        document["hookSpecificOutput"] = specific
    return document, dropped
